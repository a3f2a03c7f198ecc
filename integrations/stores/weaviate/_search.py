"""Search on the Weaviate store: BM25, near-vector and hybrid queries, with sift's
filters pushed down and the reply re-checked where Weaviate's answer is a superset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sift.filters import matches
from sift.integrations.stores._checks import SearchRequest
from sift.integrations.stores._embedding import dense_weight, embed_query
from sift.integrations.stores.weaviate import _filters, _objects, _query, _schema
from sift.integrations.stores.weaviate._collection import Scope
from sift.text import Analyzer
from sift.types import Hit

if TYPE_CHECKING:
    from sift.protocols import Embedder

__all__ = ["search"]


def search(
    scope: Scope,
    request: SearchRequest,
    *,
    embedder: Embedder,
    vector: np.ndarray | None,
    alpha: float,
    fusion: str,
    analyzer: Analyzer | None,
) -> list[Hit]:
    """The best `request.k` hits; `alpha` is the dense weight of hybrid search, and
    `analyzer` the collection's (None: made before analyzers were recorded)."""
    k, mode, filters, excluded = request.k, request.mode, request.filters, request.exclude
    collection = scope.readable()
    if mode == "hybrid":
        alpha = dense_weight(embedder, request.text, alpha)
        if alpha == 0.0:
            mode = "bm25"  # as the embedded store: hybrid without a dense side is BM25
    keywords = _query.keyword_query(request.text, analyzer)
    if keywords.empty:
        # No term to look up (the text is all punctuation, say): nothing matches by
        # keyword, and hybrid search is its dense side alone.
        if mode == "bm25":
            return []
        if mode == "hybrid":
            mode = "dense"
    push = _filters.pushdown(filters, scope.kinds(filters), modern=scope.modern())
    if push.nothing:
        return []
    where = _filters.combine(push.where, _filters.exclusion(excluded, modern=scope.modern()))
    # A pushdown that is a superset is re-checked below: over-fetch, within the window.
    limit = k if push.exact else min(k * 5 + 50, scope.settings.query_maximum_results)
    common: dict[str, Any] = {
        "limit": limit,
        "filters": where,
        "return_properties": _schema.RETURN_PROPERTIES,
    }
    with scope.errors("search"):
        if mode == "bm25":
            reply = collection.query.bm25(**_query.bm25_query(keywords), **common)
        else:
            vec = embed_query(embedder, request.text, vector).tolist()
            if mode == "dense":
                reply = collection.query.near_vector(**_query.near_vector_query(vec), **common)
            else:
                reply = collection.query.hybrid(
                    **_query.hybrid_query(keywords, vec, alpha=alpha, fusion=fusion),
                    **common,
                )
    hits: list[Hit] = []
    for obj in reply.objects:
        chunk = _objects.chunk_from_properties(obj.properties)
        if chunk.chunk_id in excluded or not matches(filters, _objects.record_of(chunk)):
            continue
        if mode == "dense":
            # Cosine distance back to similarity, as the embedded store scores.
            score = 1.0 - float(obj.metadata.distance or 0.0)
        else:
            score = float(obj.metadata.score or 0.0)
        hits.append(Hit(chunk=chunk, score=score))
        if len(hits) == k:
            break
    return hits
