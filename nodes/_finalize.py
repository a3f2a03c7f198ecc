"""The finalize node: the episode's SearchResult, its evidence ranked from the policy's
final list, or by the fallback ranking when the episode ended without one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langgraph.runtime import Runtime

from sift.config import HarnessConfig
from sift.nodes._episode import Episode
from sift.nodes._services import Services
from sift.nodes._state import EpisodeOutput, EpisodeState
from sift.progress import Finished
from sift.types import (
    Evidence,
    FinalDocument,
    FoundBy,
    SearchResult,
    SeenChunk,
    Usage,
    pruned_by_policy,
)

if TYPE_CHECKING:
    from sift.protocols import Reranker

__all__ = ["fallback_ranking", "finalize", "search_result"]

# The `found_by` tool name of a chunk an entity-graph walk placed in the final list.
GRAPH_TOOL = "entity_graph"


def _describe(seen: SeenChunk) -> str:
    first = seen.found_by[0]
    return (
        f"Surfaced by {first.tool}('{first.argument}') in turn {first.turn} "
        f"(rank {seen.first_rank + 1}); not in a final list from the policy."
    )


def fallback_ranking(episode: Episode, reranker: Reranker) -> list[str]:
    """Surfaced chunks ranked without a policy's list.

    Two orders are fused by reciprocal rank: the order in which the episode surfaced the
    chunks (turn, then call, then the tool's own rank) and the reranker's relevance to the
    question. Only the chunks still in the context count (the outcome is never worse than
    what the context holds); when the budget pruned every one, those it pruned, never
    the ones the policy pruned.
    """
    candidates = episode.live_chunk_ids()
    if not candidates:
        # Nothing is left in the context: the budget pruned it all. What the harness
        # pruned still beats nothing; what the model pruned it judged worthless, unless
        # a later call of its own showed the chunk again (it took it back).
        by_model = pruned_by_policy(episode.trace)
        candidates = [c for c in episode.seen if c not in by_model]
    if not candidates:
        return []
    scores = reranker.rerank(episode.question, [episode.seen[c].chunk for c in candidates])
    by_relevance = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    k = episode.config.fallback_rrf_k
    fused = [1.0 / (k + 1 + i) for i in range(len(candidates))]
    for rank, i in enumerate(by_relevance):
        fused[i] += 1.0 / (k + 1 + rank)
    order = sorted(range(len(candidates)), key=lambda i: (-fused[i], i))
    return [candidates[i] for i in order]


def _expand_final(episode: Episode, final: list[FinalDocument]) -> list[tuple[str, FinalDocument]]:
    by_doc: dict[str, list[str]] = {}
    for chunk_id, seen in episode.seen.items():
        by_doc.setdefault(seen.chunk.doc_id, []).append(chunk_id)
    picked: list[tuple[str, FinalDocument]] = []
    unknown: list[str] = []
    pruned: list[str] = []
    for item in final:
        wanted = item.id.strip()
        if wanted in episode.seen:
            if episode.seen[wanted].pruned:
                # The model pruned it (or the budget did): a list naming it is not taken
                # as is.
                pruned.append(wanted)
                continue
            picked.append((wanted, item))
        elif wanted in by_doc:
            # A document id stands for its surfaced chunks, unpruned first, in doc order.
            ids = sorted(by_doc[wanted], key=lambda c: episode.seen[c].chunk.index)
            live = [c for c in ids if not episode.seen[c].pruned]
            if not live:
                pruned.append(wanted)
            picked += [(c, item) for c in live]
        else:
            unknown.append(wanted)
    if unknown:
        episode.flags.append(f"final_ids_not_surfaced:{','.join(unknown[:20])}")
    if pruned:
        episode.flags.append(f"final_ids_pruned:{','.join(pruned[:20])}")
    return picked


def _score(given: float | None, before: list[Evidence], *, filler: bool) -> float:
    """The policy's score, else 1 / rank; a chunk filling the list never outscores the
    policy's last pick."""
    score = given if given is not None else 1.0 / (1 + len(before))
    return min(score, before[-1].score) if filler and before else score


def search_result(episode: Episode, reranker: Reranker) -> SearchResult:
    """The SearchResult of an episode that has stopped."""
    ranked: list[tuple[str, str, float | None, str | None]] = []
    if episode.final is not None and episode.stopped == "final":
        for chunk_id, item in _expand_final(episode, episode.final):
            ranked.append((chunk_id, item.justification, item.score, item.via_entity))
    filling: set[str] = set()
    named = {c for c, *_ in ranked}
    if not ranked:
        ranked = [
            (c, _describe(episode.seen[c]), None, None) for c in fallback_ranking(episode, reranker)
        ]
    elif episode.config.fill_final_list and len(named) < episode.top_k:
        # The policy's list first, then what it kept in its context without naming it:
        # every chunk named is live (_expand_final takes no pruned one), so the fallback
        # ranking here is over the live context and never brings back a pruned chunk.
        rest = [c for c in fallback_ranking(episode, reranker) if c not in named]
        filling = set(rest)
        ranked += [(c, _describe(episode.seen[c]), None, None) for c in rest]
    evidence: list[Evidence] = []
    used: set[str] = set()
    for chunk_id, justification, score, via_entity in ranked:
        if chunk_id in used:
            continue
        used.add(chunk_id)
        seen = episode.seen[chunk_id]
        chunk = seen.chunk
        found_by = list(seen.found_by)
        if via_entity:
            # A graph walk found its way to the chunk's place in the list: provenance
            # beside the searches that surfaced it, in the turn of the final list.
            turn = len(episode.trace)
            found_by.append(FoundBy(tool=GRAPH_TOOL, argument=via_entity, turn=turn))
        evidence.append(
            Evidence(
                doc_id=chunk.doc_id,
                chunk_id=chunk.chunk_id,
                title=chunk.title,
                text=chunk.text,
                score=_score(score, evidence, filler=chunk_id in filling),
                justification=justification,
                found_by=found_by,
                metadata=dict(chunk.metadata),
            )
        )
        if len(evidence) >= episode.top_k:
            break
    flags = list(episode.flags)
    filled = sum(e.chunk_id in filling for e in evidence)
    if filled:
        flags.append(f"final_list_filled:{filled}")
    turns = len(episode.trace)
    usage = Usage(
        turns=turns,
        tool_calls=episode.tool_calls,
        calls_per_turn=(
            round(episode.tool_calls / episode.tool_turns, 3) if episode.tool_turns else 0.0
        ),
        peak_context_tokens=episode.peak_tokens,
        final_evidence_tokens=sum(episode.seen[e.chunk_id].tokens for e in evidence),
        prompt_tokens=episode.prompt_tokens,
        completion_tokens=episode.completion_tokens,
    )
    return SearchResult(
        question=episode.question,
        mode="agentic",
        evidence=evidence,
        trace=list(episode.trace),
        usage=usage,
        stopped_because=episode.stopped or "final",
        error=episode.error,
        flags=flags,
    )


def finalize(
    state: EpisodeState, runtime: Runtime[HarnessConfig], *, services: Services
) -> EpisodeOutput:
    """Writes the episode's result into the graph's output keys."""
    result = search_result(state["episode"], services.reranker)
    event = Finished(
        event="sift.finished",
        stopped_because=result.stopped_because,
        turns=result.usage.turns,
        evidence=len(result.evidence),
        error=result.error,
    )
    runtime.stream_writer(event)
    return EpisodeOutput(
        evidence=result.evidence,
        usage=result.usage,
        stopped_because=result.stopped_because,
        error=result.error,
        trace=result.trace,
        result=result,
    )
