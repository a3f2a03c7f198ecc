"""The data that crosses sift's boundaries: documents, chunks, tool calls, results.

Everything here is a pydantic model so that the CLI's `--json`, the HTTP API and the
LangGraph state all speak the same, validated shapes (DESIGN "The episode: contract").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "NOT_FOUND",
    "Chunk",
    "ConstrainedFinal",
    "CorpusStats",
    "Decision",
    "Document",
    "DocumentFailure",
    "Evidence",
    "FinalDocument",
    "FoundBy",
    "GrepResult",
    "Hit",
    "Message",
    "PolicyView",
    "SearchMode",
    "SearchResult",
    "SeenChunk",
    "StopReason",
    "ToolCall",
    "ToolCallTrace",
    "TurnTrace",
    "UpsertReport",
    "Usage",
    "make_chunk_id",
    "pruned_by_policy",
    "split_chunk_id",
]

SearchMode = Literal["hybrid", "bm25", "dense"]
# How a constrained final answer is written (HarnessConfig.constrained_final).
ConstrainedFinal = Literal["grades", "list"]
StopReason = Literal["final", "max_turns", "budget", "error", "deadline"]
# The flag of a result whose evidence does not match the question's key terms; a name
# the question types that occurs nowhere is flagged `not_found:<name>`.
NOT_FOUND = "not_found"

MetadataValue = str | int | float | bool | None | list[str | int | float | bool]

MAX_DOC_ID_CHARS = 512


def make_chunk_id(doc_id: str, index: int) -> str:
    """The id of a document's chunk number `index` (from 0): `<doc_id>_<index>`."""
    return f"{doc_id}_{index}"


def split_chunk_id(chunk_id: str) -> tuple[str, int] | None:
    """(document id, index) of a chunk id, or None when `chunk_id` is not one. Only an
    ASCII-digit suffix counts, so a document id holding an underscore (`a_b`) is no chunk
    id, and `a_²` is none either (int() refuses what isdigit() accepts there)."""
    head, sep, tail = chunk_id.rpartition("_")
    if sep and head and tail.isascii() and tail.isdigit():
        return head, int(tail)
    return None


# --------------------------------------------------------------------------- corpus


class Document(BaseModel):
    """A document to ingest. `id` is the caller's stable identifier."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1, max_length=MAX_DOC_ID_CHARS)
    title: str = ""
    text: str
    metadata: dict[str, MetadataValue] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id_is_printable(cls, value: str) -> str:
        if value != value.strip() or any(c in value for c in "\n\r\t\x00"):
            raise ValueError("document id must not contain control characters or edge spaces")
        return value

    @field_validator("metadata")
    @classmethod
    def _reserved_keys(cls, value: dict[str, MetadataValue]) -> dict[str, MetadataValue]:
        clash = {"doc_id", "title", "chunk_id", "chunk_index"} & set(value)
        if clash:
            raise ValueError(f"metadata keys {sorted(clash)} are reserved by sift")
        # NaN and Infinity are no JSON numbers: stored, they made `sift ls --json` and
        # the API's answers print what no standard JSON parser reads.
        for key, item in value.items():
            items = item if isinstance(item, list) else [item]
            if any(isinstance(x, float) and not math.isfinite(x) for x in items):
                raise ValueError(
                    f"metadata {key!r} is not a finite number ({item!r}); NaN and Infinity "
                    "cannot be stored (JSON has no such numbers)"
                )
        return value


class Chunk(BaseModel):
    """A stored piece of a document. `chunk_id` is `<doc_id>_<index>`."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    doc_id: str
    index: int
    title: str = ""
    text: str
    start: int = 0
    end: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)


class Hit(BaseModel):
    """A chunk returned by a search, with the store's score (higher is better)."""

    model_config = ConfigDict(frozen=True)

    chunk: Chunk
    score: float


class GrepResult(BaseModel):
    """Hits of a regex over the chunks, and a note when the scan was bounded."""

    hits: list[Hit] = Field(default_factory=list)
    note: str | None = None


class DocumentFailure(BaseModel):
    doc_id: str
    error: str


class UpsertReport(BaseModel):
    """What an upsert did. A document listed in `failed` is not stored, wholly."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks_written: int = 0
    failed: list[DocumentFailure] = Field(default_factory=list)


class CorpusStats(BaseModel):
    documents: int
    chunks: int
    embedder: str
    dim: int
    backend: str
    location: str
    schema_version: int = 1
    extra: dict[str, Any] = Field(default_factory=dict)


# --------------------------------------------------------------------------- policy


class ToolCall(BaseModel):
    """One call a policy asks for. `arguments` is what the model sent, already parsed."""

    id: str = ""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    # Calls expanded from one `multi_tool_use` share a batch id; the harness answers the
    # whole batch with one combined tool message, as Context-1 was trained.
    batch_id: str | None = None


class Message(BaseModel):
    """A chat message of the rendered context, in Ollama's native shape."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    thinking: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_name: str | None = None


class FinalDocument(BaseModel):
    """One entry of a policy's final answer: a chunk id (or a doc id) and why."""

    id: str
    justification: str = ""
    # Optional policy-side relevance; the harness falls back to rank-based scores.
    score: float | None = None
    # The entity through which a graph walk reached this chunk (the planner's entity
    # graph weighed it in the list's order); the evidence's `found_by` then names it.
    via_entity: str | None = None
    # Why this chunk goes above the first of one plain search of the question, which the
    # harness otherwise keeps first (HarnessConfig.plain_first): e.g. it writes a name
    # the question types. The reason is part of the evidence's justification.
    lead_reason: str | None = None


