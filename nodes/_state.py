"""The graph's state schemas: input, output, the state between them, and the payload of
a tool call's `Send`.

Every value a checkpoint holds is plain data (builtins), so a saved episode loads back
with no type registration and no warning. Between nodes the values stay live, and are
turned into plain data only when LangGraph checkpoints their channel: the episode goes
through `EpisodeChannel` (saved as `Episode.to_data()`), the tool outcomes, whose chunks
are `Chunk`s, through `OutcomesChannel` (chunks saved as `Chunk.model_dump()`). A tool
call's payload is a dict of builtins. The output keys hold sift's pydantic result types
(`Evidence`, `Usage`, ...), the public shape.
TypedDicts come from typing_extensions so that pydantic can build JSON schemas of them on
every supported Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, NotRequired, Required, Self

from langgraph.channels import BinaryOperatorAggregate, LastValue
from typing_extensions import TypedDict

from sift.nodes._episode import Episode
from sift.types import Chunk, Evidence, SearchResult, StopReason, TurnTrace, Usage

__all__ = [
    "EpisodeChannel",
    "EpisodeInput",
    "EpisodeOutput",
    "EpisodeState",
    "OutcomesChannel",
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
    # search_corpus: the entity graph walk's weight in the fusion (0: none) and seeds.
    graph_weight: NotRequired[float]
    graph_seeds: NotRequired[int]
    graph_rrf_k: NotRequired[int]
    # search_corpus and grep_corpus: the filter, as `Filter.model_dump()`.
    filters: NotRequired[dict[str, Any] | None]
    # prune_chunks: the ids asked for, and every surfaced chunk id with its document.
    prune_ids: NotRequired[list[str]]
    surfaced: NotRequired[dict[str, str]]
    deadline: float | None


class ToolOutcome(TypedDict, total=False):
    """What a tool returned, before it is rendered."""

    index: Required[int]
    chunks: list[Chunk]
    note: str | None
    error: str | None
    doc_id: str | None
    # search_corpus fused with the entity graph: the chunks the walk reached beyond the
    # search's seeds, each with the entity it came through.
    via: dict[str, str]
    # prune_chunks: the surfaced chunk ids the call names, and the ids it does not know.
    pruned: list[str]
    unknown: list[str]


def _plain(outcome: ToolOutcome) -> dict[str, Any]:
    if "chunks" not in outcome:
        return dict(outcome)
    return {**outcome, "chunks": [c.model_dump() for c in outcome["chunks"]]}


def _live(outcome: ToolOutcome | dict[str, Any]) -> ToolOutcome:
    """An outcome with `Chunk`s, from a tool node or from plain data (a checkpoint, or a
    pending write a checkpointer stored as JSON)."""
    chunks = outcome.get("chunks")
    if not chunks or all(isinstance(c, Chunk) for c in chunks):
        return outcome  # type: ignore[return-value]
    live = [c if isinstance(c, Chunk) else Chunk.model_validate(c) for c in chunks]
    return {**outcome, "chunks": live}  # type: ignore[typeddict-item]


def merge_outcomes(
    current: dict[int, ToolOutcome] | None, update: dict[int, ToolOutcome] | None
) -> dict[int, ToolOutcome]:
    """Joins the concurrent tool nodes' results keyed by call index; None clears."""
    if update is None:
        return {}
    merged = dict(current or {})
    for index, outcome in update.items():
        merged[index] = _live(outcome)
    return dict(sorted(merged.items()))


class OutcomesChannel(BinaryOperatorAggregate[dict[int, ToolOutcome]]):
    """The turn's tool outcomes: live `Chunk`s between the tool nodes and `budget`,
    plain data in a checkpoint (dumped only when LangGraph saves one)."""

    def __init__(
        self,
        typ: Any = dict[int, ToolOutcome],
        operator: Callable[[Any, Any], Any] = merge_outcomes,
    ) -> None:
        super().__init__(typ, operator)

    def checkpoint(self) -> Any:
        value = super().checkpoint()
        if not isinstance(value, dict):
            return value
        return {index: _plain(outcome) for index, outcome in value.items()}

    def from_checkpoint(self, checkpoint: Any) -> Self:
        if isinstance(checkpoint, dict):
            checkpoint = {index: _live(outcome) for index, outcome in checkpoint.items()}
        return super().from_checkpoint(checkpoint)


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
    outcomes: Annotated[dict[int, ToolOutcome], OutcomesChannel()]
