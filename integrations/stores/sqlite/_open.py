"""Opening, creating, migrating and closing the embedded store, and resolving the
embedder and analyzer it is opened with against those it records."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Literal

from sift.errors import (
    CorpusError,
    IncompatibleStoreError,
    IndexDamagedError,
    NotAStoreError,
    StoreDamagedError,
    StoreFullError,
    StoreLockedError,
)
from sift.fusion import DEFAULT_ALPHA, check_fusion, default_alpha
from sift.integrations.embedders import DEFAULT_EMBEDDER, get_embedder
from sift.integrations.stores._closing import release_all, release_quietly
from sift.integrations.stores.sqlite._connections import Connections
from sift.integrations.stores.sqlite._damage import INDEX_KINDS, IndexKind
from sift.integrations.stores.sqlite._derived import ENTITY_RECORD, Derived
from sift.integrations.stores.sqlite._schema import (
    DB_NAME,
    LOCK_NAME,
    READS_AS_IS,
    SCHEMA_VERSION,
    create_schema,
    inspect,
    migrate,
    schema_version,
    store_error,
    transaction,
)
from sift.integrations.stores.sqlite._state import Options, State, current_seq, read_meta
from sift.integrations.stores.sqlite._writer import WriterLock
from sift.protocols import Embedder
from sift.text import Analyzer, default_analyzer

__all__ = [
    "VECTOR_INDEXES",
    "begin_write",
    "check_options",
    "close",
    "heal",
    "materialise",
    "open_state",
    "release_after_failed_open",
]

log = logging.getLogger("sift.integrations.stores")

VECTOR_INDEXES = ("auto", "exact", "ann")


def check_options(
    *,
    fusion: str,
    alpha: float | None,
    analyzer: Analyzer | None,
    hybrid_candidates: int,
    max_query_chars: int,
    max_pattern_chars: int,
    batch_docs: int,
    lexical_commit_chunks: int,
    vector_index: str,
    ann_threshold: int,
    writer: bool,
    entity_graph: bool | None = None,
) -> Options:
    """The options of `SqliteCorpus`, checked before anything is opened."""
    if vector_index not in VECTOR_INDEXES:
        raise ValueError(
            f"unknown vector_index {vector_index!r}; valid: {', '.join(VECTOR_INDEXES)}"
        )
    fusion, _ = check_fusion(fusion, DEFAULT_ALPHA if alpha is None else alpha)
    if hybrid_candidates < 1:
        raise ValueError(f"hybrid_candidates must be at least 1, got {hybrid_candidates!r}")
    if batch_docs < 1:
        raise ValueError(f"batch_docs must be at least 1, got {batch_docs!r}")
    if analyzer is not None and not isinstance(analyzer, Analyzer):
        raise TypeError(f"analyzer must be a sift.text.Analyzer, got {type(analyzer).__name__}")
    return Options(
        fusion=fusion,
        hybrid_candidates=hybrid_candidates,
        max_query_chars=max_query_chars,
        max_pattern_chars=max_pattern_chars,
        batch_docs=batch_docs,
        lexical_commit_chunks=lexical_commit_chunks,
        vector_index=vector_index,
        ann_threshold=ann_threshold,
        writer=bool(writer),
        alpha=alpha,
        analyzer=analyzer,
        entity_graph=None if entity_graph is None else bool(entity_graph),
    )


def open_state(
    path: Path,
    conns: Connections,
    options: Options,
    *,
    embedder: Embedder | str | None,
    create: bool | Literal["on_write"],
    chunk_tokens: int | None,
) -> State:
    """Opens the store at `path`, creating it first (`create=True`) or at its first
    write (`"on_write"`: the state is `pending` until then) where none exists."""
    lock = WriterLock(path)
    if _inspect(path, create=bool(create) and options.writer, lock=lock):
        return _open(path, conns, options, embedder, chunk_tokens, lock)
    # Everything that can be refused is checked before anything is created.
    new_embedder = _resolve_embedder(path, embedder, None)
    size = 512 if chunk_tokens is None else chunk_tokens
    if isinstance(size, bool) or not isinstance(size, int) or size < 8:
        raise ValueError(f"chunk_tokens must be an integer of at least 8, got {size!r}")
    new_analyzer = options.analyzer or default_analyzer()
    if create is True:
        _create(path, conns, lock, new_embedder, size, new_analyzer)
        return _open(path, conns, options, new_embedder, None, lock)
    alpha = options.alpha
    return State(
        path=path,
        options=options,
        conns=conns,
        embedder=new_embedder,
        analyzer=new_analyzer,
        alpha=default_alpha(new_embedder.name) if alpha is None else float(alpha),
        dim=new_embedder.dim,
        chunk_tokens=size,
        writer_lock=lock,
        pending=(new_embedder, size, new_analyzer),
    )


def _inspect(path: Path, *, create: bool, lock: WriterLock) -> bool:
    """`inspect`, except that a store another process is making (its file not written
    yet) is that process's, named, rather than "not a sift store"."""
    try:
        return inspect(path, create=create)
    except NotAStoreError:
        # A folder without the lock file is nobody's store being made: left untouched.
        if not (path / LOCK_NAME).is_file() or lock.try_acquire():
            lock.release()
            raise
        lock.acquire()  # held by another process: StoreLockedError names it
        raise


