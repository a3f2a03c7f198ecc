"""The episode's memory: the full, unpruned trajectory and the context rendered from it.

The transcript keeps every message ever produced. A chunk shown by a tool is a `Block`
inside its message; pruning marks blocks dead, which removes them from the rendered
context (and from its token count) but never from the trajectory. Token counts are kept
incrementally: each block and message is counted once, when it is created, so a turn
costs work in proportion to what it adds, not to the size of the context.

An Episode is plain data (a pydantic model of builtins and sift types): a checkpointer
saves it as such (`to_data`) and `from_data` rebuilds it, derived indexes included.
Times are wall-clock epochs, so a resumed episode keeps its deadline in another process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from sift.config import HarnessConfig
from sift.filters import Filter
from sift.llm import block as block_text
from sift.types import (
    Chunk,
    FinalDocument,
    FoundBy,
    Message,
    PolicyView,
    SeenChunk,
    StopReason,
    ToolCall,
    TurnTrace,
)

if TYPE_CHECKING:
    from sift.protocols import TokenCounter

__all__ = ["Block", "Entry", "Episode", "PlannedCall"]

Role = Literal["system", "user", "assistant", "tool"]
Failure = Literal["invalid", "budget"]
_EMPTY_AFTER_PRUNING = "(every chunk of this result was pruned)"


# Block and Entry are stdlib dataclasses (pydantic validates and dumps them inside the
# Episode): a turn creates dozens of them, and a pydantic model costs ten times more to make.
@dataclass(eq=False)
class Block:
    """One chunk as shown in one tool message."""

    chunk_id: str
    text: str
    tokens: int
    entry: int = -1
    live: bool = True


@dataclass(eq=False)
class Entry:
    """One message of the trajectory: text segments and chunk blocks."""

    role: Role
    segments: list[str | Block]
    base_tokens: int
    thinking: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_name: str | None = None
    # A superseded harness message (an old over-budget notice) stays in the trajectory
    # but is no longer rendered.
    hidden: bool = False

    def render(self) -> Message:
        parts = [
            s if isinstance(s, str) else s.text
            for s in self.segments
            if isinstance(s, str) or s.live
        ]
        content = "\n\n".join(parts)
        if not content and any(isinstance(s, Block) for s in self.segments):
            content = _EMPTY_AFTER_PRUNING
        return Message(
            role=self.role,
            content=content,
            thinking=self.thinking,
            tool_calls=self.tool_calls,
            tool_name=self.tool_name,
        )


class PlannedCall(BaseModel):
    """A policy's call, checked: either runnable (with its token cap) or an error."""

    index: int
    call: ToolCall
    argument: str = ""
    error: str | None = None
    failure: Failure | None = None
    cap: int = 0
    fetch: int = 0
    prune_ids: list[str] = Field(default_factory=list)


