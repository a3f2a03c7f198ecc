"""The chunk–entity graph and its walk (`sift.entities`).

The graph is bipartite: chunks on one side, entity keys on the other, an edge where a
chunk names an entity. An entity's weight is its inverse document frequency over the
chunks; entities named by more than `max_df_share` of the chunks (and at least
`max_df_floor` of them) are too common to lead anywhere and are not walked through.

The walk is a personalised PageRank truncated to `steps` round trips, computed on sparse
frontiers so that it touches only the neighbourhood of its seeds (the whole graph is
never multiplied): the mass starts on the seeds (the question's entities, weighted by
IDF, and chunks already found), and each round moves it entity -> chunk (split evenly
over the entity's chunks) and chunk -> entity (split by the entities' IDF), keeping
`restart` of it on the seeds. A chunk's score is the mass it received over the rounds;
the entity that brought it the most in its best round is where it came `via`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["EntityGraph", "WalkLimits", "WalkResult"]


@dataclass(frozen=True)
class WalkLimits:
    """The numbers of one walk. The defaults are here, once; `EntityGraphConfig` takes
    them as its own and reads the environment (`EntityGraphConfig.walk_limits()`)."""

    # Round trips entity -> chunk -> entity from the seeds (2: a bridge's own page).
    steps: int = 2
    # Share of the mass sent back to the seeds each round (PageRank's 1 - damping).
    restart: float = 0.3
    # Entities in more than this share of the chunks (and at least `max_df_floor` of
    # them) are not walked through: "United States" leads everywhere.
    max_df_share: float = 0.02
    max_df_floor: int = 20
    # The chunks found so far hold this share of the seed mass (the question's entities
    # the rest).
    chunk_seed_weight: float = 0.5
    # Entities kept per round (the heaviest), bounding a walk's cost on a large corpus.
    frontier: int = 512
    # Entities reported per walk (bridge candidates).
    top_entities: int = 20
    # From an entity, the page titled by it takes this many times the share of a page
    # that only names it (a mention links to the page about the name).
    title_edge_weight: float = 10.0


@dataclass
class WalkResult:
    """Chunks and entities the walk reached, best first, with their scores."""

    chunks: list[tuple[str, float]]
    via: dict[str, str]
    entities: list[tuple[str, float]]


def _default_limits() -> WalkLimits:
    # The defaults, not the environment's values (the caller passes those).
    return WalkLimits()


class EntityGraph:
    """An immutable chunk–entity graph in compressed sparse rows, both directions."""

    def __init__(
        self,
        chunk_ids: Sequence[str],
        entity_keys: Sequence[str],
        chunk_ptr: np.ndarray,
        chunk_entities: np.ndarray,
        title_edges: np.ndarray | None = None,
    ) -> None:
        self.chunk_ids = list(chunk_ids)
        self.entity_keys = list(entity_keys)
        self._chunk_index = {c: i for i, c in enumerate(self.chunk_ids)}
        self._entity_index = {k: i for i, k in enumerate(self.entity_keys)}
        self.chunk_ptr = chunk_ptr.astype(np.int64)
        self.chunk_entities = chunk_entities.astype(np.int64)
        n_entities = len(self.entity_keys)
        df = np.bincount(self.chunk_entities, minlength=n_entities)
        self.df = df
        order = np.argsort(self.chunk_entities, kind="stable")
        rows = np.repeat(np.arange(len(self.chunk_ids)), np.diff(self.chunk_ptr))
        self.entity_chunks = rows[order]
        # Which edges join a chunk to its own title's entity (the page about it).
        if title_edges is None:
            title_edges = np.zeros(len(self.chunk_entities), dtype=bool)
        self.chunk_titles = title_edges.astype(bool)
        self.entity_titles = self.chunk_titles[order]
        self.entity_ptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
        n = max(len(self.chunk_ids), 1)
        self.idf = np.log((n + 1) / (df + 0.5)).astype(np.float64)

    @classmethod
    def build(cls, rows: Iterable[tuple[str, Sequence[str], int]]) -> EntityGraph:
        """From (chunk id, entity keys, how many of the first keys are its title's)
        rows; a chunk's repeated keys count once."""
        chunk_ids: list[str] = []
        keys: dict[str, int] = {}
        ptr = [0]
        flat: list[int] = []
        title_flags: list[bool] = []
        for chunk_id, entity_keys, n_title in rows:
            chunk_ids.append(chunk_id)
            mine: dict[int, bool] = {}
            for i, k in enumerate(entity_keys):
                j = keys.setdefault(k, len(keys))
                mine[j] = mine.get(j, False) or i < n_title
            for j in sorted(mine):
                flat.append(j)
                title_flags.append(mine[j])
            ptr.append(len(flat))
        return cls(
            chunk_ids,
            list(keys),
            np.asarray(ptr),
            np.asarray(flat, dtype=np.int64),
            np.asarray(title_flags, dtype=bool),
        )

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def entity_id(self, key: str) -> int | None:
        return self._entity_index.get(key)

    def chunk_index(self, chunk_id: str) -> int | None:
        return self._chunk_index.get(chunk_id)

    def entities_of(self, chunk_id: str) -> list[str]:
        i = self._chunk_index.get(chunk_id)
        if i is None:
            return []
        ids = self.chunk_entities[self.chunk_ptr[i] : self.chunk_ptr[i + 1]]
        return [self.entity_keys[j] for j in ids]

    def walkable(self, limits: WalkLimits) -> np.ndarray:
        """Which entities the walk passes through (not too common, in 2+ chunks)."""
        cap = max(limits.max_df_floor, math.ceil(limits.max_df_share * len(self.chunk_ids)))
        return (self.df <= cap) & (self.df >= 1)

    def walk(
        self,
        entity_seeds: Iterable[str],
        chunk_seeds: Iterable[str] = (),
        *,
        limits: WalkLimits | None = None,
        exclude: Iterable[str] = (),
        k: int = 10,
    ) -> WalkResult:
        """Chunks (and entities) nearest the seeds, best first; `exclude`d chunks are
        walked through but not returned (seed chunks are returned unless excluded)."""
        lim = limits or _default_limits()
        ok = self.walkable(lim)
        e_seed: dict[int, float] = {}
        for key in entity_seeds:
            j = self._entity_index.get(key)
            if j is not None and ok[j]:
                e_seed[j] = float(self.idf[j])
        c_seed = [i for c in chunk_seeds if (i := self._chunk_index.get(c)) is not None]
        if not e_seed and not c_seed:
            return WalkResult([], {}, [])
        e_total = sum(e_seed.values()) or 1.0
        e_part = 1.0 if not c_seed else 1.0 - lim.chunk_seed_weight
        c_part = 0.0 if not c_seed else (lim.chunk_seed_weight if e_seed else 1.0)
        seed_e = (
            np.fromiter(e_seed, dtype=np.int64, count=len(e_seed)),
            np.fromiter(e_seed.values(), dtype=np.float64, count=len(e_seed)) / e_total * e_part,
        )
        seed_c = (
            np.asarray(sorted(set(c_seed)), dtype=np.int64),
            np.full(len(set(c_seed)), c_part / max(len(set(c_seed)), 1)),
        )
        n_chunks, n_entities = len(self.chunk_ids), len(self.entity_keys)
        chunk_score = np.zeros(n_chunks)
        entity_score = np.zeros(n_entities)
        best_via = np.full(n_chunks, -1, dtype=np.int64)
        best_gain = np.zeros(n_chunks)
        # Mass on entities and on chunks, as (ids, values) sparse vectors.
        e_ids, e_val = seed_e
        c_ids, c_val = seed_c
        idf_ok = np.where(ok, self.idf, 0.0)
        e_mass: NDArray[np.float64]
        c_mass: NDArray[np.float64]
        for step in range(lim.steps):
            # chunk -> entity: each chunk's mass split by its walkable entities' IDF.
            if len(c_ids):
                src, dst, _edge = _gather(self.chunk_ptr, self.chunk_entities, c_ids)
                w = idf_ok[dst]
                norm = np.bincount(src, weights=w, minlength=len(c_ids))
                share = np.divide(w, norm[src], out=np.zeros_like(w), where=norm[src] > 0)
                flow = c_val[src] * share
                e_mass = _sums(dst, flow, n_entities)
            else:
                e_mass = np.zeros(n_entities)
            e_mass *= 1.0 - lim.restart
            # The seeds' own mass enters whole on the first round, `restart` of it after.
            e_mass[e_ids] += e_val if step == 0 else e_val * lim.restart
            e_mass[~ok] = 0.0
            active = np.flatnonzero(e_mass)
            if len(active) > lim.frontier:
                keep = np.argpartition(-e_mass[active], lim.frontier)[: lim.frontier]
                active = active[keep]
            entity_score[active] += e_mass[active]
            # entity -> chunk: split over the entity's chunks, the page titled by it
            # weighing `title_edge_weight` times a page that only names it.
            src, dst, edge = _gather(self.entity_ptr, self.entity_chunks, active, with_edges=True)
            w = np.where(self.entity_titles[edge], lim.title_edge_weight, 1.0)
            norm = np.bincount(src, weights=w, minlength=len(active))
            flow = e_mass[active][src] * w / norm[src]
            c_mass = _sums(dst, flow, n_chunks)
            # The entity that brought each chunk the most this round.
            if len(flow):
                order = np.lexsort((-flow, dst))
                first = np.ones(len(order), dtype=bool)
                first[1:] = dst[order][1:] != dst[order][:-1]
                winners = order[first]
                better = flow[winners] > best_gain[dst[winners]]
                best_gain[dst[winners][better]] = flow[winners][better]
                best_via[dst[winners][better]] = active[src[winners][better]]
            c_mass *= 1.0 - lim.restart
            if len(seed_c[0]):
                c_mass[seed_c[0]] += seed_c[1] * lim.restart
            chunk_score += c_mass
            c_ids = np.flatnonzero(c_mass)
            c_val = c_mass[c_ids]
        banned = {i for c in exclude if (i := self._chunk_index.get(c)) is not None}
        chunk_score[list(banned)] = 0.0
        top = _top(chunk_score, k)
        chunks = [(self.chunk_ids[i], float(chunk_score[i])) for i in top]
        via = {self.chunk_ids[i]: self.entity_keys[best_via[i]] for i in top if best_via[i] >= 0}
        entity_score[list(e_seed)] = 0.0
        top_e = _top(entity_score, lim.top_entities)
        entities = [(self.entity_keys[j], float(entity_score[j])) for j in top_e]
        return WalkResult(chunks, via, entities)


def _gather(
    ptr: np.ndarray, targets: np.ndarray, rows: np.ndarray, *, with_edges: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the given rows of a CSR matrix, per edge: the position of its row in `rows`,
    its target and its own position in `targets`."""
    if len(rows) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    starts, ends = ptr[rows], ptr[rows + 1]
    counts = ends - starts
    src = np.repeat(np.arange(len(rows)), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    edges = np.repeat(starts, counts) + offsets
    return src, targets[edges], edges


def _sums(targets: np.ndarray, values: np.ndarray, size: int) -> NDArray[np.float64]:
    """The values added up per target, as a dense vector of `size`."""
    return np.asarray(np.bincount(targets, weights=values, minlength=size), dtype=np.float64)


def _top(scores: np.ndarray, k: int) -> list[int]:
    live = np.flatnonzero(scores > 0)
    if len(live) > k:
        live = live[np.argpartition(-scores[live], k)[:k]]
    # Best first; ties by position (ingest order), so the order is deterministic.
    return sorted(live.tolist(), key=lambda i: (-scores[i], i))