def materialise(state: State) -> None:
    """Creates the store on its first write, when it was opened before it existed."""
    if state.pending is None:
        return
    embedder, size, analyzer = state.pending
    if not _inspect(state.path, create=True, lock=state.writer_lock):
        _create(state.path, state.conns, state.writer_lock, embedder, size, analyzer)
    made = _open(state.path, state.conns, state.options, embedder, None, state.writer_lock)
    state.analyzer, state.embedder, state.alpha = made.analyzer, made.embedder, made.alpha
    state.dim, state.chunk_tokens, state.seq = made.dim, made.chunk_tokens, made.seq
    state.derived, state.derived_writable = made.derived, made.derived_writable
    state.pending = None
    if state.pending_root is not None:
        with transaction(state.conn()) as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('source_root', ?)",
                (state.pending_root,),
            )


def begin_write(state: State) -> Derived:
    """What every write does first: makes a store opened before it existed, takes the
    writer lock (StoreLockedError names the process that holds it), and, when the
    derived indexes were opened without it or another process wrote since, opens them
    again, caught up with SQLite; then takes tantivy's writer lock."""
    materialise(state)
    state.writer_lock.acquire()
    seq = current_seq(state.conn())
    if not state.derived_writable or seq != state.seq:
        if state.derived is not None:
            state.derived.discard()
            state.derived = None
        state.seq = seq
        # The lock stays held: released here, another writer could take it before
        # tantivy's lock below, and be refused by tantivy without being told who writes.
        _open_derived(state, keep_lock=True)
        if not state.derived_writable and _disk_full(state.path):
            # Nothing of this write was stored: the same refusal as a disk that fills
            # during the write itself (HTTP 507, the CLI's partial-work exit code).
            raise StoreFullError(
                f"the disk holding the store {state.path} is full: its derived indexes "
                "cannot be written, so nothing of this write was stored; free space, "
                "then run it again",
                0,
            )
        if not state.derived_writable:
            raise CorpusError(
                f"store {state.path}: its derived indexes cannot be written (see the log); "
                "free space on its disk, then run this again"
            )
    derived = state.indexes()
    try:
        derived.lock()
    except IndexDamagedError as damage:
        # Its files were removed under this process: rebuilt, then written.
        heal(state, derived, damage)
        derived = state.indexes()
        derived.lock()
    return derived


def _disk_full(path: Path) -> bool:
    """Whether the disk holding `path` has (almost) no room left: under 1 MiB, the
    margin tantivy and SQLite need for a commit."""
    try:
        return shutil.disk_usage(path).free < 1024 * 1024
    except OSError:
        return False


def keeps_entity_graph(path: Path, asked: bool | None) -> bool:
    """Whether an open keeps the entity graph: as asked, else (None) when the store kept
    one before (its record is in the folder), so that every later open of a store made
    with it, the CLI's and the server's too, keeps it."""
    return asked if asked is not None else (path / ENTITY_RECORD).exists()


