"""The approximate dense index for large stores: a usearch HNSW graph, derived from SQLite.

Exact search reads every vector per query; past a few hundred thousand chunks that costs
tens of milliseconds, so large stores search an HNSW graph instead (two-byte bfloat16
vectors, which also halves memory). The graph is saved beside `sift.db` with a sidecar
naming the change sequence it holds; on open it replays newer changes (idempotently: a
replayed chunk is removed before it is added) or is rebuilt from the stored vectors.

Inserting into the graph is the costliest step of a large ingest (193 us of CPU a
vector, averaged over a 1M ingest; 321 before the switch to bfloat16), and usearch frees
the GIL while it works, so the ingest's additions and removals run in a worker thread of
their own (inserting with two threads), in order, while the store writes the next batch;
`wait` (called by the store before it saves, and before an upsert or delete returns)
makes them all visible.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

import numpy as np
from usearch.index import Index

from sift.integrations.stores.sqlite._damage import engine_calls, engine_failure
from sift.integrations.stores.sqlite._filtering import Allowed, deepen, depth_for
from sift.integrations.stores.sqlite._sidecar import file_sum, read_record, read_seq, write_seq
from sift.integrations.stores.sqlite._vectors import best, cosines
from sift.integrations.stores.sqlite._worker import OrderedWorker

__all__ = ["AnnVectors"]

log = logging.getLogger("sift.integrations.stores")

_FORMAT = 1
_LOAD_BATCH = 20_000
# Below this size a brute-force pass over the two-byte vectors is as fast as the
# graph walk and never misses a neighbour.
_EXACT_BELOW = 20_000
# A filter allowing at most this many chunks has them scored exactly, alone.
_EXACT_FILTERED = 20_000
# Past that, the exact pass still pays while it scores fewer than this many chunks a
# step of the walk it replaces (`depth_for`'s depth). Measured at 1M chunks of 256
# dimensions on 2 shared cores: 45-55 ns a chunk scored, 3.5-4 us a step walked. So for
# hybrid's 100 under a 5 % filter (50,000 chunks, 2,516 steps) 2.2-2.7 ms against 8.7-9.9
# walking; for a search of 10 (268 steps) the walk's 1.1-1.6 ms stays cheaper.
_ROWS_PER_STEP = 70
# The pass's matrix is kept with the filter (a few filters are kept): at most this much.
_EXACT_FILTERED_BYTES = 64 << 20
# Batches waiting for the worker: past this, the writer waits (memory stays bounded).
_MAX_PENDING = 4
# Threads of one insertion during an ingest. The graph's single insertion thread was the
# ingest's critical path past 300k chunks (391 us of CPU a vector at 1M, more than the
# rest of the writer); with two, usearch inserts on whichever core the chunking child and
# the writer leave free: 200k chunks into a graph 61.5 -> 48.1 s, 1M chunks end to end
# 643 -> 481 s (benchmarks/results/store_speed.md). The graph is as good either way.
_INGEST_THREADS = 2


class AnnVectors:
    def __init__(
        self,
        path: Path,
        dim: int,
        *,
        connectivity: int = 12,
        expansion_add: int = 48,
        expansion_search: int = 96,
        rebuild: bool = False,
    ) -> None:
        """`rebuild`: the graph on disk is damaged (a query failed in usearch): it is
        not loaded, and the store rebuilds it from SQLite."""
        self.dim = dim
        self._path = path
        self._sidecar = path.with_suffix(".json")
        self._lock = threading.Lock()
        self._connectivity = connectivity
        self._expansion = (expansion_add, expansion_search)
        self.seq = -1  # -1: nothing usable on disk; the store rebuilds it
        self.unsaved = 0
        self._worker = OrderedWorker("sift-hnsw", _MAX_PENDING)
        self._index = self._new()
        seq = None if rebuild else read_seq(self._sidecar, _FORMAT)
        if seq is not None and path.exists() and not self._damaged():
            try:
                self._index.load(str(path))
                if self._index.ndim != dim:
                    raise ValueError("dimension changed")
                self.seq = seq
            except BaseException as exc:
                if not engine_failure(exc):
                    raise
                self._index = self._new()
                self.seq = -1

    def _damaged(self) -> bool:
        """Whether the graph's bytes are not those saved: usearch loads a damaged graph
        without a word and then answers with the wrong neighbours (flipped bytes made
        "beacon17" find two Japanese pages), so the sum recorded at saving is compared
        (a graph saved by a sift that recorded none is taken as it is)."""
        record = read_record(self._sidecar, _FORMAT) or {}
        recorded = record.get("sum")
        if recorded is None or file_sum(self._path) == recorded:
            return False
        log.warning("the vector graph %s is damaged: rebuilding it from SQLite", self._path)
        return True

    def _new(self) -> Index:
        return Index(
            ndim=self.dim,
            metric="ip",
            # bfloat16, not float16: the same two bytes a vector, and the same recall on the
            # real dev passages (0.941 against 0.943), but insertion, the costliest step of a
            # large ingest, takes a quarter less CPU (benchmarks/results/hnsw_insertion.md).
            # The cosines it reports are off by 0.0003 on average, 0.0015 at most (float16:
            # 0.0002 at most). A graph saved as float16 by an older sift loads as it is.
            dtype="bf16",
            connectivity=self._connectivity,
            expansion_add=self._expansion[0],
            expansion_search=self._expansion[1],
        )

    def __len__(self) -> int:
        return len(self._index)

    def rebuild(self, conn: sqlite3.Connection) -> None:
        self.wait()
        with self._lock:
            self._index = self._new()
        cursor = conn.execute("SELECT id, v FROM vectors ORDER BY id")
        while batch := cursor.fetchmany(_LOAD_BATCH):
            self._add_rows(batch)
        self.seq = -1
        self.unsaved = len(self._index)

    def _add_rows(self, rows: list[tuple[int, bytes]]) -> None:
        ids = np.fromiter((r[0] for r in rows), dtype=np.uint64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(-1, self.dim)
        # Nothing else runs while the store opens: both cores build the graph.
        self._add_now(ids, matrix, threads=2)

    def replay(self, conn: sqlite3.Connection, chunk_ids: Iterable[int]) -> None:
        """Re-applies chunks touched since `seq`: removed, and added back if they exist."""
        touched = sorted(set(chunk_ids))
        self.wait()
        self._remove_now(touched)
        for start in range(0, len(touched), 900):
            part = touched[start : start + 900]
            marks = ",".join("?" * len(part))
            rows = conn.execute(f"SELECT id, v FROM vectors WHERE id IN ({marks})", part).fetchall()
            if rows:
                self._add_rows(rows)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Queues rows for the worker."""
        if len(ids) == 0:
            return
        self._queue(
            self._add_now, np.array(ids, dtype=np.uint64), np.array(vectors), _INGEST_THREADS
        )

    def remove(self, ids: Collection[int]) -> None:
        """Queues a removal, applied after the additions queued before it."""
        if ids:
            self._queue(self._remove_now, list(ids))

    def _queue(self, job: Callable[..., None], *args: object) -> None:
        self._worker.submit(job, *args)

    def wait(self) -> None:
        """Returns once every queued addition and removal is in the graph; raises the
        first that failed."""
        self._worker.wait()

    def close(self) -> None:
        self._worker.close()

    def _add_now(self, ids: np.ndarray, vectors: np.ndarray, threads: int) -> None:
        with self._lock:
            self._index.add(np.asarray(ids, dtype=np.uint64), vectors, threads=threads)
        self.unsaved += len(ids)

    def _remove_now(self, ids: Collection[int]) -> None:
        if not ids:
            return
        with self._lock:
            keys = np.fromiter(ids, dtype=np.uint64)
            present = keys[np.asarray(self._index.contains(keys), dtype=bool).reshape(-1)]
            if len(present):
                self._index.remove(present)
        self.unsaved += len(ids)

    def search(
        self,
        query: np.ndarray,
        limit: int,
        exclude: Collection[int] = (),
        allowed: Allowed | None = None,
    ) -> list[tuple[int, float]]:
        """(rowid, cosine) best first; only chunks `allowed` (a filter's) when given:
        they are scored exactly, alone, where that costs less than walking the graph
        deep enough for their share (usearch's Python binding has no filtered walk)."""
        if allowed is None:
            return self._search(query, limit, exclude)
        size = len(self._index)
        if self._exact_pays(len(allowed), depth_for(limit, allowed, size)):
            keys, matrix = self._vectors_of(allowed)
            return best(keys, cosines(matrix, query) if len(keys) else np.zeros(0), limit, exclude)
        return deepen(lambda n: self._search(query, n, exclude), limit, allowed, size)

    def _exact_pays(self, rows: int, depth: int) -> bool:
        """Whether scoring `rows` allowed chunks costs less than a walk `depth` deep."""
        if rows <= _EXACT_FILTERED:
            return True
        return rows < _ROWS_PER_STEP * depth and rows * 4 * self.dim <= _EXACT_FILTERED_BYTES

    def _vectors_of(self, allowed: Allowed) -> tuple[np.ndarray, np.ndarray]:
        """The allowed chunks the graph holds and their vectors, read once per filter
        and graph."""

        def read() -> tuple[Index, np.ndarray, np.ndarray]:
            with self._lock, engine_calls("vectors", f"the vector graph at {self._path}"):
                index = self._index
                got: Any = index.get(allowed.rowids.astype(np.uint64), dtype="f32")
            # One key gives its vector (or None), several a tuple of them.
            found: list[Any] = [got] if len(allowed) == 1 else list(got)
            keep = [i for i, vector in enumerate(found) if vector is not None]
            matrix = np.zeros((len(keep), self.dim), dtype=np.float32)
            for row, i in enumerate(keep):
                matrix[row] = found[i]
            return index, allowed.rowids[keep], matrix

        # Read again for another graph, or when chunks its worker had not added yet
        # were missing: not kept as they were until the next write.
        held = allowed.remembered(
            ("ann", id(self)),
            read,
            lambda h: h[0] is self._index and len(h[1]) == len(allowed),
        )
        return held[1], held[2]

    def _search(
        self, query: np.ndarray, limit: int, exclude: Collection[int] = ()
    ) -> list[tuple[int, float]]:
        size = len(self._index)
        if size == 0:
            return []
        want = min(limit + len(exclude), size)
        with self._lock, engine_calls("vectors", f"the vector graph at {self._path}"):
            matches = self._index.search(query, want, threads=1, exact=size < _EXACT_BELOW)
        out = []
        for key, distance in zip(matches.keys.tolist(), matches.distances.tolist(), strict=True):
            if key not in exclude:
                # usearch's "ip" distance is 1 - dot; report the cosine, higher is better.
                out.append((int(key), 1.0 - float(distance)))
        return out[:limit]

    def save(self, seq: int) -> None:
        """Writes the graph, then records that it holds everything up to `seq`."""
        self.wait()
        tmp = self._path.with_suffix(".tmp")
        with self._lock:
            self._index.save(str(tmp))
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        saved = file_sum(tmp) or ""
        os.replace(tmp, self._path)
        write_seq(self._sidecar, _FORMAT, seq, {"sum": saved})
        self.seq = seq
        self.unsaved = 0
