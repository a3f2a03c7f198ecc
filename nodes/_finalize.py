"""The finalize node: the episode's SearchResult, its evidence ranked from the policy's
final list, or by the fallback ranking when the episode ended without one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langgraph.runtime import Runtime

from sift.config import HarnessConfig
from sift.fusion import rrf_scores
from sift.nodes._episode import Episode
from sift.nodes._services import Services
from sift.nodes._state import EpisodeOutput, EpisodeState
from sift.progress import Finished
from sift.text import estimate_tokens
from sift.types import (
    Chunk,
    Evidence,
    FinalDocument,
    FoundBy,
    SearchResult,
    SeenChunk,
    Usage,
    pruned_by_policy,
)

if TYPE_CHECKING:
    from sift.protocols import Corpus, Reranker

__all__ = ["fallback_ranking", "finalize", "plain_leaders", "search_result"]

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
    in_context = list(range(len(candidates)))
    fused = rrf_scores(((1.0, in_context), (1.0, by_relevance)), episode.config.fallback_rrf_k)
    order = sorted(in_context, key=lambda i: (-fused[i], i))
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


def plain_leaders(episode: Episode, corpus: Corpus) -> tuple[list[Chunk], str | None]:
    """The first chunks of one plain search of the question (as many as `plain_first`
    and `plain_keep` ask for): the episode's own when it ran one (alone in its turn, at
    the store's weight), else a search run now for it; and a flag when that search
    failed (the evidence then stays the policy's)."""
    config = episode.config
    n = episode.top_k if config.plain_fill else max(config.plain_first, config.plain_keep)
    if n <= 0 or not config.keep_plain_search or episode.stopped == "error":
        # An episode that failed says so with what it had; it is not passed off as a
        # search that worked.
        return [], None
    if episode.plain_search_turn is not None and len(episode.plain_chunks) >= n:
        return episode.plain_chunks[:n], None
    try:
        hits = corpus.search(
            episode.question,
            k=episode.top_k,
            mode=episode.config.search_mode,
            filters=episode.filters,
        )
    except Exception as exc:  # the policy's evidence stands; the flag says what failed
        return [], f"plain_search_failed:{type(exc).__name__}"
    return [h.chunk for h in hits[:n]], None


def _lead_with(
    episode: Episode, evidence: list[Evidence], leaders: list[Chunk], leads: set[str]
) -> tuple[list[Evidence], int]:
    """The chunks the policy gave a reason to lead (`leads`), then the plain search's
    first chunks (those the policy pruned stay out: it said why), then the rest in the
    policy's order; and how many of the plain search's the policy had not listed."""
    pruned = pruned_by_policy(episode.trace)
    by_id = {e.chunk_id: e for e in evidence}
    front: list[Evidence] = [e for e in evidence if e.chunk_id in leads]
    leading = len(front)
    added = 0
    for chunk in leaders[: episode.config.plain_first]:
        if chunk.chunk_id in pruned or any(e.chunk_id == chunk.chunk_id for e in front):
            continue
        item = by_id.get(chunk.chunk_id)
        if item is None:
            added += 1
            item = _plain_evidence(episode, chunk)
        rank = len(front) - leading + 1
        position = next((i for i, e in enumerate(evidence) if e.chunk_id == chunk.chunk_id), None)
        if position != len(front):
            # Moved up or added: the justification says who put it there.
            note = (
                f"One plain search of the question ranks it {rank}; the harness keeps it "
                f"there (HarnessConfig.plain_first)."
            )
            text = f"{note} {item.justification}".strip()
            item = item.model_copy(update={"justification": text})
        front.append(item)
    out = evidence
    if len(front) > leading:
        kept = {e.chunk_id for e in front}
        rest = [e for e in evidence if e.chunk_id not in kept]
        top = max([e.score for e in evidence] or [1.0])
        out = [e.model_copy(update={"score": max(e.score, top)}) for e in front] + rest
    if episode.keep_plain_order:
        out, kept_in = _in_plain_order(episode, out, leaders, pruned, by_id, leading)
        return out[: episode.top_k], added + kept_in
    keep, within = episode.config.plain_keep, episode.config.plain_keep_within
    out, kept_in = _keep_within(episode, out, leaders, pruned, by_id, keep, within)
    return out[: episode.top_k], added + kept_in


def _in_plain_order(
    episode: Episode,
    evidence: list[Evidence],
    leaders: list[Chunk],
    pruned: set[str],
    by_id: dict[str, Evidence],
    leading: int,
) -> tuple[list[Evidence], int]:
    """The policy's leads, then the plain search's chunks in its order, then the rest of
    the policy's list: the policy judged that search right for the question
    (`Decision.keep_plain_order`)."""
    front = evidence[:leading]
    taken = {e.chunk_id for e in front}
    ordered: list[Evidence] = []
    added = 0
    for chunk in leaders:
        if chunk.chunk_id in taken or chunk.chunk_id in pruned:
            continue
        taken.add(chunk.chunk_id)
        item = next((e for e in evidence if e.chunk_id == chunk.chunk_id), None)
        if item is None:
            added += 1
            item = _plain_evidence(episode, chunk).model_copy(
                update={"justification": "One plain search of the question ranks it here."}
            )
        ordered.append(item)
    out = front + ordered + [e for e in evidence if e.chunk_id not in taken]
    # Scores fall with the rank, whoever placed the item.
    top = max([e.score for e in evidence] or [1.0])
    for i, item in enumerate(out):
        score = max(item.score, top) if i == 0 else min(item.score, out[i - 1].score)
        if score != item.score:
            out[i] = item.model_copy(update={"score": score})
    return out, added


def _fill_from_plain(
    episode: Episode, evidence: list[Evidence], leaders: list[Chunk]
) -> tuple[list[Evidence], int]:
    """A list shorter than top_k ends with the plain search's next chunks (those the
    policy pruned left out): an episode that stopped early, or whose context was short,
    gives as much as one search would, never less."""
    room = episode.top_k - len(evidence)
    if room <= 0:
        return evidence, 0
    pruned = pruned_by_policy(episode.trace)
    listed = {e.chunk_id for e in evidence}
    extra: list[Evidence] = []
    floor = min([e.score for e in evidence] or [0.0])
    for rank, chunk in enumerate(leaders, start=1):
        if len(extra) >= room:
            break
        if chunk.chunk_id in listed or chunk.chunk_id in pruned:
            continue
        item = _plain_evidence(episode, chunk)
        why = f"One plain search of the question ranks it {rank}; it fills the list."
        extra.append(item.model_copy(update={"justification": why, "score": floor}))
    return evidence + extra, len(extra)


def _keep_within(
    episode: Episode,
    evidence: list[Evidence],
    leaders: list[Chunk],
    pruned: set[str],
    by_id: dict[str, Evidence],
    keep: int,
    within: int,
) -> tuple[list[Evidence], int]:
    """The plain search's first `keep` chunks (`plain_keep`) stay within the first
    `within` items (`plain_keep_within`): one the policy ranked lower (or not at all)
    takes the last places there, so the agent's top is never missing what one search
    ranked high (the policy's own picks keep the places above)."""
    placed = {e.chunk_id for e in evidence[:within]}
    missing: list[Evidence] = []
    added = 0
    for rank, chunk in enumerate(leaders[:keep], start=1):
        if chunk.chunk_id in placed or chunk.chunk_id in pruned:
            continue
        item = by_id.get(chunk.chunk_id)
        if item is None:
            added += 1
            item = _plain_evidence(episode, chunk)
        note = (
            f"One plain search of the question ranks it {rank}; the harness keeps it in "
            f"the first {within} (HarnessConfig.plain_keep)."
        )
        missing.append(
            item.model_copy(update={"justification": f"{note} {item.justification}".strip()})
        )
    if not missing:
        return evidence, 0
    moved = {e.chunk_id for e in missing}
    rest = [e for e in evidence if e.chunk_id not in moved]
    cut = max(0, min(within, len(rest) + len(missing)) - len(missing))
    out = rest[:cut] + missing + rest[cut:]
    # Scores fall with the rank, whoever placed the item.
    for i in range(1, len(out)):
        if out[i].score > out[i - 1].score:
            out[i] = out[i].model_copy(update={"score": out[i - 1].score})
    return out, added


def _plain_evidence(episode: Episode, chunk: Chunk) -> Evidence:
    """A plain-search chunk the policy never surfaced, as evidence."""
    return Evidence(
        doc_id=chunk.doc_id,
        chunk_id=chunk.chunk_id,
        title=chunk.title,
        text=chunk.text,
        score=0.0,
        justification="",
        found_by=[FoundBy(tool="search_corpus", argument=episode.question, turn=0)],
        metadata=dict(chunk.metadata),
    )


def search_result(
    episode: Episode, reranker: Reranker, leaders: list[Chunk] | None = None
) -> SearchResult:
    """The SearchResult of an episode that has stopped; `leaders` (the first chunks of
    one plain search of the question, `plain_leaders`) lead its evidence."""
    ranked: list[tuple[str, str, float | None, str | None]] = []
    leads: set[str] = set()
    if episode.final is not None and episode.stopped == "final":
        for chunk_id, item in _expand_final(episode, episode.final):
            ranked.append((chunk_id, item.justification, item.score, item.via_entity))
            if item.lead_reason:
                leads.add(chunk_id)
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
    if leaders:
        evidence, added = _lead_with(episode, evidence, leaders, leads)
        if added:
            flags.append(f"plain_search_kept:{added}")
        if episode.config.plain_fill:
            evidence, filled_in = _fill_from_plain(episode, evidence, leaders)
            if filled_in:
                flags.append(f"plain_search_filled:{filled_in}")
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
        final_evidence_tokens=sum(
            episode.seen[e.chunk_id].tokens
            if e.chunk_id in episode.seen
            else estimate_tokens(e.text)
            for e in evidence
        ),
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
    episode = state["episode"]
    leaders, failure = plain_leaders(episode, services.corpus)
    if failure is not None:
        episode.flags.append(failure)
    result = search_result(episode, services.reranker, leaders)
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