def heal(state: State, failed: Derived, damage: IndexDamagedError) -> None:
    """A query found a derived index of `failed` damaged: the indexes are opened again,
    that one rebuilt from SQLite (on disk when this process may write it, else in
    memory), unless another thread has done so since `failed` was taken. CorpusError
    when it cannot be rebuilt."""
    with state.write_lock:
        if state.derived is not failed:
            return  # another thread rebuilt it: the caller asks the new indexes
        log.warning("store %s: %s; rebuilding it from SQLite", state.path, damage)
        failed.discard()
        state.derived = None
        state.seq = current_seq(state.conn())
        try:
            _open_derived(state, rebuild=[k for k in INDEX_KINDS if k == damage.kind])
        except (OSError, ValueError, CorpusError, sqlite3.Error) as exc:
            raise CorpusError(
                f"store {state.path}: {damage}, and rebuilding it from SQLite failed "
                f"({exc}); close every process using the store and open it again"
            ) from None
        log.warning("store %s: the damaged index is rebuilt", state.path)


def _open_derived(
    state: State, *, keep_lock: bool = False, rebuild: Collection[IndexKind] = ()
) -> None:
    """Opens the derived indexes, to be written when this process can take the writer
    lock now, else for reading (another process writes). Indexes whose files cannot be
    written (a full disk) are opened for reading, behind SQLite, and that is logged:
    reading a store never fails on writing its indexes. `rebuild`: indexes found
    damaged, rebuilt from SQLite."""
    options = state.options
    writable = options.writer and not state.conns.read_only and state.writer_lock.try_acquire()

    def opened(writer: bool) -> Derived:
        return Derived.open(
            state.path,
            state.conns.get,
            dim=state.dim,
            analyzer=state.analyzer,
            writer=writer,
            vector_index=options.vector_index,
            ann_threshold=options.ann_threshold,
            lock=state.writer_lock,
            read_only=state.conns.read_only,
            entity_graph=keeps_entity_graph(state.path, options.entity_graph),
            rebuild=rebuild,
        )

    try:
        derived = opened(writable)
    except (OSError, ValueError, CorpusError, sqlite3.Error) as exc:
        if not writable and options.writer and isinstance(exc, CorpusError):
            # Another process holds the lock and is still building the indexes of the
            # store it made: this one would only be refused its writes; say so now.
            state.writer_lock.acquire()
        if not writable or isinstance(exc, StoreLockedError | StoreDamagedError):
            raise
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            # A damaged page, not a full disk: opening for reading cannot help.
            raise store_error(exc, state.path / DB_NAME) from None
        log.warning(
            "store %s: its derived indexes cannot be brought up to date (%s); opened for "
            "reading: searches see the BM25 index as of its last commit. Free space on its "
            "disk and open it again to catch up",
            state.path,
            exc,
        )
        state.writer_lock.release()
        derived, writable = opened(False), False
    state.derived, state.derived_writable = derived, writable
    if writable and not keep_lock and not derived.lexical.writing:
        # Nothing was written: an idle process (a server that has only searched) does
        # not keep other writers out. Its first write takes the lock again.
        state.writer_lock.release()


def close(state: State) -> None:
    """Saves what must be saved and releases every file and connection; when a step fails
    the others still run, then CorpusError says what failed."""
    with state.write_lock:
        if state.conns.closed:
            return
        if state.derived is None:  # never written to: nothing was opened
            state.writer_lock.release()
            state.conns.closed = True
            return
        steps = state.derived.close_steps(state.conn, state.seq)
        steps.append(("closing SQLite", state.conns.close_all))
        steps.append(("releasing the writer lock", state.writer_lock.release))
        try:
            release_all(f"store {state.path}", steps)
        finally:
            state.conns.closed = True


def release_after_failed_open(path: Path, conns: Connections | None) -> None:
    """What a failed open had opened (the derived indexes release themselves)."""
    if conns is not None:
        release_quietly(f"store {path}", [("closing SQLite", conns.close_all)])
        conns.closed = True
    # The lock's descriptor is closed with its WriterLock object; nothing else holds it.


