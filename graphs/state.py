"""The graph's state schemas: input, output, and the internal state between them.

The episode itself (`sift.nodes.Episode`: transcript, seen chunks, counters) is one value
of the state, mutated only by the sequential steps; the concurrent tool nodes read it and
write their results to `outcomes`, whose reducer joins them in call order.
"""

from __future__ import annotations

from typing import Annotated, Any, Required, TypedDict

from sift.nodes import Episode, PlannedCall, ToolOutcome
from sift.types import Evidence, SearchResult, StopReason, TurnTrace, Usage

__all__ = ["EpisodeInput", "EpisodeOutput", "EpisodeState", "ToolTask", "merge_outcomes"]


class EpisodeInput(TypedDict, total=False):
    """What a caller (or a parent graph) gives the sift graph."""

    question: Required[str]
    # Metadata filter in the short form of `sift.Filter.of`, or a Filter.
    filters: Any
    top_k: int | None
    max_turns: int | None


class EpisodeOutput(TypedDict, total=False):
    """What the sift graph hands back (to a caller or a parent graph)."""

    evidence: list[Evidence]
    usage: Usage
    stopped_because: StopReason
    error: str | None
    trace: list[TurnTrace]
    result: SearchResult


def merge_outcomes(
    current: dict[int, ToolOutcome] | None, update: dict[int, ToolOutcome] | None
) -> dict[int, ToolOutcome]:
    """Joins the concurrent tool nodes' results keyed by call index; None clears."""
    if update is None:
        return {}
    merged = dict(current or {})
    merged.update(update)
    return dict(sorted(merged.items()))


class EpisodeState(EpisodeInput, EpisodeOutput, total=False):
    episode: Episode
    planned: list[PlannedCall]
    outcomes: Annotated[dict[int, ToolOutcome], merge_outcomes]


class ToolTask(TypedDict):
    """The payload a tool node receives through `Send`."""

    episode: Episode
    planned: PlannedCall