class Episode(BaseModel):
    """Everything one episode knows. Mutated only by the sequential nodes (start, policy,
    budget, finalize); the tool nodes get what they need in their `Send` payload."""

    question: str
    # The settings of this run (context, configurable and input keys resolved at start).
    config: HarnessConfig = Field(default_factory=HarnessConfig)
    filters: Filter | None = None
    # The run's, unless the input says otherwise (`_start`): never a second default.
    top_k: int = Field(default_factory=lambda data: data["config"].top_k)
    max_turns: int = Field(default_factory=lambda data: data["config"].max_turns)
    deadline: float | None = None  # wall-clock epoch (time.time())
    entries: list[Entry] = Field(default_factory=list)
    seen: dict[str, SeenChunk] = Field(default_factory=dict)
    # Every chunk id any search returned: later searches exclude them, pruned or not.
    searched: set[str] = Field(default_factory=set)
    # The query that first surfaced each document (read_document ranks by it).
    first_query: dict[str, str] = Field(default_factory=dict)
    # The first search of the question as written, in its own order (before the turn's
    # other calls took some of its chunks): what one plain search finds.
    question_hits: list[str] = Field(default_factory=list)
    # Each search query's own ranking (its first run, before other calls' chunks were
    # taken out): how a policy orders what one sub-query found.
    search_hits: dict[str, list[str]] = Field(default_factory=dict)
    # The turn whose search of the question ran as the plain (single-shot) search.
    plain_search_turn: int | None = None
    # The chunks of that plain search, all it returned (top_k of them).
    plain_chunks: list[Chunk] = Field(default_factory=list)
    # The policy's final decision kept the plain search's order (Decision.keep_plain_order).
    keep_plain_order: bool = False
    estimated_tokens: int = 0
    # Exact count minus estimate, from the last model-reported prompt size.
    correction: int = 0
    turn: int = 0
    failed_turns: int = 0
    trace: list[TurnTrace] = Field(default_factory=list)
    tool_calls: int = 0
    tool_turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    peak_tokens: int = 0
    final: list[FinalDocument] | None = None
    stopped: StopReason | None = None
    error: str | None = None
    flags: list[str] = Field(default_factory=list)
    turn_started: float = 0.0  # wall-clock epoch
    # What the harness tells the model after this turn's observations (a reply cut off
    # by the token limit), appended to the last tool message by the budget node.
    notice: str | None = None
    # Index in `entries` of the latest over-budget notice.
    over_budget_entry: int | None = None
    # The calls of the current turn, checked (between policy and budget).
    planned: list[PlannedCall] = Field(default_factory=list)
    # Token count of each chunk text the episode has rendered (chunk id -> tokens).
    token_cache: dict[str, int] = Field(default_factory=dict)
    # Derived from `entries`, never saved: chunk id -> its blocks in the order shown, and
    # the rendered message of each entry (index -> Message) until the entry changes.
    blocks: dict[str, list[Block]] = Field(default_factory=dict, exclude=True)
    rendered: dict[int, Message] = Field(default_factory=dict, exclude=True)
    # chunk id -> document id of every surfaced chunk (derived from `seen`).
    doc_of: dict[str, str] = Field(default_factory=dict, exclude=True)

    # ------------------------------------------------------------------ plain data

    def to_data(self) -> dict[str, Any]:
        """The episode as JSON-ready builtins (what a checkpointer stores)."""
        return self.model_dump(mode="json")

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Episode:
        episode = cls.model_validate(data)
        episode.doc_of = {cid: seen.chunk.doc_id for cid, seen in episode.seen.items()}
        for index, entry in enumerate(episode.entries):
            for segment in entry.segments:
                if isinstance(segment, Block):
                    segment.entry = index
                    episode.blocks.setdefault(segment.chunk_id, []).append(segment)
        return episode

    @property
    def seeding(self) -> bool:
        """Whether this turn is the harness's seed search (`seed_search`, turn 1)."""
        return self.turn == 1 and self.config.seed_search

    # ------------------------------------------------------------------ tokens and time

    @property
    def tokens_used(self) -> int:
        return max(0, self.estimated_tokens + self.correction)

    def note_peak(self) -> None:
        self.peak_tokens = max(self.peak_tokens, self.tokens_used)

    def deadline_passed(self) -> bool:
        return self.deadline is not None and time.time() >= self.deadline

    def time_left(self) -> float | None:
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.time())

    # ------------------------------------------------------------------ stopping

    def note_turn(self, note: str) -> None:
        """Traces a turn that ran no tool calls (the policy concluded, failed or timed out)."""
        self.note_peak()
        self.trace.append(
            TurnTrace(
                turn=self.turn,
                tokens_after=self.tokens_used,
                wall_ms=self.turn_ms(),
                note=note,
            )
        )

    def turn_ms(self) -> float:
        return round(max(0.0, time.time() - self.turn_started) * 1000, 3)

    def stop(self, reason: StopReason, error: str | None = None, note: str | None = None) -> None:
        self.stopped = reason
        self.note_peak()
        if error is not None:
            self.error = error
        if note is not None:
            self.note_turn(note)

    def stop_if_out_of_turns(self) -> None:
        if self.stopped is None and self.turn >= self.max_turns:
            self.stopped = "max_turns"

    # ------------------------------------------------------------------ transcript

    def add_entry(
        self,
        role: Role,
        segments: Sequence[str | Block],
        counter: TokenCounter,
        *,
        thinking: str | None = None,
        tool_calls: list[ToolCall] | None = None,
        tool_name: str | None = None,
    ) -> int:
        """Appends a message; returns its index in `entries`."""
        # Each segment is joined by a blank line, which costs about a token.
        base = self.config.message_overhead_tokens + len(segments)
        base += sum(counter.count(s) for s in segments if isinstance(s, str))
        if thinking:
            base += counter.count(thinking)
        if tool_calls:
            base += counter.count(
                json.dumps(
                    [c.model_dump(include={"name", "arguments"}) for c in tool_calls],
                    ensure_ascii=False,
                    default=str,
                )
            )
        index = len(self.entries)
        entry = Entry(role, list(segments), base, thinking, list(tool_calls or []), tool_name)
        self.entries.append(entry)
        self.estimated_tokens += base
        for segment in segments:
            if isinstance(segment, Block):
                segment.entry = index
                self.blocks.setdefault(segment.chunk_id, []).append(segment)
                if segment.live:  # a later call of its turn may have pruned it already
                    self.estimated_tokens += segment.tokens
        return index

    def append_text(self, index: int, text: str, counter: TokenCounter) -> None:
        """Adds a trailing text segment (the usage marker) to an existing message."""
        entry = self.entries[index]
        entry.segments.append(text)
        added = counter.count(text) + 1
        entry.base_tokens += added
        self.estimated_tokens += added
        self.rendered.pop(index, None)

    def make_block(self, chunk: Chunk, counter: TokenCounter) -> Block:
        tokens = self.chunk_tokens(chunk, counter)
        text = block_text(chunk.chunk_id, tokens, chunk.text)
        # Header and text are counted apart (the text's count is cached), plus one for the
        # line break between them: counting is the costliest step of a turn.
        header = len(text) - len(chunk.text)
        return Block(chunk.chunk_id, text, counter.count(text[:header]) + 1 + tokens)

    def chunk_tokens(self, chunk: Chunk, counter: TokenCounter) -> int:
        tokens = self.token_cache.get(chunk.chunk_id)
        if tokens is None:
            tokens = self.token_cache[chunk.chunk_id] = counter.count(chunk.text)
        return tokens

    def surface(self, chunk: Chunk, tokens: int, found_by: FoundBy, rank: int) -> bool:
        """Records that a tool showed `chunk`; True when the episode had not seen it.

        A SeenChunk is never changed in place but replaced, so a view handed to the
        policy earlier keeps showing what the episode knew then.
        """
        seen = self.seen.get(chunk.chunk_id)
        self.first_query.setdefault(chunk.doc_id, found_by.argument)
        if seen is None:
            self.doc_of[chunk.chunk_id] = chunk.doc_id
            self.seen[chunk.chunk_id] = SeenChunk(
                chunk=chunk, tokens=tokens, found_by=[found_by], first_rank=rank
            )
            return True
        found = seen.found_by if found_by in seen.found_by else [*seen.found_by, found_by]
        if found is not seen.found_by or seen.pruned:
            self.seen[chunk.chunk_id] = seen.model_copy(update={"found_by": found, "pruned": False})
        return False

    def retire(self, index: int) -> None:
        """Stops rendering a message (its text was superseded); it stays in the trajectory."""
        entry = self.entries[index]
        if entry.hidden:
            return
        entry.hidden = True
        self.estimated_tokens -= entry.base_tokens
        self.estimated_tokens -= sum(
            s.tokens for s in entry.segments if isinstance(s, Block) and s.live
        )

    def live_blocks(self, chunk_id: str) -> list[Block]:
        return [b for b in self.blocks.get(chunk_id, ()) if b.live]

    def prune(self, chunk_id: str) -> bool:
        """Removes the chunk's blocks from the rendered context; False if none was live."""
        removed = False
        for item in self.live_blocks(chunk_id):
            item.live = False
            self.estimated_tokens -= item.tokens
            self.rendered.pop(item.entry, None)
            removed = True
        seen = self.seen.get(chunk_id)
        if seen is not None and not seen.pruned:
            self.seen[chunk_id] = seen.model_copy(update={"pruned": True})
        return removed

    def live_chunk_ids(self) -> list[str]:
        return [cid for cid in self.seen if self.live_blocks(cid)]

    # ------------------------------------------------------------------ the policy's view

    def messages(self) -> list[Message]:
        out: list[Message] = []
        for index, entry in enumerate(self.entries):
            if entry.hidden:
                continue
            message = self.rendered.get(index)
            if message is None:
                message = self.rendered[index] = entry.render()
            out.append(message)
        return out

    def view(self) -> PolicyView:
        """What the policy may look at now: a snapshot that later steps do not change."""
        config = self.config
        return PolicyView.model_construct(
            question=self.question,
            turn=self.turn,
            max_turns=self.max_turns,
            messages=self.messages(),
            seen=dict(self.seen),
            tokens_used=self.tokens_used,
            threshold=config.threshold_tokens,
            rejection=config.rejection_tokens,
            budget=config.budget_tokens,
            top_k=self.top_k,
            search_max_chunks=config.search_max_chunks,
            grep_max_hits=config.grep_max_hits,
            constrained_final=config.constrained_final,
            question_hits=list(self.question_hits),
            search_hits={q: list(ids) for q, ids in self.search_hits.items()},
        )
