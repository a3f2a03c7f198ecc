"""Rendering a turn's tool outcomes into the context, in the order of the calls, so that
de-duplication within the turn (two parallel searches never show the same chunk) and the
token caps are decided in a defined order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sift import llm as text
from sift.nodes._episode import Block, Episode, PlannedCall
from sift.nodes._finalize import GRAPH_TOOL
from sift.nodes._state import ToolOutcome
from sift.types import Chunk, FoundBy, ToolCallTrace

if TYPE_CHECKING:
    from sift.protocols import Reranker, TokenCounter

__all__ = ["Observation", "observe", "tool_messages"]


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
    limits = episode.config
    turn = episode.turn
    taken: set[str] = set()
    result: list[Observation] = []
    for item in planned:
        call = item.call
        trace = ToolCallTrace(tool=call.name, arguments=dict(call.arguments))
        obs = Observation(item, [], trace)
        result.append(obs)
        outcome = outcomes.get(item.index)
        error = item.error or (outcome.get("error") if outcome else None)
        if error is None and outcome is None:
            error = f"Error: {call.name} produced no result."
        if error is not None:
            obs.segments = [error]
            trace.error = error
            continue
        assert outcome is not None
        found = FoundBy(tool=call.name, argument=item.argument, turn=turn)
        if call.name == "prune_chunks":
            for chunk_id in outcome.get("pruned", []):
                shown_now = _drop_shown_this_turn(result, chunk_id)
                if episode.prune(chunk_id) or shown_now:
                    obs.pruned.append(chunk_id)
            obs.segments = [text.PRUNED]
            if outcome.get("unknown"):
                obs.segments.append(text.unknown_prune_ids(outcome["unknown"]))
            trace.pruned = list(obs.pruned)
            continue
        note: str | None = outcome.get("note")
        chunks = outcome.get("chunks", [])
        if call.name == "search_corpus":
            episode.search_hits.setdefault(
                item.argument.strip(), [c.chunk_id for c in chunks[: limits.search_max_chunks]]
            )
            if not episode.question_hits and item.argument.strip() == episode.question.strip():
                episode.question_hits = [c.chunk_id for c in chunks[: limits.search_max_chunks]]
                if episode.plain_search_turn == turn:
                    # The plain search's whole list: the evidence keeps and fills from it.
                    episode.plain_chunks = list(chunks)
            skip = taken | episode.searched
            pairs = _blocks_within(
                episode,
                chunks,
                limit=limits.search_max_chunks,
                cap=item.cap,
                counter=counter,
                skip=skip,
            )
            taken.update(c.chunk_id for c, _ in pairs)
            episode.searched.update(c.chunk_id for c, _ in pairs)
        elif call.name == "grep_corpus":
            pairs = _blocks_within(
                episode, chunks, limit=limits.grep_max_hits, cap=item.cap, counter=counter
            )
        else:
            if not chunks:
                error = f"Error: no document with id '{item.argument}'."
                obs.segments, trace.error = [error], error
                continue
            pairs, note = _read_selection(
                episode,
                outcome.get("doc_id") or item.argument,
                chunks,
                item.cap,
                counter,
                reranker,
            )
        via = outcome.get("via") or {}
        for rank, (chunk, shown) in enumerate(pairs):
            tokens = episode.chunk_tokens(chunk, counter)
            before = episode.seen.get(chunk.chunk_id)
            if episode.surface(chunk, tokens, found, rank):
                obs.added.append(chunk.chunk_id)
            elif before is not None and before.pruned:
                # Shown again after a prune: it is back in the context (and may be
                # evidence); the trace says so, or it would read as evidence pruned.
                trace.resurfaced.append(chunk.chunk_id)
            if (entity := via.get(chunk.chunk_id)) is not None:
                # The search's fusion with the entity graph brought it: through which
                # entity, beside the search that showed it.
                graph = FoundBy(tool=GRAPH_TOOL, argument=entity, turn=turn)
                episode.surface(chunk, tokens, graph, rank)
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


def _drop_shown_this_turn(observations: list[Observation], chunk_id: str) -> bool:
    """Marks the blocks of `chunk_id` that earlier calls of this turn showed as pruned
    (they are not in the context yet, so `Episode.prune` cannot reach them): a read or a
    grep followed by a prune of the same chunk in one reply leaves it out of the
    context, its tokens and the evidence, as the calls' order says. True if any."""
    dropped = False
    for obs in observations:
        for segment in obs.segments:
            if isinstance(segment, Block) and segment.chunk_id == chunk_id and segment.live:
                segment.live = False
                dropped = True
    return dropped


def tool_messages(
    episode: Episode, observations: list[Observation], counter: TokenCounter
) -> int | None:
    """Adds the turn's tool messages: one per call, one per `multi_tool_use` batch.
    Returns the index of the last one (None when the turn had no calls)."""
    batches: dict[str, list[Observation]] = {}
    groups: list[list[Observation]] = []
    for obs in observations:
        batch = obs.planned.call.batch_id
        if batch is None:
            groups.append([obs])
        elif batch in batches:
            batches[batch].append(obs)
        else:
            batches[batch] = [obs]
            groups.append(batches[batch])
    last = None
    for group in groups:
        if len(group) == 1 and group[0].planned.call.batch_id is None:
            obs = group[0]
            last = episode.add_entry("tool", obs.segments, counter, tool_name=obs.planned.call.name)
            continue
        segments: list[str | Block] = []
        for position, obs in enumerate(group, start=1):
            segments.append(
                text.call_header(position, obs.planned.call.name, obs.planned.call.arguments)
            )
            segments += obs.segments
        last = episode.add_entry("tool", segments, counter, tool_name=text.MULTI_TOOL)
    return last
