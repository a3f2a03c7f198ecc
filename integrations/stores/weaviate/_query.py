"""How sift's searches become Weaviate queries: which properties keyword search reads,
how the query text is handed to BM25 and hybrid search, how sift's fusion names map to
Weaviate's, and which word a grep pattern's literals let a Like filter look for.

Query construction lives here alone, so that language-specific analysis (how text is
tokenized for BM25 and Like) has one place to change.
"""

from __future__ import annotations

import re
from typing import Any

from weaviate.classes.query import Filter as WFilter
from weaviate.classes.query import HybridFusion, MetadataQuery

from sift.integrations.stores.patterns import literal_fragments

__all__ = [
    "SEARCH_PROPERTIES",
    "bm25_query",
    "hybrid_query",
    "like_filter",
    "like_needle",
    "near_vector_query",
]

# Lexical search looks at the passage and its title, as the embedded store does.
SEARCH_PROPERTIES = ["text", "title"]
# sift's fusion names -> Weaviate's: relative-score fusion, and Weaviate's rank fusion
# (reciprocal-rank style) for "rrf".
_FUSIONS = {"relative_score": HybridFusion.RELATIVE_SCORE, "rrf": HybridFusion.RANKED}
_WORD_RUN = re.compile(r"[0-9A-Za-z]+")


def bm25_query(text: str) -> dict[str, Any]:
    """Keyword arguments of `collection.query.bm25` for the query `text`. Weaviate
    tokenizes the text itself and reads no query syntax in it."""
    return {
        "query": text,
        "query_properties": SEARCH_PROPERTIES,
        "return_metadata": MetadataQuery(score=True),
    }


def near_vector_query(vector: list[float]) -> dict[str, Any]:
    return {"near_vector": vector, "return_metadata": MetadataQuery(distance=True)}


def hybrid_query(text: str, vector: list[float], *, alpha: float, fusion: str) -> dict[str, Any]:
    """Keyword arguments of `collection.query.hybrid`: BM25 on `text` fused with the
    dense scores of `vector`, `alpha` being the dense weight."""
    return {
        "query": text,
        "vector": vector,
        "alpha": alpha,
        "fusion_type": _FUSIONS[fusion],
        "query_properties": SEARCH_PROPERTIES,
        "return_metadata": MetadataQuery(score=True),
    }


def like_needle(pattern: str) -> str | None:
    """The longest word-character run of the pattern's literal fragments, lowercased.

    `text` is word-tokenized, so Like matches single lowercased tokens: a run of word
    characters inside a fragment is always inside one token of every matching text.
    """
    runs = [r.lower() for f in literal_fragments(pattern) for r in _WORD_RUN.findall(f)]
    runs = [r for r in runs if len(r) >= 2]
    return max(runs, key=len) if runs else None


def like_filter(needle: str) -> Any:
    """The Like filter that keeps the chunks having a token that contains `needle`."""
    return WFilter.by_property("text").like(f"*{needle}*")
