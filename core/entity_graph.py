"""Moved to `sift.entities`; this name keeps working, with a DeprecationWarning, for one
release."""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from sift.entities import (
    EntityGraph,
    EntityGraphConfig,
    EntityLimits,
    WalkLimits,
    WalkResult,
    build_entity_graph,
    entity_key,
    fuse_search_with_walk,
    graph_row,
    passage_entities,
    question_entities,
    worker_command,
)
from sift.fusion import rrf_scores


def build_graph(
    passages: Iterable[tuple[str, str, str]], limits: EntityLimits | None = None
) -> EntityGraph:
    """Deprecated name of `build_entity_graph` (`sift.graphs.build_graph` builds the
    harness's state machine); kept for one release."""
    warnings.warn(
        "sift.entity_graph.build_graph is now sift.entities.build_entity_graph "
        "(sift.graphs.build_graph builds the harness); the old name goes in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return build_entity_graph(passages, limits)


__all__ = [
    "EntityGraph",
    "EntityGraphConfig",
    "EntityLimits",
    "WalkLimits",
    "WalkResult",
    "build_entity_graph",
    "build_graph",
    "entity_key",
    "fuse_search_with_walk",
    "graph_row",
    "passage_entities",
    "question_entities",
    "rrf_scores",
    "worker_command",
]

warnings.warn(
    "sift.entity_graph moved to sift.entities; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
