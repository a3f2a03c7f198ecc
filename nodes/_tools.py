"""The four tools: checking a policy's calls, running them on a Corpus, and turning their
results into observations (DESIGN "Tools").

A turn's calls run in two halves. `run_call` does the store I/O and may run concurrently
with the turn's other calls; `observe` then walks the results in the order of the calls
and writes the observations, so that de-duplication within the turn (two parallel
searches never show the same chunk) and the token caps are decided in a defined order.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from sift import llm as text
from sift.errors import SiftError
from sift.nodes._context import Block, Episode
from sift.types import Chunk, FoundBy, ToolCall, ToolCallTrace

if TYPE_CHECKING:
    from sift.protocols import Corpus, Reranker, TokenCounter

__all__ = ["PlannedCall", "ToolOutcome", "observe", "plan_calls", "resolve_prune", "run_call"]

IO_TOOLS = text.IO_TOOLS
_ARGUMENT = text.ARGUMENT_OF
# Room left for the usage marker, the over-budget message and each call's framing.
_RESERVE_PER_CALL = 48
_RESERVE_PER_TURN = 160

Failure = Literal["invalid", "budget"]


@dataclass
class PlannedCall:
    """A policy's call, checked: either runnable (with its token cap) or an error."""

    index: int
    call: ToolCall
    argument: str = ""
    error: str | None = None
    failure: Failure | None = None
    cap: int = 0
    fetch: int = 0
    prune_ids: list[str] = field(default_factory=list)

    @property
    def runs_io(self) -> bool:
        return self.error is None and self.call.name in IO_TOOLS


@dataclass
class ToolOutcome:
    """What a tool returned, before it is rendered."""

    index: int
    chunks: list[Chunk] = field(default_factory=list)
    note: str | None = None
    error: str | None = None
    doc_id: str | None = None
    unknown: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- checking


def _check_arguments(call: ToolCall) -> tuple[str, list[str], str | None]:
    """(argument for provenance, prune ids, problem) of a call to a known tool."""
    key = _ARGUMENT[call.name]
    value: Any = call.arguments.get(key)
    if call.name == "prune_chunks":
        if isinstance(value, str) and value.strip():
            value = [value]
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v.strip() for v in value)
        ):
            return "", [], f"'{key}' must be a non-empty list of chunk id strings"
        ids = [v.strip() for v in value]
        return ", ".join(ids), ids, None
    if not isinstance(value, str) or not value.strip():
        return "", [], f"'{key}' must be a non-empty string"
    return value.strip(), [], None


