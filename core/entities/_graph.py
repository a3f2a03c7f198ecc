"""An entity graph without a model: what passages name, and a walk from a question.

`passage_entities` finds what a passage names (its title, capitalised and quoted spans,
dates and numbers, Japanese katakana and kanji names and 『』「」 names), `EntityGraph`
holds the chunk–entity bipartite graph with IDF weights, and `EntityGraph.walk` is a
truncated personalised PageRank from the question's entities (`question_entities`) and
the chunks found so far: the chunks it reaches, each with the entity it came through,
and the entities it reaches (bridge names for a next hop). Every number is a field of
`EntityGraphConfig`, readable from the environment as `SIFT_ENTITY_GRAPH_<FIELD>`.
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from sift.entities._extract import EntityLimits, entity_key, mention_keys, question_keys
from sift.entities._walk import EntityGraph, WalkLimits, WalkResult
from sift.fusion import rrf_scores
from sift.types import Hit

if TYPE_CHECKING:
    from sift.filters import Filter
    from sift.protocols import Corpus, EntityGraphCorpus

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


class _LegacyEnvironment(EnvSettingsSource):
    """`SIFT_GRAPH_<FIELD>`, this configuration's names until they collided with the
    served graph's (`SIFT_GRAPH_POLICY`): still read, under the new names, for one
    release, with a DeprecationWarning naming them."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        super().__init__(settings_cls, env_prefix=_LEGACY_PREFIX, case_sensitive=False)

    def __call__(self) -> dict[str, Any]:
        found = super().__call__()
        if found:
            old = ", ".join(_LEGACY_PREFIX + name.upper() for name in sorted(found))
            warnings.warn(
                f"{old}: the entity graph's settings are now read as "
                f"{_PREFIX}<FIELD>; the {_LEGACY_PREFIX} names go in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
        return found


_PREFIX = "SIFT_ENTITY_GRAPH_"
# The defaults of what entities are and how the walk goes (one home: the dataclasses).
_ENTITY = EntityLimits()
_WALK = WalkLimits()
_LEGACY_PREFIX = "SIFT_GRAPH_"


class EntityGraphConfig(BaseSettings):
    """How entities are found and how the graph is walked (env `SIFT_ENTITY_GRAPH_<FIELD>`)."""

    model_config = SettingsConfigDict(env_prefix=_PREFIX, extra="ignore", frozen=True)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        legacy = _LegacyEnvironment(settings_cls)
        return init_settings, env_settings, legacy, dotenv_settings, file_secret_settings

    # --- what counts as an entity: EntityLimits, whose defaults these are ---
    min_span_chars: int = Field(default=_ENTITY.min_span_chars, ge=1)
    max_span_words: int = Field(default=_ENTITY.max_span_words, ge=1)
    quote_min_chars: int = Field(default=_ENTITY.quote_min_chars, ge=1)
    quote_max_chars: int = Field(default=_ENTITY.quote_max_chars, ge=1)
    number_min_digits: int = Field(default=_ENTITY.number_min_digits, ge=1)
    number_max_digits: int = Field(default=_ENTITY.number_max_digits, ge=1)
    cjk_min_chars: int = Field(default=_ENTITY.cjk_min_chars, ge=1)
    cjk_max_chars: int = Field(default=_ENTITY.cjk_max_chars, ge=1)
    max_mentions: int = Field(default=_ENTITY.max_mentions, ge=1)

    # --- the walk: WalkLimits, whose defaults these are ---
    steps: int = Field(default=_WALK.steps, ge=1)
    restart: float = Field(default=_WALK.restart, ge=0.0, le=1.0)
    max_df_share: float = Field(default=_WALK.max_df_share, gt=0.0, le=1.0)
    max_df_floor: int = Field(default=_WALK.max_df_floor, ge=1)
    chunk_seed_weight: float = Field(default=_WALK.chunk_seed_weight, ge=0.0, le=1.0)
    frontier: int = Field(default=_WALK.frontier, ge=1)
    top_entities: int = Field(default=_WALK.top_entities, ge=0)
    title_edge_weight: float = Field(default=_WALK.title_edge_weight, ge=0.0)

    # --- the embedded store's entity index ---
    # A write that has read this many documents, or a rebuild on open of more chunks
    # than one batch of 5,000 and this many, has the rest of its entities found in a
    # worker process beside the writer, on another core (0: always in the writer's
    # thread). Below about 2,400 documents the worker saved nothing: its start, and the
    # core it takes from the writer (benchmarks/results/entity_graph.md).
    worker_min_chunks: int = Field(default=2048, ge=0)

    def limits(self) -> EntityLimits:
        return EntityLimits(**self.model_dump(include=_field_names(EntityLimits)))

    def walk_limits(self) -> WalkLimits:
        return WalkLimits(**self.model_dump(include=_field_names(WalkLimits)))


def _field_names(limits: type[EntityLimits] | type[WalkLimits]) -> set[str]:
    # The limits are this configuration's fields of the same names: one list of them.
    return {field.name for field in dataclasses.fields(limits)}


def passage_entities(title: str, text: str, limits: EntityLimits | None = None) -> list[str]:
    """The entity keys a passage names, each once, its title's first."""
    return mention_keys(title, text, limits)[0]


def question_entities(question: str, limits: EntityLimits | None = None) -> list[str]:
    """The entity keys a question names, each once, in order."""
    return question_keys(question, limits)


def build_entity_graph(
    passages: Iterable[tuple[str, str, str]], limits: EntityLimits | None = None
) -> EntityGraph:
    """The graph of (chunk id, title, text) passages, in memory."""
    return EntityGraph.build(_rows(passages, limits))


def graph_row(
    chunk_id: str, title: str, text: str, limits: EntityLimits | None = None
) -> tuple[str, list[str], int]:
    """One chunk's row of `EntityGraph.build`: its id, entity keys, title keys first."""
    keys, n_title = mention_keys(title, text, limits)
    return chunk_id, keys, n_title


def _rows(
    passages: Iterable[tuple[str, str, str]], limits: EntityLimits | None
) -> Iterable[tuple[str, list[str], int]]:
    for chunk_id, title, text in passages:
        yield graph_row(chunk_id, title, text, limits)


def worker_command() -> list[str]:
    """The command line of a process that finds entities for its parent (the embedded
    store's worker): it reads a pickled `EntityLimits`, then pickled lists of (title,
    text) on stdin until EOF, and answers each list on stdout with the pickled (keys, how
    many are the title's) of every text. It runs the sift this interpreter imports (the
    same installation as the parent's), importing only the extraction. `-P`: the folder
    the user runs sift in stays off its import path (`-m` and `-c` put it first, and a
    `threading.py` there ran in the child)."""
    return [sys.executable, "-P", "-m", "sift.entities._worker"]


def fuse_search_with_walk(
    corpus: Corpus,
    graph: EntityGraphCorpus,
    query: str,
    hits: Sequence[Hit],
    *,
    k: int,
    seeds: int,
    weight: float,
    rrf_k: int,
    exclude: Collection[str] = (),
    filters: Filter | None = None,
) -> tuple[list[Hit], dict[str, str]]:
    """A search's `hits` fused with the store's walk from the query's entities and the
    best `seeds` hits (weighted reciprocal rank fusion, the walk weighing `weight`): the
    best `k`, each scored by its fused score, and for each chunk the walk brought beyond
    the seeds, the entity it came through (`single_shot` and `search_corpus` over a store
    that keeps the graph)."""
    ranked = [h.chunk.chunk_id for h in hits[:k]]
    seeded = ranked[:seeds]
    walked = graph.walk_entities(query, seeds=seeded, k=k, exclude=exclude, filters=filters)
    scores = rrf_scores(((1.0, ranked), (weight, [c for c, _ in walked.chunks])), rrf_k)
    fused = sorted(scores, key=lambda c: -scores[c])[:k]
    by_id = {h.chunk.chunk_id: h.chunk for h in hits}
    missing = [c for c in fused if c not in by_id]
    by_id.update({c.chunk_id: c for c in corpus.get_chunks(missing)})
    out = [Hit(chunk=by_id[c], score=scores[c]) for c in fused if c in by_id]
    # The seeds are in the walk's list as seeds: only what it reached beyond them is
    # said to have come through an entity (every such chunk came through one).
    return out, {c: walked.via[c] for c in fused if c in walked.via and c not in seeded}
