"""Weighted reciprocal rank fusion of chunk ids: how the planner's final list and
`single_shot` join a ranking with the entity graph's walk."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["rrf_scores"]


def rrf_scores(lists: Iterable[tuple[float, Sequence[str]]], k: int) -> dict[str, float]:
    """Each id's sum over the (weight, ranked ids) lists of weight / (k + rank), ranks
    from 1; the ids in the order first met."""
    scores: dict[str, float] = {}
    for weight, ranked in lists:
        for rank, chunk_id in enumerate(ranked, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
    return scores
