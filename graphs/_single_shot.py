"""The one-search baseline: `single_shot`, a SearchResult from one `corpus.search`.

Its own module, importing no LangGraph: `sift search --single-shot` answers without
loading the graph machinery.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from sift.config import HarnessConfig, check_question, from_environment
from sift.filters import Filter
from sift.tokens import estimate_tokens
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
    top_k: int = 30,
    mode: SearchMode = "hybrid",
    filters: Any = None,
) -> SearchResult:
    """The baseline: one `corpus.search(question, k=top_k, mode=mode)`, as a SearchResult."""
    question = check_question(question, from_environment(HarnessConfig).max_question_chars)
    if top_k < 1:
        raise ValueError(f"top_k must be a positive integer; got {top_k!r}")
    started = time.perf_counter()
    hits = corpus.search(question, k=top_k, mode=mode, filters=Filter.of(filters))
    found = FoundBy(tool="search_corpus", argument=question, turn=0)
    evidence = [
        Evidence(
            doc_id=h.chunk.doc_id,
            chunk_id=h.chunk.chunk_id,
            title=h.chunk.title,
            text=h.chunk.text,
            score=h.score,
            justification=f"Rank {rank} of a single {mode} search for the question.",
            found_by=[found],
            metadata=dict(h.chunk.metadata),
        )
        for rank, h in enumerate(hits[:top_k], start=1)
    ]
    tokens = sum(estimate_tokens(e.text) for e in evidence)
    trace = TurnTrace(
        turn=0,
        calls=[
            ToolCallTrace(
                tool="search_corpus",
                arguments={"query": question},
                added=[e.chunk_id for e in evidence],
                tokens=tokens,
            )
        ],
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
            tool_calls=1,
            calls_per_turn=1.0,
            peak_context_tokens=tokens,
            final_evidence_tokens=tokens,
        ),
        stopped_because="final",
    )
