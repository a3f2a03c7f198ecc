"""What the derived indexes are handed (`_derived`): SQLite's change log as an index
catching up sees it (`ChangeLog`), what one committed transaction changed (`Written`),
and the methods every derived index has (`DerivedIndex`). A module of their own, so
that the indexes and `_derived`, which opens them, import it and not each other."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from sift.integrations.stores.sqlite._state import current_seq, read_meta

__all__ = ["ChangeLog", "DerivedIndex", "Written"]


@dataclass(frozen=True, slots=True)
class ChangeLog:
    """SQLite's change log as an index catching up sees it."""

    conn: sqlite3.Connection
    seq: int  # SQLite's last change
    floor: int  # the log holds every change past this one
    writer: bool  # False: this process may not write any index's files

    @classmethod
    def read(cls, conn: sqlite3.Connection, *, writer: bool) -> ChangeLog:
        floor = int(read_meta(conn).get("log_floor", "0"))
        return cls(conn, current_seq(conn), floor, writer)

    def covers(self, held: int) -> bool:
        """Whether an index holding changes up to `held` can catch up by replay (else it
        is rebuilt from SQLite: the log was pruned past it, or it is from another store)."""
        return self.floor <= held <= self.seq

    def chunks_since(self, held: int) -> list[int]:
        """The chunk rowids changed after `held`, in the log's order (with repeats)."""
        return [
            row[0]
            for row in self.conn.execute(
                "SELECT chunk FROM changes WHERE seq > ? ORDER BY seq", (held,)
            )
        ]


@dataclass(frozen=True, slots=True)
class Written:
    """What one committed transaction changed, for every derived index."""

    removed: list[int]  # chunk rowids deleted (a changed document's old chunks too)
    rowids: np.ndarray  # chunk rowids added, ascending
    vectors: np.ndarray  # their L2-normalised vectors, row for row
    rows: list[tuple[int, str, str]]  # (rowid, title, text) of the added chunks
    # Their chunk ids ("<doc id>_<index>"), row for row: the entity index keys its rows
    # by them, and the writer has them at hand (it asked SQLite again, batch by batch).
    chunk_ids: list[str]
    # Their documents' metadata, row for row (one object per document): the BM25 index
    # keeps its text values as terms for filters.
    metadata: list[Mapping[str, Any]] = field(default_factory=list)


class DerivedIndex(Protocol):
    """One index derived from SQLite (see the module's docstring)."""

    closing: str  # the close step, as a failure to close names it

    def catch_up(self, changes: ChangeLog) -> None:
        """On open: brings the index to `changes.seq`, by replay or rebuild."""

    def apply(self, written: Written) -> None:
        """Takes a committed write (its work may be queued: `wait`)."""

    def pending(self, seq: int, *, final: bool) -> bool:
        """Whether `record(seq)` has something to make durable for this index (`final`:
        the store is closing)."""

    def commit(self, seq: int, *, final: bool) -> None:
        """Makes durable what the index holds up to `seq`, where `pending` says so."""

    def held(self) -> int | None:
        """The change sequence the index holds on disk, or None when it keeps no place
        in the log (it lives in memory, or tracks chunk rowids itself)."""

    def wait(self) -> None:
        """Returns once every write handed to the index is searchable."""

    def close(self) -> None:
        """Releases the index's files and threads."""
