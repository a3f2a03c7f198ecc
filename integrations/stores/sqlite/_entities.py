"""The entity graph as a derived index of the embedded store (issue 32, opt-in).

What every chunk names (`sift.entity_graph.graph_row`: its title, capitalised and quoted
spans, dates, Japanese names), kept per chunk rowid. It lives in memory, like the exact
vector index: on open it is rebuilt from SQLite (`catch_up`), after each committed write
it takes what changed (`apply`), and it keeps no place in the change log (`held` is
None), so a crash at any point costs a rebuild on the next open, never a wrong graph.
The walk's CSR graph is built from these rows when a walk first needs it after a write.

The store turns it on with `SqliteCorpus(..., entity_graph=True)`: extracting entities
costs more than the rest of an ingest (benchmarks/results/entity_graph.md), and a
rebuild on every open costs as much again, so it is not on by default.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Sequence

from sift.entity_graph import (
    EntityGraph,
    EntityGraphConfig,
    WalkResult,
    graph_row,
    question_entities,
)
from sift.integrations.stores.sqlite._derived import ChangeLog, Written

__all__ = ["EntityIndex"]

_ROWS = (
    "SELECT c.id, d.title, c.text, d.doc_id || '_' || c.idx "
    "FROM chunks c JOIN documents d ON d.id = c.doc"
)
_IDS = "SELECT c.id, d.doc_id || '_' || c.idx FROM chunks c JOIN documents d ON d.id = c.doc"


class EntityIndex:
    """Entity keys per chunk rowid, and the walk over them (`DerivedIndex`)."""

    closing = "closing the entity graph"

    def __init__(
        self, conn: Callable[[], sqlite3.Connection], config: EntityGraphConfig | None = None
    ) -> None:
        self.config = config or EntityGraphConfig()
        self._limits = self.config.limits()
        self._rows: dict[int, tuple[str, list[str], int]] = {}
        self._graph: EntityGraph | None = None
        self._lock = threading.Lock()
        self._conn = conn

    def __len__(self) -> int:
        return len(self._rows)

    # ------------------------------------------------------------------ DerivedIndex

    def catch_up(self, changes: ChangeLog) -> None:
        rows: dict[int, tuple[str, list[str], int]] = {}
        cursor = changes.conn.execute(_ROWS)
        while batch := cursor.fetchmany(5_000):
            for rowid, title, text, chunk_id in batch:
                rows[rowid] = graph_row(chunk_id, title, text, self._limits)
        with self._lock:
            self._rows, self._graph = rows, None

    def apply(self, written: Written) -> None:
        added = self._chunk_ids([rowid for rowid, _, _ in written.rows])
        new = {
            rowid: graph_row(added[rowid], title, text, self._limits)
            for rowid, title, text in written.rows
            if rowid in added
        }
        with self._lock:
            for rowid in written.removed:
                self._rows.pop(rowid, None)
            self._rows.update(new)
            self._graph = None

    def pending(self, seq: int, *, final: bool) -> bool:
        return False

    def commit(self, seq: int, *, final: bool) -> None:
        """Nothing on disk: the next open rebuilds from SQLite."""

    def held(self) -> None:
        return None

    def wait(self) -> None:
        """`apply` updates the rows in the write path itself."""

    def close(self) -> None:
        with self._lock:
            self._rows, self._graph = {}, None

    # ------------------------------------------------------------------ reads

    def graph(self) -> EntityGraph:
        with self._lock:
            if self._graph is None:
                self._graph = EntityGraph.build(self._rows[r] for r in sorted(self._rows))
            return self._graph

    def walk(
        self,
        question: str,
        *,
        seeds: Iterable[str] = (),
        k: int = 10,
        exclude: Collection[str] = (),
    ) -> WalkResult:
        return self.graph().walk(
            question_entities(question, self._limits),
            seeds,
            limits=self.config.walk_limits(),
            exclude=exclude,
            k=k,
        )

    def _chunk_ids(self, rowids: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for start in range(0, len(rowids), 10_000):
            part = list(rowids[start : start + 10_000])
            marks = ",".join("?" * len(part))
            found = self._conn().execute(f"{_IDS} WHERE c.id IN ({marks})", part).fetchall()
            out.update(dict(found))
        return out
