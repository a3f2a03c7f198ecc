"""The one-search baseline: `single_shot`, a SearchResult from one `corpus.search`.

Its own module, importing no LangGraph: `sift search --single-shot` answers without
loading the graph machinery.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from sift.config import HarnessConfig, check_question, from_environment
from sift.entities import fuse_search_with_walk
from sift.filters import Filter
from sift.protocols import EntityGraphCorpus
from sift.text import estimate_tokens
from sift.types import (
    Evidence,
    FoundBy,
    SearchMode,
    SearchResult,
    ToolCallTrace,
    TurnTrace,
    Usage,
)

if TYPE_CHECKING:
    from sift.protocols import Corpus

__all__ = ["single_shot"]


def single_shot(
    question: str,
    corpus: Corpus,
    *,
    config: HarnessConfig | None = None,
    top_k: int | None = None,
    mode: SearchMode | None = None,
    filters: Any = None,
) -> SearchResult:
    """The baseline: one `corpus.search(question, k=top_k, mode=mode)`, as a SearchResult.

    `config` is the run's settings, as `asearch` takes them (None: `HarnessConfig()`,
    environment included); `top_k` and `mode` default to its `top_k` and `search_mode`.
    Over a corpus that keeps the entity graph (`EntityGraphCorpus.entity_graph`), the
    search's list is fused with a walk from the question's entities and the search's
    best hits (`single_shot_graph_weight`, 0: off); a chunk the walk reached says so in
    its justification and its `found_by` (`entity_graph`, through which entity)."""
    config = config if config is not None else from_environment(HarnessConfig)
    top_k = config.top_k if top_k is None else top_k
    mode = config.search_mode if mode is None else mode
    question = check_question(question, config.max_question_chars)
    if top_k < 1:
        raise ValueError(f"top_k must be a positive integer; got {top_k!r}")
    started = time.perf_counter()
    spec = Filter.of(filters)
    hits = corpus.search(question, k=top_k, mode=mode, filters=spec)
    searched = {h.chunk.chunk_id: rank for rank, h in enumerate(hits[:top_k], start=1)}
    calls = [ToolCallTrace(tool="search_corpus", arguments={"query": question})]
    via: dict[str, str] = {}
    if (
        config.single_shot_graph_weight > 0
        and isinstance(corpus, EntityGraphCorpus)
        and corpus.entity_graph
    ):
        seeds = [h.chunk.chunk_id for h in hits[: min(top_k, config.single_shot_graph_seeds)]]
        hits, via = fuse_search_with_walk(
            corpus,
            corpus,
            question,
            hits,
            k=top_k,
            seeds=len(seeds),
            weight=config.single_shot_graph_weight,
            rrf_k=config.rrf_k,
            filters=spec,
        )
        calls.append(ToolCallTrace(tool="entity_graph", arguments={"seeds": seeds}))
    found = FoundBy(tool="search_corpus", argument=question, turn=0)
    evidence = []
    for rank, h in enumerate(hits[:top_k], start=1):
        chunk_id = h.chunk.chunk_id
        why = f"Rank {rank} of a single {mode} search for the question."
        found_by = [found] if chunk_id in searched else []
        if chunk_id in via:
            where = (
                f"rank {searched[chunk_id]} of the search"
                if chunk_id in searched
                else "not in the search's list"
            )
            why = (
                f"Rank {rank} of a single {mode} search fused with the entity graph, which "
                f"reaches it through '{via[chunk_id]}' ({where})."
            )
            found_by.append(FoundBy(tool="entity_graph", argument=via[chunk_id], turn=0))
        evidence.append(
            Evidence(
                doc_id=h.chunk.doc_id,
                chunk_id=chunk_id,
                title=h.chunk.title,
                text=h.chunk.text,
                score=h.score,
                justification=why,
                found_by=found_by,
                metadata=dict(h.chunk.metadata),
            )
        )
    tokens = sum(estimate_tokens(e.text) for e in evidence)
    calls[0].added = [e.chunk_id for e in evidence if e.chunk_id in searched]
    calls[-1].tokens = tokens
    if len(calls) > 1:
        calls[1].added = [e.chunk_id for e in evidence if e.chunk_id not in searched]
    trace = TurnTrace(
        turn=0,
        calls=calls,
        tokens_after=tokens,
        wall_ms=round((time.perf_counter() - started) * 1000, 3),
    )
    return SearchResult(
        question=question,
        mode="single_shot",
        evidence=evidence,
        trace=[trace],
        usage=Usage(
            turns=0,
            tool_calls=len(calls),
            calls_per_turn=float(len(calls)),
            peak_context_tokens=tokens,
            final_evidence_tokens=tokens,
        ),
        stopped_because="final",
    )
