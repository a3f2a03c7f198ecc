"""What one open embedded store holds, shared by the modules that each do one of its
jobs: `_open` (opening, creating, closing), `_derived` (the indexes derived from SQLite),
`_ingest` (writes) and `_reads` (search, grep and the read API). `SqliteCorpus` is the
facade over them."""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sift.errors import CorpusError, NotAStoreError
from sift.integrations.stores.sqlite._connections import Connections
from sift.integrations.stores.sqlite._filtering import FilterCache
from sift.integrations.stores.sqlite._writer import WriterLock

if TYPE_CHECKING:
    from sift.integrations.stores.sqlite._derived import Derived
    from sift.protocols import Embedder
    from sift.text import Analyzer

__all__ = ["Options", "State", "current_seq", "read_meta"]


@dataclass(frozen=True, slots=True)
class Options:
    """The store's options, checked (`_open.check_options`); see `SqliteCorpus`."""

    fusion: str
    hybrid_candidates: int
    max_query_chars: int
    max_pattern_chars: int
    batch_docs: int
    lexical_commit_chunks: int
    vector_index: str
    ann_threshold: int
    writer: bool
    alpha: float | None
    analyzer: Analyzer | None
    entity_graph: bool | None = None  # None: as the store's folder says (`entities.json`)


@dataclass(slots=True, eq=False)
class State:
    """One open store. Until its first write, a store opened where none exists
    (create="on_write") is `pending`: the embedder, chunk size and analyzer it will be
    made with, and no `derived` indexes yet."""

    path: Path
    options: Options
    conns: Connections
    embedder: Embedder
    analyzer: Analyzer
    alpha: float
    dim: int
    chunk_tokens: int
    writer_lock: WriterLock
    seq: int = 0
    derived: Derived | None = None
    # Whether the derived indexes were opened to be written (under the writer lock);
    # False when another process held it, or their files could not be written.
    derived_writable: bool = False
    pending: tuple[Embedder, int, Analyzer] | None = None
    pending_root: str | None = None
    write_lock: threading.RLock = field(default_factory=threading.RLock)
    # The chunks recent filters allow (`_filtering`), by change sequence.
    filters: FilterCache = field(default_factory=FilterCache)

    def conn(self) -> sqlite3.Connection:
        """This thread's SQLite connection."""
        return self.conns.get()

    def indexes(self) -> Derived:
        """The derived indexes of a store that exists (not `pending`)."""
        if self.derived is None:
            raise CorpusError(f"store {self.path} has no derived indexes open")
        return self.derived

    def check_writer(self) -> None:
        if self.conns.read_only:
            raise CorpusError(
                f"store {self.path} is read-only (its folder cannot be written): it can be "
                "searched, not written; copy it somewhere writable to change it"
            )
        if not self.options.writer:
            raise CorpusError(
                f"store {self.path} is opened for reading (writer=False); write through "
                "the process that opened it for writing"
            )

    def require(self) -> None:
        """Reads need a store: one never written to does not exist yet."""
        if self.pending is not None:
            raise NotAStoreError(
                f"no sift store at {self.path} (nothing has been indexed there); "
                "create one with `sift index`, or check the path"
            )


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def current_seq(conn: sqlite3.Connection) -> int:
    """The change log's last sequence number (AUTOINCREMENT's counter: never reused)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()
    return int(row[0]) if row else 0
