"""Opening, creating, migrating and closing the embedded store, and resolving the
embedder and analyzer it is opened with against those it records."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from sift.analysis import Analyzer, default_analyzer
from sift.errors import CorpusError, IncompatibleStoreError
from sift.integrations.embedders import DEFAULT_EMBEDDER, get_embedder
from sift.integrations.stores._closing import release_all, release_quietly
from sift.integrations.stores.fusion import DEFAULT_ALPHA, check_fusion, default_alpha
from sift.integrations.stores.sqlite._connections import Connections
from sift.integrations.stores.sqlite._derived import Derived
from sift.integrations.stores.sqlite._schema import (
    DB_NAME,
    SCHEMA_VERSION,
    create_schema,
    inspect,
    migrate,
    schema_version,
    transaction,
)
from sift.integrations.stores.sqlite._state import Options, State, current_seq, read_meta
from sift.protocols import Embedder

__all__ = [
    "VECTOR_INDEXES",
    "check_options",
    "close",
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
        raise TypeError(f"analyzer must be a sift.analysis.Analyzer, got {type(analyzer).__name__}")
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
    if inspect(path, create=bool(create) and options.writer):
        return _open(path, conns, options, embedder, chunk_tokens)
    # Everything that can be refused is checked before anything is created.
    new_embedder = _resolve_embedder(path, embedder, None)
    size = 512 if chunk_tokens is None else chunk_tokens
    if isinstance(size, bool) or not isinstance(size, int) or size < 8:
        raise ValueError(f"chunk_tokens must be an integer of at least 8, got {size!r}")
    new_analyzer = options.analyzer or default_analyzer()
    if create is True:
        _create(path, conns, new_embedder, size, new_analyzer)
        return _open(path, conns, options, new_embedder, None)
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
        pending=(new_embedder, size, new_analyzer),
    )


def materialise(state: State) -> None:
    """Creates the store on its first write, when it was opened before it existed."""
    if state.pending is None:
        return
    embedder, size, analyzer = state.pending
    if not inspect(state.path, create=True):
        _create(state.path, state.conns, embedder, size, analyzer)
    made = _open(state.path, state.conns, state.options, embedder, None)
    state.analyzer, state.embedder, state.alpha = made.analyzer, made.embedder, made.alpha
    state.dim, state.chunk_tokens, state.seq = made.dim, made.chunk_tokens, made.seq
    state.derived = made.derived
    state.pending = None
    if state.pending_root is not None:
        with transaction(state.conn()) as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('source_root', ?)",
                (state.pending_root,),
            )


def close(state: State) -> None:
    """Saves what must be saved and releases every file and connection; when a step fails
    the others still run, then CorpusError says what failed."""
    with state.write_lock:
        if state.conns.closed:
            return
        if state.derived is None:  # never written to: nothing was opened
            state.conns.closed = True
            return
        steps = state.derived.close_steps(state.conn, state.seq)
        steps.append(("closing SQLite", state.conns.close_all))
        try:
            release_all(f"store {state.path}", steps)
        finally:
            state.conns.closed = True


def release_after_failed_open(path: Path, conns: Connections | None) -> None:
    """What a failed open had opened (the derived indexes release themselves)."""
    if conns is not None:
        release_quietly(f"store {path}", [("closing SQLite", conns.close_all)])
        conns.closed = True


def _open(
    path: Path,
    conns: Connections,
    options: Options,
    embedder: Embedder | str | None,
    chunk_tokens: int | None,
) -> State:
    conn = conns.get()
    if options.writer:
        migrate(conn)
    elif schema_version(conn) != str(SCHEMA_VERSION):
        raise IncompatibleStoreError(
            f"store {path} has schema version {schema_version(conn)!r}, not "
            f"{SCHEMA_VERSION}; open it for writing once (any `sift index`) to migrate it"
        )
    meta = read_meta(conn)
    analyzer = _resolve_analyzer(path, conns, options, meta)
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
        seq=current_seq(conn),
    )
    with state.write_lock:
        state.derived = Derived.open(
            path,
            conns.get,
            dim=state.dim,
            analyzer=analyzer,
            writer=options.writer,
            vector_index=options.vector_index,
            ann_threshold=options.ann_threshold,
        )
    return state


def _create(
    path: Path, conns: Connections, embedder: Embedder, chunk_tokens: int, analyzer: Analyzer
) -> None:
    made_dir = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
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
        if made_dir:
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
    path: Path, conns: Connections, options: Options, meta: Mapping[str, str]
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
        conn = conns.get()
        with transaction(conn):
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('analyzer', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (chosen.spec,),
            )
    return chosen
