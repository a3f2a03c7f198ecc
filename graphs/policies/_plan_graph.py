"""The entity graph of what an episode has read, for the heuristic planner (issue 32).

The planner sees only the chunks its calls surfaced, so it builds the chunk–entity graph
of those (`sift.entities`: titles, capitalised and quoted spans, dates, Japanese
names) and walks it from the question's entities and its best chunks. A chunk that the
walk reaches through a bridge entity ("Signmark" -> Signmark's page -> "Finland" -> a page
on Finland's currency) but that shares few words with the question is lifted into the
final list by reciprocal rank fusion with the planner's own ranking. This works over any
corpus (it needs nothing from the store); measured in benchmarks/results/entity_graph.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sift.config import from_environment
from sift.entities import (
    EntityGraph,
    EntityGraphConfig,
    EntityLimits,
    WalkLimits,
    graph_row,
    question_entities,
)
from sift.fusion import rrf_scores
from sift.types import SeenChunk

__all__ = ["GraphFusion", "fuse_with_graph", "graph_bridges"]


@dataclass(frozen=True)
class GraphFusion:
    """How the walk's list joins the planner's ranking."""

    weight: float
    seed_chunks: int
    fusion_k: int
    limits: EntityLimits
    walk: WalkLimits

    @classmethod
    def from_settings(
        cls, weight: float, seed_chunks: int, fusion_k: int, graph: EntityGraphConfig | None = None
    ) -> GraphFusion:
        config = graph or from_environment(EntityGraphConfig)
        return cls(weight, seed_chunks, fusion_k, config.limits(), config.walk_limits())


@lru_cache(maxsize=65536)
def _row(chunk_id: str, title: str, text: str, limits: EntityLimits) -> tuple[str, list[str], int]:
    return graph_row(chunk_id, title, text, limits)


def _walk(question: str, ranked: list[str], seen: dict[str, SeenChunk], fusion: GraphFusion):
    graph = EntityGraph.build(
        _row(cid, seen[cid].chunk.title, seen[cid].chunk.text, fusion.limits) for cid in ranked
    )
    return graph.walk(
        question_entities(question, fusion.limits),
        ranked[: fusion.seed_chunks],
        limits=fusion.walk,
        k=len(ranked),
    )


def graph_bridges(
    question: str, ranked: list[str], seen: dict[str, SeenChunk], fusion: GraphFusion
) -> list[str]:
    """Entity names the walk from the question reaches most (not the question's own,
    not bare numbers), best first, as they are written in the text."""
    if not ranked:
        return []
    walked = _walk(question, ranked, seen, fusion)
    return [key for key, _ in walked.entities if not key.replace("-", "").isdigit()]


def fuse_with_graph(
    question: str,
    ranked: list[str],
    seen: dict[str, SeenChunk],
    fusion: GraphFusion,
) -> tuple[list[str], dict[str, str]]:
    """`ranked` chunk ids fused with the walk over the graph of `ranked`'s chunks, and
    for each chunk the walk placed, the entity it came through."""
    if fusion.weight <= 0 or not ranked:
        return ranked, {}
    walked = _walk(question, ranked, seen, fusion)
    walk = [c for c, _ in walked.chunks]
    scores = rrf_scores(((1.0, ranked), (fusion.weight, walk)), fusion.fusion_k)
    position = {c: i for i, c in enumerate(ranked)}
    fused = sorted(ranked, key=lambda c: (-scores[c], position[c]))
    return fused, walked.via
