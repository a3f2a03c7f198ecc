"""The no-model default Reranker: Okapi BM25 of the query over the chunks being ranked.

Statistics (document frequencies, average length) come from the candidate chunks
themselves, so the scorer needs no index and ranks any list it is given.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from sift.text import overlap_terms
from sift.types import Chunk

__all__ = ["TermOverlapReranker", "terms"]

# Words so common that matching them says nothing about relevance.
_STOPWORDS_TEXT = (
    "a an and are as at be by did do does for from had has have he her his how in is it its"
    " of on or she that the their them they this to was were what when where which who whom"
    " whose why will with"
)
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def terms(text: str) -> list[str]:
    """Lower-cased word tokens without stopwords (CJK runs as character bigrams)."""
    return [w for w in overlap_terms(text) if w not in _STOPWORDS]


class TermOverlapReranker:
    """BM25 (k1, b) of the query's terms in each chunk's title and text."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b

    def rerank(self, query: str, chunks: Sequence[Chunk]) -> list[float]:
        wanted = set(terms(query))
        if not chunks or not wanted:
            return [0.0] * len(chunks)
        bags = [Counter(terms(f"{c.title} {c.text}")) for c in chunks]
        lengths = [sum(bag.values()) for bag in bags]
        average = (sum(lengths) / len(lengths)) or 1.0
        n = len(chunks)
        idf = {}
        for term in wanted:
            df = sum(1 for bag in bags if term in bag)
            idf[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        scores: list[float] = []
        for bag, length in zip(bags, lengths, strict=True):
            norm = self.k1 * (1.0 - self.b + self.b * length / average)
            score = 0.0
            for term in wanted:
                tf = bag.get(term, 0)
                if tf:
                    score += idf[term] * tf * (self.k1 + 1.0) / (tf + norm)
            scores.append(score)
        return scores