def plan_calls(episode: Episode, calls: list[ToolCall], counter: TokenCounter) -> list[PlannedCall]:
    """Checks each call and gives the runnable ones their share of the remaining budget.

    Past the rejection level only prune_chunks runs. Each search/grep/read gets
    `min(call_token_cap, remaining budget / number of such calls)`, so a turn's results can
    never push the context past the budget; a share below `min_call_tokens` is refused.
    """
    limits = episode.limits
    planned: list[PlannedCall] = []
    for index, call in enumerate(calls):
        item = PlannedCall(index=index, call=call)
        planned.append(item)
        if call.name == text.MULTI_TOOL:
            # A batch the policy could not read, sent beside readable calls.
            item.error, item.failure = f"Error: {text.invalid_batch(call.arguments)}", "invalid"
            continue
        if call.name not in _ARGUMENT:
            item.error, item.failure = text.unknown_tool(call.name), "invalid"
            continue
        item.argument, item.prune_ids, problem = _check_arguments(call)
        if problem is not None:
            item.error = text.invalid_call(call.name, problem, call.arguments)
            item.failure = "invalid"
        elif call.name in IO_TOOLS and episode.tokens_used >= limits.rejection_tokens:
            item.error = text.rejected(call.name, episode.tokens_used, limits.rejection_tokens)
            item.failure = "budget"
    io_calls = [p for p in planned if p.runs_io]
    if io_calls:
        left = (
            limits.budget_tokens
            - episode.tokens_used
            - _RESERVE_PER_TURN
            - _RESERVE_PER_CALL * len(planned)
        )
        share = min(limits.call_token_cap, max(0, left) // len(io_calls))
        searches = sum(1 for p in io_calls if p.call.name == "search_corpus")
        for item in io_calls:
            if share < limits.min_call_tokens:
                item.error = text.budget_too_tight(item.call.name, max(0, left))
                item.failure = "budget"
                continue
            item.cap = share
            if item.call.name == "search_corpus":
                # Parallel searches may want the same chunks; each fetches enough that it
                # can still fill its quota after the earlier calls of the turn took theirs.
                item.fetch = limits.search_max_chunks * searches
            elif item.call.name == "grep_corpus":
                item.fetch = limits.grep_max_hits
    return planned


# ----------------------------------------------------------------------------- running


def _failure(index: int, tool: str, exc: BaseException) -> ToolOutcome:
    if isinstance(exc, SiftError):
        return ToolOutcome(index, error=f"Error: {exc}")
    return ToolOutcome(index, error=f"Error: {tool} failed: {type(exc).__name__}: {exc}")


def _read(corpus: Corpus, doc_id: str) -> tuple[str, list[Chunk]]:
    chunks = corpus.read(doc_id)
    if not chunks and "_" in doc_id:
        # Models often pass a chunk id (`<doc_id>_<index>`) where a document id is due.
        head, _, tail = doc_id.rpartition("_")
        if tail.isdigit():
            chunks = corpus.read(head)
            if chunks:
                return head, chunks
    return doc_id, chunks


async def run_call(
    planned: PlannedCall, episode: Episode, corpus: Corpus, timeout: float | None = None
) -> ToolOutcome:
    """Runs one search/grep/read in a worker thread; never raises."""
    name, index = planned.call.name, planned.index
    try:
        if name == "search_corpus":
            # alpha only when set, so a Corpus written before the per-call weight still works.
            weight = episode.limits.search_alpha
            extra = {} if weight is None else {"alpha": weight}
            work = asyncio.to_thread(
                corpus.search,
                planned.argument,
                k=planned.fetch,
                mode=episode.limits.search_mode,
                filters=episode.filters,
                exclude=frozenset(episode.searched),
                **extra,
            )
            hits = await asyncio.wait_for(work, timeout)
            return ToolOutcome(index, chunks=[h.chunk for h in hits])
        if name == "grep_corpus":
            work = asyncio.to_thread(
                corpus.grep, planned.argument, k=planned.fetch, filters=episode.filters
            )
            found = await asyncio.wait_for(work, timeout)
            return ToolOutcome(index, chunks=[h.chunk for h in found.hits], note=found.note)
        doc_id, chunks = await asyncio.wait_for(
            asyncio.to_thread(_read, corpus, planned.argument), timeout
        )
        return ToolOutcome(index, chunks=chunks, doc_id=doc_id)
    except TimeoutError:
        return ToolOutcome(index, error=f"Error: {name} did not finish before the deadline.")
    except Exception as exc:  # a store failure is an observation, never a crashed episode
        return _failure(index, name, exc)


def resolve_prune(planned: PlannedCall, episode: Episode) -> ToolOutcome:
    """Maps prune ids to live chunk ids; a document id stands for its chunks."""
    known: list[Chunk] = []
    unknown: list[str] = []
    by_doc: dict[str, list[str]] | None = None
    for wanted in planned.prune_ids:
        if wanted in episode.seen:
            known.append(episode.seen[wanted].chunk)
            continue
        if by_doc is None:
            by_doc = {}
            for chunk_id, seen in episode.seen.items():
                by_doc.setdefault(seen.chunk.doc_id, []).append(chunk_id)
        if wanted in by_doc:
            known += [episode.seen[c].chunk for c in by_doc[wanted]]
        else:
            unknown.append(wanted)
    return ToolOutcome(planned.index, chunks=known, unknown=unknown)


# ----------------------------------------------------------------------------- observing


@dataclass
class Observation:
    """One call's rendered result, ready to become (part of) a tool message."""

    planned: PlannedCall
    segments: list[str | Block]
    trace: ToolCallTrace
    added: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)


