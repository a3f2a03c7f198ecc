"""The episode's memory: the full, unpruned trajectory and the context rendered from it.

The transcript keeps every message ever produced. A chunk shown by a tool is a `Block`
inside its message; pruning marks blocks dead, which removes them from the rendered
context (and from its token count) but never from the trajectory. Token counts are kept
incrementally: each block and message is counted once, when it is created, so a turn
costs work in proportion to what it adds, not to the size of the context.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

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
    from sift.config import HarnessConfig as Limits
    from sift.filters import Filter
    from sift.protocols import TokenCounter

__all__ = ["Block", "Entry", "Episode"]

Role = Literal["system", "user", "assistant", "tool"]
_EMPTY_AFTER_PRUNING = "(every chunk of this result was pruned)"


@dataclass(eq=False)
class Block:
    """One chunk as shown in one tool message."""

    chunk_id: str
    text: str
    tokens: int
    entry: int
    live: bool = True


@dataclass(eq=False)
class Entry:
    role: Role
    segments: list[str | Block]
    base_tokens: int
    thinking: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_name: str | None = None
    rendered: Message | None = None
    # A superseded harness message (an old over-budget notice) stays in the trajectory
    # but is no longer rendered.
    hidden: bool = False

    def render(self) -> Message:
        if self.rendered is None:
            parts = [
                s if isinstance(s, str) else s.text
                for s in self.segments
                if isinstance(s, str) or s.live
            ]
            content = "\n\n".join(parts)
            if not content and any(isinstance(s, Block) for s in self.segments):
                content = _EMPTY_AFTER_PRUNING
            self.rendered = Message(
                role=self.role,
                content=content,
                thinking=self.thinking,
                tool_calls=self.tool_calls,
                tool_name=self.tool_name,
            )
        return self.rendered


@dataclass(eq=False)
class Episode:
    """Everything one episode knows. Mutated only by the sequential graph steps."""

    question: str
    limits: Limits
    filters: Filter | None = None
    top_k: int = 30
    max_turns: int = 10
    deadline: float | None = None  # time.monotonic() value
    entries: list[Entry] = field(default_factory=list)
    seen: dict[str, SeenChunk] = field(default_factory=dict)
    blocks: dict[str, list[Block]] = field(default_factory=dict)
    # Every chunk id any search returned: later searches exclude them, pruned or not.
    searched: set[str] = field(default_factory=set)
    # The query that first surfaced each document (read_document ranks by it).
    first_query: dict[str, str] = field(default_factory=dict)
    estimated_tokens: int = 0
    # Exact count minus estimate, from the last model-reported prompt size.
    correction: int = 0
    turn: int = 0
    failed_turns: int = 0
    trace: list[TurnTrace] = field(default_factory=list)
    tool_calls: int = 0
    tool_turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    peak_tokens: int = 0
    final: list[FinalDocument] | None = None
    stopped: StopReason | None = None
    error: str | None = None
    flags: list[str] = field(default_factory=list)
    turn_clock: float = 0.0
    over_budget_entry: Entry | None = None
    # Token count of each chunk text the episode has rendered (chunk id -> tokens).
    token_cache: dict[str, int] = field(default_factory=dict)

    # ------------------------------------------------------------------ tokens

    @property
    def tokens_used(self) -> int:
        return max(0, self.estimated_tokens + self.correction)

    def note_peak(self) -> None:
        self.peak_tokens = max(self.peak_tokens, self.tokens_used)

    def deadline_passed(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def time_left(self) -> float | None:
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    # ------------------------------------------------------------------ transcript

    def add_entry(
        self,
        role: Role,
        segments: list[str | Block],
        counter: TokenCounter,
        *,
        thinking: str | None = None,
        tool_calls: list[ToolCall] | None = None,
        tool_name: str | None = None,
    ) -> Entry:
        # Each segment is joined by a blank line, which costs about a token.
        base = self.limits.message_overhead_tokens + len(segments)
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
        entry = Entry(role, segments, base, thinking, list(tool_calls or []), tool_name)
        index = len(self.entries)
        self.entries.append(entry)
        self.estimated_tokens += base
        for segment in segments:
            if isinstance(segment, Block):
                segment.entry = index
                self.blocks.setdefault(segment.chunk_id, []).append(segment)
                self.estimated_tokens += segment.tokens
        return entry

    def append_text(self, entry: Entry, text: str, counter: TokenCounter) -> None:
        """Adds a trailing text segment (the usage marker) to an existing message."""
        entry.segments.append(text)
        added = counter.count(text) + 1
        entry.base_tokens += added
        self.estimated_tokens += added
        entry.rendered = None

    def make_block(self, chunk: Chunk, counter: TokenCounter) -> Block:
        tokens = self.chunk_tokens(chunk, counter)
        text = block_text(chunk.chunk_id, tokens, chunk.text)
        # Header and text are counted apart (the text's count is cached), plus one for the
        # line break between them: counting is the costliest step of a turn.
        header = len(text) - len(chunk.text)
        return Block(chunk.chunk_id, text, counter.count(text[:header]) + 1 + tokens, entry=-1)

    def chunk_tokens(self, chunk: Chunk, counter: TokenCounter) -> int:
        tokens = self.token_cache.get(chunk.chunk_id)
        if tokens is None:
            tokens = self.token_cache[chunk.chunk_id] = counter.count(chunk.text)
        return tokens

    def surface(self, chunk: Chunk, tokens: int, found_by: FoundBy, rank: int) -> bool:
        """Records that a tool showed `chunk`; True when the episode had not seen it."""
        seen = self.seen.get(chunk.chunk_id)
        self.first_query.setdefault(chunk.doc_id, found_by.argument)
        if seen is None:
            self.seen[chunk.chunk_id] = SeenChunk(
                chunk=chunk, tokens=tokens, found_by=[found_by], first_rank=rank
            )
            return True
        if found_by not in seen.found_by:
            seen.found_by.append(found_by)
        seen.pruned = False
        return False

    def retire(self, entry: Entry) -> None:
        """Stops rendering a message (its text was superseded); it stays in the trajectory."""
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
            self.entries[item.entry].rendered = None
            removed = True
        if chunk_id in self.seen:
            self.seen[chunk_id].pruned = True
        return removed

    def live_chunk_ids(self) -> list[str]:
        return [cid for cid in self.seen if self.live_blocks(cid)]

    # ------------------------------------------------------------------ the policy's view

    def messages(self) -> list[Message]:
        return [entry.render() for entry in self.entries if not entry.hidden]

    def view(self) -> PolicyView:
        limits = self.limits
        return PolicyView.model_construct(
            question=self.question,
            turn=self.turn,
            max_turns=self.max_turns,
            messages=self.messages(),
            seen=self.seen,
            tokens_used=self.tokens_used,
            threshold=limits.threshold_tokens,
            rejection=limits.rejection_tokens,
            budget=limits.budget_tokens,
            top_k=self.top_k,
        )
