"""The SQLite file that is the store's source of truth, and how a path is recognised.

`changes` is the store's history: every chunk added or removed gets a strictly increasing
sequence number in the same transaction as the chunk itself. Derived indexes record the
last sequence they hold and replay the rest on open. Entries every derived index already
holds are pruned; `log_floor` in `meta` remembers how far, so an index older than the
pruned history is rebuilt instead of replayed.

Version 2 dropped version 1's FTS5 trigram table (grep's pre-filter, now trigram
signatures beside the database). Version 3 added `fields`, each document's metadata as
rows that filters are answered from (`_filtering`). `migrate` brings an older store to
version 3 when it is opened for writing; version 2 is read as it is (filters then judge
each result after ranking, as version 2 did), so a sift that does not keep `fields`
never writes a store that has it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from sift.errors import (
    CorpusError,
    IncompatibleStoreError,
    NotAStoreError,
    StoreDamagedError,
    StoreLockedError,
)
from sift.integrations.stores.sqlite._filtering import FIELDS_DDL, fill_fields

__all__ = [
    "DB_NAME",
    "FORMAT",
    "LOCK_NAME",
    "OP_ADD",
    "OP_DELETE",
    "READS_AS_IS",
    "SCHEMA_VERSION",
    "connect",
    "connect_read",
    "inspect",
    "migrate",
    "read_only",
    "schema_version",
    "store_error",
]

DB_NAME = "sift.db"
# The writer lock's file (`_writer`): a folder holding only it is still an empty one.
LOCK_NAME = "writer.lock"
FORMAT = "sift-store"
SCHEMA_VERSION = 3
# Older versions this sift opens, migrating them (`migrate`).
_MIGRATES = ("1", "2")
# Older versions this sift also reads without migrating (a read-only folder).
READS_AS_IS = ("2",)
OP_ADD = 1
OP_DELETE = 2

_SQLITE_MAGIC = b"SQLite format 3\x00"

DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    hash TEXT NOT NULL,
    metadata TEXT NOT NULL,
    n_chunks INTEGER NOT NULL
);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    doc INTEGER NOT NULL REFERENCES documents(id),
    idx INTEGER NOT NULL,
    text TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    UNIQUE (doc, idx)
);
CREATE TABLE vectors (id INTEGER PRIMARY KEY, v BLOB NOT NULL);
CREATE TABLE changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    op INTEGER NOT NULL,
    chunk INTEGER NOT NULL
);
"""