def _blocks_within(
    episode: Episode,
    chunks: list[Chunk],
    *,
    limit: int,
    cap: int,
    counter: TokenCounter,
    skip: set[str] | None = None,
) -> list[tuple[Chunk, Block]]:
    chosen: list[tuple[Chunk, Block]] = []
    spent = 0
    for chunk in chunks:
        if len(chosen) >= limit:
            break
        if skip is not None and chunk.chunk_id in skip:
            continue
        item = episode.make_block(chunk, counter)
        # A chunk too large for what is left is skipped; a smaller one may still fit.
        if spent + item.tokens > cap:
            continue
        chosen.append((chunk, item))
        spent += item.tokens
    return chosen


def _read_selection(
    episode: Episode,
    doc_id: str,
    chunks: list[Chunk],
    cap: int,
    counter: TokenCounter,
    reranker: Reranker,
) -> tuple[list[tuple[Chunk, Block]], str | None]:
    pairs = [(c, episode.make_block(c, counter)) for c in chunks]
    if sum(b.tokens for _, b in pairs) <= cap:
        return pairs, None
    query = episode.first_query.get(doc_id, episode.question)
    scores = reranker.rerank(query, chunks)
    order = sorted(range(len(pairs)), key=lambda i: (-scores[i], i))
    keep: set[int] = set()
    spent = 0
    for i in order:
        if spent + pairs[i][1].tokens <= cap:
            keep.add(i)
            spent += pairs[i][1].tokens
    chosen = [pairs[i] for i in sorted(keep)]
    return chosen, text.read_note(doc_id, len(chosen), len(chunks), query)


def observe(
    episode: Episode,
    planned: list[PlannedCall],
    outcomes: dict[int, ToolOutcome],
    counter: TokenCounter,
    reranker: Reranker,
) -> list[Observation]:
    """Renders the turn's results in call order and records what they surfaced."""
    limits = episode.limits
    turn = episode.turn
    taken: set[str] = set()
    result: list[Observation] = []
    for item in planned:
        call = item.call
        trace = ToolCallTrace(tool=call.name, arguments=dict(call.arguments))
        obs = Observation(item, [], trace)
        result.append(obs)
        outcome = outcomes.get(item.index)
        error = item.error or (outcome.error if outcome else None)
        if error is None and outcome is None:
            error = f"Error: {call.name} produced no result."
        if error is not None:
            obs.segments = [error]
            trace.error = error
            continue
        assert outcome is not None
        found = FoundBy(tool=call.name, argument=item.argument, turn=turn)
        if call.name == "prune_chunks":
            for chunk in outcome.chunks:
                if episode.prune(chunk.chunk_id):
                    obs.pruned.append(chunk.chunk_id)
            obs.segments = [text.PRUNED]
            if outcome.unknown:
                obs.segments.append(text.unknown_prune_ids(outcome.unknown))
            trace.pruned = list(obs.pruned)
            continue
        note: str | None = outcome.note
        if call.name == "search_corpus":
            skip = taken | episode.searched
            pairs = _blocks_within(
                episode,
                outcome.chunks,
                limit=limits.search_max_chunks,
                cap=item.cap,
                counter=counter,
                skip=skip,
            )
            taken.update(c.chunk_id for c, _ in pairs)
            episode.searched.update(c.chunk_id for c, _ in pairs)
        elif call.name == "grep_corpus":
            pairs = _blocks_within(
                episode, outcome.chunks, limit=limits.grep_max_hits, cap=item.cap, counter=counter
            )
        else:
            if not outcome.chunks:
                error = f"Error: no document with id '{item.argument}'."
                obs.segments, trace.error = [error], error
                continue
            pairs, note = _read_selection(
                episode,
                outcome.doc_id or item.argument,
                outcome.chunks,
                item.cap,
                counter,
                reranker,
            )
        for rank, (chunk, shown) in enumerate(pairs):
            tokens = episode.chunk_tokens(chunk, counter)
            if episode.surface(chunk, tokens, found, rank):
                obs.added.append(chunk.chunk_id)
            obs.segments.append(shown)
        if not pairs:
            obs.segments.append(text.NO_RESULTS)
        if note:
            if call.name == "read_document":
                obs.segments.insert(0, note)
            else:
                obs.segments.append(note)
        trace.added = list(obs.added)
    return result