def _open(
    path: Path,
    conns: Connections,
    options: Options,
    embedder: Embedder | str | None,
    chunk_tokens: int | None,
    lock: WriterLock,
) -> State:
    conn = conns.get()
    if options.writer and not conns.read_only and schema_version(conn) != str(SCHEMA_VERSION):
        lock.acquire()  # a migration writes
        migrate(conn)
    elif schema_version(conn) not in (str(SCHEMA_VERSION), *READS_AS_IS):
        raise IncompatibleStoreError(
            f"store {path} has schema version {schema_version(conn)!r}, not "
            f"{SCHEMA_VERSION}; open it for writing once (any `sift index`) to migrate it"
        )
    meta = read_meta(conn)
    analyzer = _resolve_analyzer(path, conns, options, meta, lock)
    resolved = _resolve_embedder(path, embedder, meta)
    recorded_size = int(meta["chunk_tokens"])
    if chunk_tokens is not None and chunk_tokens != recorded_size:
        raise IncompatibleStoreError(
            f"store {path} chunks at {recorded_size} tokens, not {chunk_tokens}; "
            "omit chunk_tokens or index into a new store"
        )
    state = State(
        path=path,
        options=options,
        conns=conns,
        embedder=resolved,
        analyzer=analyzer,
        alpha=default_alpha(resolved.name) if options.alpha is None else float(options.alpha),
        dim=int(meta["dim"]),
        chunk_tokens=recorded_size,
        writer_lock=lock,
        seq=current_seq(conn),
    )
    with state.write_lock:
        _open_derived(state)
    return state


def _create(
    path: Path,
    conns: Connections,
    lock: WriterLock,
    embedder: Embedder,
    chunk_tokens: int,
    analyzer: Analyzer,
) -> None:
    made_dir = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    # Before anything is made: of two processes that found no store, one makes it and
    # the other is refused, naming it (each used to clear `lexical/` for its own).
    lock.acquire()
    db = path / DB_NAME
    if db.exists() and db.stat().st_size == 0:
        db.unlink()  # a process that was making the store died before writing it
    if inspect(path, create=True):
        return  # made by the process that held the lock before this one took it
    try:
        create_schema(
            conns.get(),
            {
                "embedder": embedder.name,
                "dim": str(embedder.dim),
                "chunk_tokens": str(chunk_tokens),
                "analyzer": analyzer.spec,
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
        )
    except BaseException:
        # Leave no half-made store behind: it would later read as "not a sift store".
        release_quietly(f"store {path}", [("closing SQLite", conns.close_all)])
        for suffix in ("", "-wal", "-shm"):
            (path / f"{DB_NAME}{suffix}").unlink(missing_ok=True)
        lock.release()
        if made_dir:
            (path / LOCK_NAME).unlink(missing_ok=True)
            path.rmdir()
        raise


def _resolve_embedder(
    path: Path, embedder: Embedder | str | None, meta: Mapping[str, str] | None
) -> Embedder:
    recorded = meta.get("embedder") if meta else None
    if embedder is None:
        emb = get_embedder(recorded or DEFAULT_EMBEDDER)
    elif isinstance(embedder, str):
        emb = get_embedder(embedder)
    else:
        emb = embedder
    if meta is not None and (emb.name != recorded or str(emb.dim) != meta.get("dim")):
        raise CorpusError(
            f"store {path} was built with embedder {recorded!r} "
            f"(dim {meta.get('dim')}), not {emb.name!r} (dim {emb.dim}); open it with "
            f"embedder={recorded!r} or index into a new store"
        )
    return emb


def _resolve_analyzer(
    path: Path, conns: Connections, options: Options, meta: Mapping[str, str], lock: WriterLock
) -> Analyzer:
    """The analyzer to use, recorded in `meta` (the BM25 index compares it with the one
    it was built with, and rebuilds itself from SQLite when they differ)."""
    recorded = meta.get("analyzer")
    chosen = options.analyzer
    if chosen is None and recorded is not None:
        try:
            chosen = Analyzer.from_spec(recorded)
        except ValueError as exc:
            log.warning("store %s: %s; rebuilding it with the default analyzer", path, exc)
    if chosen is None:
        chosen = default_analyzer()
    if chosen.spec != recorded and not options.writer:
        raise IncompatibleStoreError(
            f"store {path} records the analyzer {recorded!r}, not {chosen.spec!r}; "
            "a store opened for reading (writer=False) cannot change it"
        )
    if chosen.spec != recorded:
        if recorded is not None:
            log.warning(
                "store %s: the analyzer changes from %s to %s; the BM25 index is "
                "rebuilt from SQLite",
                path,
                recorded,
                chosen.spec,
            )
        # Recording it is a write, so it takes the writer lock like any other: a process
        # writing the store with the old analyzer refuses this open, naming itself,
        # instead of finding its BM25 index out of step with the recorded analyzer.
        lock.acquire()
        conn = conns.get()
        with transaction(conn):
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('analyzer', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (chosen.spec,),
            )
    return chosen
