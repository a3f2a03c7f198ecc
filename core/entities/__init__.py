"""sift.entities: an entity graph without a model.

`passage_entities` finds what a passage names (its title, capitalised and quoted spans,
dates and numbers, Japanese katakana and kanji names and 『』「」 names); `EntityGraph`
holds the chunk–entity graph with IDF weights and walks it from a question's entities
(`question_entities`) and the chunks found so far; `build_entity_graph` builds one in
memory; `fuse_search_with_walk` fuses a search's hits with a store's walk;
`EntityGraphConfig` holds every number (`SIFT_ENTITY_GRAPH_<FIELD>`); `graph_row` and
`worker_command` serve a store that keeps the graph (the embedded store finds entities
in a child process, `python -P -m sift.entities._worker`).

Each name is imported on first use, so the worker process starts without pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sift._lazy import lazy_names

__all__ = [
    "EntityGraph",
    "EntityGraphConfig",
    "EntityLimits",
    "WalkLimits",
    "WalkResult",
    "build_entity_graph",
    "entity_key",
    "fuse_search_with_walk",
    "graph_row",
    "passage_entities",
    "question_entities",
    "worker_command",
]

_ORIGINS = {"sift.entities._graph": tuple(__all__)}

if TYPE_CHECKING:
    from sift.entities._graph import (
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
else:
    __getattr__, __dir__ = lazy_names(__name__, _ORIGINS)
