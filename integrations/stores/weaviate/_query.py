"""How sift's searches become Weaviate queries: which properties keyword search reads,
how the query text is handed to BM25 and hybrid search, how sift's fusion names map to
Weaviate's, and which word a grep pattern's literals let a Like filter look for.

Query construction lives here alone, so that language-specific analysis (how text is
tokenized for BM25 and Like) has one place to change.

A collection made with an analyzer (`sift.text`, recorded in its description) keeps
each chunk's terms in `text_terms` and `title_terms`, whitespace-tokenized: keyword
search reads those, with the query's terms as the query text, each term repeated as many
times as its weight (Weaviate multiplies a term's IDF by its count in the query), so
neither Weaviate's word tokenizer (one token per Japanese sentence) nor any query syntax
ever meets the user's text. A collection made before analyzers were recorded searches
`text` and `title` with Weaviate's word tokenizer, as it always did.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from weaviate.classes.query import Filter as WFilter
from weaviate.classes.query import HybridFusion, MetadataQuery

from sift.integrations.stores._checks import MAX_QUERY_TERMS
from sift.integrations.stores.patterns import literal_fragments
from sift.text import Analyzer

__all__ = [
    "LEGACY_SEARCH_PROPERTIES",
    "TERMS_PROPERTIES",
    "KeywordQuery",
    "bm25_query",
    "hybrid_query",
    "keyword_query",
    "like_filter",
    "like_needle",
    "near_vector_query",
]

# Lexical search looks at the passage and its title, as the embedded store does: their
# analysed terms, or (collections without an analyzer) the text itself.
TERMS_PROPERTIES = ["text_terms", "title_terms"]
LEGACY_SEARCH_PROPERTIES = ["text", "title"]
# sift's fusion names -> Weaviate's: relative-score fusion, and Weaviate's rank fusion
# (reciprocal-rank style) for "rrf".
_FUSIONS = {"relative_score": HybridFusion.RELATIVE_SCORE, "rrf": HybridFusion.RANKED}
# A run of letters and digits: Weaviate's word tokenizer never splits one (a Japanese
# run between punctuation is one token, so its Like filter still finds 東京都 in it).
_WORD_RUN = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class KeywordQuery:
    """What Weaviate's BM25 is given: the query text and the properties it searches."""

    text: str
    properties: list[str]

    @property
    def empty(self) -> bool:
        return not self.text.strip()


def keyword_query(text: str, analyzer: Analyzer | None) -> KeywordQuery:
    """The BM25 side of a search for `text`: the analyzer's terms, each repeated by its
    weight (rounded, at least once), over the terms properties; or, on a collection
    without an analyzer, the text itself over `text` and `title`."""
    if analyzer is None:
        return KeywordQuery(text, LEGACY_SEARCH_PROPERTIES)
    weighted = analyzer.weighted_query_terms(text, limit=MAX_QUERY_TERMS)
    words = [term for term, weight in weighted for _ in range(max(1, math.floor(weight + 0.5)))]
    return KeywordQuery(" ".join(words), TERMS_PROPERTIES)


def bm25_query(keywords: KeywordQuery) -> dict[str, Any]:
    """Keyword arguments of `collection.query.bm25`; Weaviate reads no query syntax in
    the text."""
    return {
        "query": keywords.text,
        "query_properties": keywords.properties,
        "return_metadata": MetadataQuery(score=True),
    }


def near_vector_query(vector: list[float]) -> dict[str, Any]:
    return {"near_vector": vector, "return_metadata": MetadataQuery(distance=True)}


def hybrid_query(
    keywords: KeywordQuery, vector: list[float], *, alpha: float, fusion: str
) -> dict[str, Any]:
    """Keyword arguments of `collection.query.hybrid`: BM25 on `keywords` fused with the
    dense scores of `vector`, `alpha` being the dense weight."""
    return {
        "query": keywords.text,
        "vector": vector,
        "alpha": alpha,
        "fusion_type": _FUSIONS[fusion],
        "query_properties": keywords.properties,
        "return_metadata": MetadataQuery(score=True),
    }


def like_needle(pattern: str) -> str | None:
    """The longest run of letters and digits of the pattern's literal fragments,
    lowercased (Japanese included: 東京都 in 東京都[^。]*区).

    `text` is word-tokenized, so Like matches single lowercased tokens: a run of letters
    and digits inside a fragment is always inside one token of every matching text.
    """
    runs = [r.lower() for f in literal_fragments(pattern) for r in _WORD_RUN.findall(f)]
    runs = [r for r in runs if len(r) >= 2]
    return max(runs, key=len) if runs else None


def like_filter(needle: str) -> Any:
    """The Like filter that keeps the chunks having a token that contains `needle`."""
    return WFilter.by_property("text").like(f"*{needle}*")