class Decision(BaseModel):
    """What a policy decided at one step: tool calls, or the final list, or both empty.

    Empty tool calls and no final list means "conclude with what is gathered".
    """

    tool_calls: list[ToolCall] = Field(default_factory=list)
    final: list[FinalDocument] | None = None
    content: str = ""
    thinking: str | None = None
    # Exact counts when the model server reports them (Ollama prompt_eval_count/eval_count).
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # The final ids were recovered from the thinking text, not the answer.
    final_from_thinking: bool = False
    # A policy-level failure (unparseable reply, ...); repeated ones end the episode.
    error: str | None = None
    # The server stopped the reply at its token limit (finish_reason / done_reason
    # "length"): never a final answer; the harness tells the model after its calls run.
    cut_off: bool = False
    # How many of `tool_calls` the model wrote in its text rather than as structured calls.
    calls_from_text: int = 0
    # A search the episode already ran is answered as such, not run again (which pages
    # deeper into the same query): set by constrained decisions (issue 45), whose small
    # models otherwise search the question over and over.
    answer_repeats: bool = False
    # The policy judged one plain search of the question right for it (a question of one
    # place): the harness lists that search's chunks first, after the policy's leads
    # (`FinalDocument.lead_reason`), and the policy's other picks after them.
    keep_plain_order: bool = False
    # What the policy says of the result as a whole, passed on in `SearchResult.flags`
    # (the planner's `not_found` when nothing surfaced matches the question's key terms).
    flags: list[str] = Field(default_factory=list)


class FoundBy(BaseModel):
    """How a chunk came into the evidence: a tool call (tool, its argument, the turn), or
    `entity_graph` with the entity through which the graph walk that ordered the final
    list reached it."""

    tool: str
    argument: str
    turn: int


class SeenChunk(BaseModel):
    """A chunk the episode has surfaced, as the policy may reason about it."""

    chunk: Chunk
    tokens: int
    found_by: list[FoundBy]
    pruned: bool = False
    # Rank of the chunk in the call that first surfaced it (0 is best).
    first_rank: int = 0


class PolicyView(BaseModel):
    """Everything a policy may look at before deciding its next step."""

    question: str
    turn: int
    max_turns: int
    messages: list[Message]
    seen: dict[str, SeenChunk] = Field(default_factory=dict)
    tokens_used: int = 0
    threshold: int
    rejection: int
    budget: int
    top_k: int = 30
    # The result sizes of search_corpus and grep_corpus (HarnessConfig's), which the tool
    # declarations tell the model.
    search_max_chunks: int = 10
    grep_max_hits: int = 5
    constrained_final: ConstrainedFinal = "grades"
    # The chunk ids of the episode's first search of the question as written, in that
    # search's order (some may have been shown by another call of the same turn).
    question_hits: list[str] = Field(default_factory=list)
    # Each search_corpus query's chunk ids in that search's order (its first run; some
    # were shown by an earlier call and not again).
    search_hits: dict[str, list[str]] = Field(default_factory=dict)


# --------------------------------------------------------------------------- results


class Evidence(BaseModel):
    doc_id: str
    chunk_id: str
    title: str
    text: str
    score: float
    justification: str = ""
    found_by: list[FoundBy] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class ToolCallTrace(BaseModel):
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    # Chunks the call showed for the first time in the episode.
    added: list[str] = Field(default_factory=list)
    pruned: list[str] = Field(default_factory=list)
    # Chunks pruned earlier that the call showed again: back in the context.
    resurfaced: list[str] = Field(default_factory=list)
    error: str | None = None
    tokens: int = 0


class TurnTrace(BaseModel):
    turn: int
    calls: list[ToolCallTrace] = Field(default_factory=list)
    tokens_after: int = 0
    wall_ms: float = 0.0
    note: str | None = None


def pruned_by_policy(trace: Iterable[TurnTrace]) -> set[str]:
    """The chunks a policy pruned that no later call showed again, read in call order (a
    chunk pruned, then fetched back by the policy's own grep or read, is in its context
    again); the harness's own prunes (`by: harness`) are not the policy's."""
    out: set[str] = set()
    for turn in trace:
        for call in turn.calls:
            out.difference_update(call.resurfaced)
            if call.tool == "prune_chunks" and call.arguments.get("by") != "harness":
                out.update(call.pruned)
    return out


class Usage(BaseModel):
    turns: int = 0
    tool_calls: int = 0
    calls_per_turn: float = 0.0
    peak_context_tokens: int = 0
    final_evidence_tokens: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class SearchResult(BaseModel):
    """The outcome of one episode (DESIGN "The episode: contract")."""

    question: str
    mode: Literal["agentic", "single_shot"] = "agentic"
    evidence: list[Evidence] = Field(default_factory=list)
    trace: list[TurnTrace] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    stopped_because: StopReason = "final"
    error: str | None = None
    flags: list[str] = Field(default_factory=list)

    @property
    def not_found(self) -> list[str] | None:
        """None when the evidence matches the question; else what was not found: the
        names the question types that occur nowhere (`not_found:<name>` flags), or an
        empty list when nothing surfaced holds enough of the question's words (the
        evidence is then only the nearest text)."""
        missing = [f.split(":", 1)[1] for f in self.flags if f.startswith("not_found:")]
        if missing or NOT_FOUND in self.flags:
            return missing
        return None
