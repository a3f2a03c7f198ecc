"""Fusion of rankings, in one place: reciprocal rank fusion (`rrf_scores`, which every
merge of ranked lists uses: a store's dense and lexical lists, a search and the entity
graph's walk, rollouts, the reranked fallback), and how a store merges its dense and
lexical rankings, with the default weight of the dense side for each embedder.

Strategies are picked by name (`fuse("relative_score", ...)`); every store takes the name
and the weight `alpha` as options, so that both stores fuse the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

__all__ = [
    "ALPHA_BY_EMBEDDER",
    "DEFAULT_ALPHA",
    "DEFAULT_FUSION",
    "FUSIONS",
    "RRF_K",
    "check_alpha",
    "check_fusion",
    "default_alpha",
    "fuse",
    "fusion_names",
    "relative_score_fusion",
    "rrf_fusion",
    "rrf_scores",
]

# Fusion defaults are configuration, not constants of nature: they are tuned on the
# benchmark dev sets (benchmarks/) and every store takes them as constructor options.
DEFAULT_FUSION = "relative_score"
DEFAULT_ALPHA = 0.5
# Hybrid weight of the dense scores per embedder, tuned on the shared dev sets
# (benchmarks/results/dense_quality.md): with the static model only a light dense weight is
# never worse than BM25 alone on any set; with MiniLM 0.4 is the best weight that stays above
# BM25 on both sets it was measured on (HotpotQA, MuSiQue).
# Embedders not measured there (Ollama models, hash) keep DEFAULT_ALPHA, Weaviate's default.
ALPHA_BY_EMBEDDER = {"static": 0.1, "minilm": 0.4}

# Reciprocal rank fusion's constant (Cormack et al. 2009), the default of every fusion
# that takes one: the stores' rrf hybrid, HarnessConfig's rrf_k (rollouts) and
# fallback_rrf_k, the planner's question and graph fusions.
RRF_K = 60

Key = TypeVar("Key", bound=Hashable)
Ranked = Sequence[tuple[Key, float]]


def rrf_scores(lists: Iterable[tuple[float, Sequence[Key]]], k: int) -> dict[Key, float]:
    """Weighted reciprocal rank fusion: each key's sum over the (weight, ranked keys)
    lists of weight / (k + rank), ranks from 1; the keys in the order first met."""
    scores: dict[Key, float] = {}
    for weight, ranked in lists:
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return scores


def default_alpha(embedder_name: str) -> float:
    """The hybrid alpha a store uses for `embedder_name` when none is given."""
    return ALPHA_BY_EMBEDDER.get(embedder_name, DEFAULT_ALPHA)


def relative_score_fusion(
    dense: Ranked[Key], lexical: Ranked[Key], alpha: float
) -> list[tuple[Key, float]]:
    """Weaviate's relativeScoreFusion: each list min-max normalised to [0, 1], then
    `alpha * dense + (1 - alpha) * lexical`; a key absent from a list scores 0 there."""
    scores: dict[Key, float] = {}
    for weight, ranked in ((alpha, dense), (1.0 - alpha, lexical)):
        if not ranked:
            continue
        values = [s for _, s in ranked]
        low, high = min(values), max(values)
        span = high - low
        for key, score in ranked:
            norm = (score - low) / span if span > 0 else 1.0
            scores[key] = scores.get(key, 0.0) + weight * norm
    return _order(scores, dense, lexical)


def rrf_fusion(
    dense: Ranked[Key], lexical: Ranked[Key], alpha: float, *, k: int = RRF_K
) -> list[tuple[Key, float]]:
    """Weighted reciprocal rank fusion: `alpha / (k + rank_dense) + (1 - alpha) /
    (k + rank_lexical)`, ranks from 1; scores alone are ignored."""
    lists = ((alpha, [key for key, _ in dense]), (1.0 - alpha, [key for key, _ in lexical]))
    return _order(rrf_scores(lists, k), dense, lexical)


def _order(
    scores: dict[Key, float], dense: Ranked[Key], lexical: Ranked[Key]
) -> list[tuple[Key, float]]:
    # Ties break by lexical rank, then dense rank, so alpha=0 reproduces BM25's order and
    # alpha=1 the dense order exactly.
    lex_rank = {key: float(i) for i, (key, _) in enumerate(lexical)}
    dense_rank = {key: float(i) for i, (key, _) in enumerate(dense)}
    big = math.inf
    return sorted(
        scores.items(),
        key=lambda kv: (-kv[1], lex_rank.get(kv[0], big), dense_rank.get(kv[0], big)),
    )


FusionFn = Callable[[Ranked[Key], Ranked[Key], float], list[tuple[Key, float]]]

FUSIONS: dict[str, FusionFn[Hashable]] = {
    "relative_score": relative_score_fusion,
    "rrf": rrf_fusion,
}


def fusion_names() -> tuple[str, ...]:
    return tuple(FUSIONS)


def check_alpha(alpha: object) -> float:
    """`alpha` as a float when it is a number in [0, 1], else ValueError naming it."""
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be a number between 0 and 1, got {alpha!r}")
    return float(alpha)


def check_fusion(name: str, alpha: float) -> tuple[str, float]:
    """The fusion name and alpha, validated; unknown names list the valid ones."""
    if name not in FUSIONS:
        raise ValueError(f"unknown fusion {name!r}; valid names: {', '.join(FUSIONS)}")
    return name, check_alpha(alpha)


def fuse(
    name: str, dense: Ranked[Key], lexical: Ranked[Key], alpha: float
) -> list[tuple[Key, float]]:
    """Fuses a dense and a lexical ranking (best first) with the strategy `name`."""
    check_fusion(name, alpha)
    fusion: FusionFn[Key] = FUSIONS[name]  # type: ignore[assignment]
    return fusion(dense, lexical, alpha)