def connect(db_path: Path, *, read_only_folder: bool = False) -> sqlite3.Connection:
    """A connection to the store's file; `read_only_folder`: the file is only read (a
    read-only mount, or a folder this process may not write: `connect_read`)."""
    if read_only_folder:
        conn = connect_read(db_path, check_same_thread=False)
        conn.execute("PRAGMA cache_size = -65536")
        return conn
    conn = sqlite3.connect(str(db_path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 30000")
    # WAL: readers never block the writer; NORMAL sync keeps every committed transaction
    # across a process crash (only an OS crash may lose the last ones, never consistency).
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -65536")
    # Checkpoint the WAL into the database every 40 MB rather than 4 MB: an ingest's
    # commits wait for a checkpoint's fsync ten times less often (measured: commits
    # 14 -> 8 us a chunk).
    conn.execute("PRAGMA wal_autocheckpoint = 10000")
    return conn


def inspect(path: Path, *, create: bool) -> bool:
    """True when `path` holds a sift store, False when one may be created there.

    Raises NotAStoreError for anything else, without modifying what is there.
    """
    db = path / DB_NAME
    if path.is_file() or (path.exists() and not path.is_dir()):
        raise NotAStoreError(f"{path} is a file, not a sift store (a store is a directory)")
    if not path.exists():
        if not create:
            raise NotAStoreError(f"no sift store at {path}; create one with `sift index`")
        return False
    if not db.exists():
        if any(p.name != LOCK_NAME for p in path.iterdir()):
            raise NotAStoreError(
                f"{path} is a directory with other files and no {DB_NAME}; it is not a "
                "sift store. Choose a new or empty directory."
            )
        if not create:
            raise NotAStoreError(f"no sift store at {path}; create one with `sift index`")
        return False
    _check_db(db)
    return True


def connect_read(db: Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection that only reads `db` and sees every committed transaction, those
    still in its write-ahead log (`-wal`) too.

    On a folder this process can write, plain `mode=ro`. On one it cannot (a read-only
    mount, no permission), SQLite cannot make the `-shm` file a WAL reader needs
    (https://www.sqlite.org/wal.html, "Read-Only Databases"), so, by what lies there:
    - no `-wal`, or an empty one: everything is in the database file, read as
      `immutable` (no lock, no `-shm`);
    - a `-wal` and a readable `-shm`: `mode=ro`, which reads both (SQLite 3.22+), and
      keeps seeing what a process that may write there (the owner) commits later;
    - a `-wal` without a `-shm` (a copy of a live store, or one whose writer died): no
      process has the store open (each keeps its `-shm` while it does), so the log is
      read through an index in this connection's memory: exclusive locking mode, on
      the lock-free VFS (its locks could not be taken on a file opened read-only).
      `immutable` here used to hide every transaction still in the log."""
    flags, heap_index = _read_flags(db)
    conn = sqlite3.connect(
        f"file:{quote(str(db))}?{flags}",
        uri=True,
        isolation_level=None,
        check_same_thread=check_same_thread,
    )
    if heap_index:
        # Before the first read: only then does SQLite keep the WAL index in memory.
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
    return conn


def _read_flags(db: Path) -> tuple[str, bool]:
    """The URI flags `connect_read` opens `db` with, and whether the WAL index is kept
    in the connection's memory."""
    if not read_only(db.parent):
        return "mode=ro", False
    try:
        wal = os.stat(f"{db}-wal").st_size
    except OSError:
        wal = 0
    if wal == 0:
        return "mode=ro&immutable=1", False
    if os.access(f"{db}-shm", os.R_OK):
        return "mode=ro", False
    return "mode=ro&vfs=unix-none", True


def read_only(folder: Path) -> bool:
    """Whether this process cannot write in `folder` (a read-only mount, or no
    permission; root passes permission checks, not a read-only mount)."""
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return False
    return not os.access(folder, os.W_OK)


def store_error(exc: sqlite3.Error, db: Path) -> Exception:
    """What a SQLite failure on the store's file is, and what to do about it."""
    text = str(exc)
    store = db.parent
    if "locked" in text or "busy" in text:
        return StoreLockedError(
            f"store {store}: its database is locked by another process ({text}); wait for "
            "the other writer to finish, then run this again"
        )
    if "readonly" in text or "read-only" in text:
        return CorpusError(
            f"store {store} is read-only ({text}): it can be searched, not written; copy "
            "it somewhere writable to change it"
        )
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return StoreDamagedError(
            f"store {store} is damaged: {db.name} is a corrupt SQLite file ({text}); "
            "restore it from a backup, or index the documents again into a new store"
        )
    if "unable to open" in text or "disk I/O" in text:
        return CorpusError(
            f"store {store}: {db.name} cannot be opened ({text}); check that the file and "
            "its folder are readable (and writable, to write)"
        )
    if "no such table" in text:
        return NotAStoreError(f"{db} is a SQLite database but not a sift store ({text})")
    return CorpusError(f"store {store}: SQLite failed on {db.name}: {text}")


def _check_db(db: Path) -> None:
    try:
        with open(db, "rb") as handle:
            magic = handle.read(16)
    except OSError as exc:
        raise NotAStoreError(f"{db} cannot be read: {exc}") from None
    if magic == bytes(len(_SQLITE_MAGIC)) and len(magic) == len(_SQLITE_MAGIC):
        # A zeroed first page is a damaged store's database, not some other file.
        raise StoreDamagedError(
            f"store {db.parent} is damaged: {db.name} begins with zeroed bytes where "
            "SQLite's header belongs; restore it from a backup, or index the documents "
            "again into a new store"
        )
    if magic != _SQLITE_MAGIC:
        raise NotAStoreError(f"{db} is not a SQLite database, so {db.parent} is not a sift store")
    conn = connect_read(db)
    try:
        rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise store_error(exc, db) from None
    finally:
        conn.close()
    if rows.get("format") != FORMAT:
        raise NotAStoreError(f"{db} is a SQLite database but not a sift store")
    version = rows.get("schema_version")
    if version != str(SCHEMA_VERSION) and version not in _MIGRATES:
        raise IncompatibleStoreError(
            f"store {db.parent} has schema version {version}, this sift reads version "
            f"{SCHEMA_VERSION}; re-index the documents into a new store with this version"
        )


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction, taken up front (IMMEDIATE) so it never fails half-way for
    want of the write lock; rolled back on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def create_schema(conn: sqlite3.Connection, meta: dict[str, str]) -> None:
    with transaction(conn):
        for statement in (DDL + FIELDS_DDL).split(";"):
            if statement.strip():
                conn.execute(statement)
        values = {"format": FORMAT, "schema_version": str(SCHEMA_VERSION), "log_floor": "0"}
        values.update(meta)
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", values.items())


def migrate(conn: sqlite3.Connection) -> None:
    """Brings a store of an older schema version to this one (a no-op when it is)."""
    if _version(conn) == str(SCHEMA_VERSION):
        return
    with transaction(conn):
        if _version(conn) in _MIGRATES:
            # Version 1 -> 2: grep's trigram table gives way to the signature file, which
            # the store builds from the chunks when it finds none. (SQLite reuses the
            # table's pages; VACUUM gives them back to the file system.)
            conn.execute("DROP TABLE IF EXISTS grep")
            # 2 -> 3: the metadata rows filters are answered from.
            fill_fields(conn)
            conn.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),)
            )


def schema_version(conn: sqlite3.Connection) -> str:
    """The schema version a store records ("" when none)."""
    return _version(conn)


def _version(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return str(row[0]) if row else ""
