"""The graph's state schemas: input, output, the state between them, and the payload of
a tool call's `Send`.

Every value a checkpointer saves is plain data (builtins), so a saved episode loads back
with no type registration and no warning: the episode goes through `EpisodeChannel`
(saved as `Episode.to_data()`), a tool call's payload and outcome are dicts. The output
keys hold sift's pydantic result types (`Evidence`, `Usage`, ...), the public shape.
TypedDicts come from typing_extensions so that pydantic can build JSON schemas of them on
every supported Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, NotRequired, Required, Self

from langgraph.channels import LastValue
from typing_extensions import TypedDict

from sift.nodes._episode import Episode
from sift.types import Evidence, SearchResult, StopReason, TurnTrace, Usage

__all__ = [
    "EpisodeChannel",
    "EpisodeInput",
    "EpisodeOutput",
    "EpisodeState",
    "ToolOutcome",
    "ToolTask",
    "merge_outcomes",
]


class EpisodeInput(TypedDict, total=False):
    """What a caller (or a parent graph) gives the sift graph."""

    question: Required[str]
    # Metadata filter in the short form of `sift.Filter.of` (or a Filter).
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


class ToolTask(TypedDict):
    """The payload a tool node receives through `Send`: everything the call needs, as
    builtins (the episode itself stays with the sequential nodes)."""

    index: int
    tool: str
    argument: str
    fetch: int
    # search_corpus: the store's search mode and hybrid weight, the ids to exclude.
    mode: NotRequired[str]
    alpha: NotRequired[float | None]
    exclude: NotRequired[list[str]]
    # search_corpus and grep_corpus: the filter, as `Filter.model_dump()`.
    filters: NotRequired[dict[str, Any] | None]
    # prune_chunks: the ids asked for, and every surfaced chunk id with its document.
    prune_ids: NotRequired[list[str]]
    surfaced: NotRequired[dict[str, str]]
    deadline: float | None


class ToolOutcome(TypedDict, total=False):
    """What a tool returned, before it is rendered (chunks as `Chunk.model_dump()`)."""

    index: Required[int]
    chunks: list[dict[str, Any]]
    note: str | None
    error: str | None
    doc_id: str | None
    # prune_chunks: the surfaced chunk ids the call names, and the ids it does not know.
    pruned: list[str]
    unknown: list[str]


def merge_outcomes(
    current: dict[int, ToolOutcome] | None, update: dict[int, ToolOutcome] | None
) -> dict[int, ToolOutcome]:
    """Joins the concurrent tool nodes' results keyed by call index; None clears."""
    if update is None:
        return {}
    merged = dict(current or {})
    merged.update(update)
    return dict(sorted(merged.items()))


class EpisodeChannel(LastValue[Episode]):
    """The episode's channel: the live `Episode` between nodes, plain data in a checkpoint.

    Nodes hand the same object on from step to step (no copy per step); a checkpointer
    gets `Episode.to_data()`, JSON-ready builtins, and `from_checkpoint` rebuilds it.
    """

    def __init__(self, typ: Any = Episode, key: str = "") -> None:
        super().__init__(typ, key)

    def checkpoint(self) -> Any:
        value = super().checkpoint()
        return value.to_data() if isinstance(value, Episode) else value

    def from_checkpoint(self, checkpoint: Any) -> Self:
        if isinstance(checkpoint, dict):
            checkpoint = Episode.from_data(checkpoint)
        return super().from_checkpoint(checkpoint)

    def update(self, values: Sequence[Episode]) -> bool:
        restored = [Episode.from_data(v) if isinstance(v, dict) else v for v in values]
        return super().update(restored)


class EpisodeState(EpisodeInput, EpisodeOutput, total=False):
    episode: Annotated[Episode, EpisodeChannel()]
    outcomes: Annotated[dict[int, ToolOutcome], merge_outcomes]
