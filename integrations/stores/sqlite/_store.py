"""The embedded corpus store: one SQLite file as the source of truth, with a tantivy BM25
index, a dense vector index (exact in memory, or HNSW) and grep's trigram signatures
derived from it.

Write path (under one lock): chunk and embed a batch of documents outside any
transaction, then one SQLite transaction writes documents, chunks, vectors and
change-log entries; only after COMMIT are the derived indexes updated. A crash at any
point leaves SQLite whole (each document entirely in or out) and the derived indexes
behind at worst, and opening the store replays what they miss.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from sift.analysis import Analyzer, default_analyzer
from sift.errors import CorpusError, DocumentError, IncompatibleStoreError, NotAStoreError
from sift.filters import Filter, matches
from sift.integrations.embedders import DEFAULT_EMBEDDER, get_embedder
from sift.integrations.stores._checks import (
    DEFAULT_MAX_QUERY_CHARS,
    check_doc_id,
    check_grep,
    check_ids,
    check_search,
)
from sift.integrations.stores._closing import (
    close_on_exit,
    release_all,
    release_quietly,
    released_on_failure,
)
from sift.integrations.stores._documents import (
    Chunked,
    Item,
    PreparedDocument,
    assemble,
    coerce_document,
    content_hash,
    items_of,
)
from sift.integrations.stores._embedding import dense_weight, embed_query
from sift.integrations.stores.catalog import DocumentInfo
from sift.integrations.stores.fusion import (
    DEFAULT_ALPHA,
    DEFAULT_FUSION,
    check_fusion,
    default_alpha,
    fuse,
)
from sift.integrations.stores.locations import chunk_metadata
from sift.integrations.stores.patterns import DEFAULT_MAX_PATTERN_CHARS, literal_fragments
from sift.integrations.stores.sqlite._grep import grep_rowids
from sift.integrations.stores.sqlite._lexical import LexicalIndex
from sift.integrations.stores.sqlite._prepare import Preparer
from sift.integrations.stores.sqlite._schema import (
    DB_NAME,
    OP_ADD,
    OP_DELETE,
    SCHEMA_VERSION,
    connect,
    create_schema,
    inspect,
    migrate,
    schema_version,
    transaction,
)
from sift.integrations.stores.sqlite._trigrams import TrigramIndex, trigram_bits
from sift.integrations.stores.sqlite._vectors import ExactVectors
from sift.protocols import Embedder
from sift.types import (
    Chunk,
    CorpusStats,
    Document,
    DocumentFailure,
    GrepResult,
    Hit,
    SearchMode,
    UpsertReport,
)

if TYPE_CHECKING:
    # Imported when a store needs it (usearch takes a while to import).
    from sift.integrations.stores.sqlite._ann import AnnVectors

__all__ = ["SqliteCorpus"]

log = logging.getLogger("sift.integrations.stores")

_VECTOR_INDEXES = ("auto", "exact", "ann")
_ANN_FILE = "vectors.usearch"
_TRIGRAM_FILE = "trigrams.bin"
# Batches chunked and embedded ahead of the one being written: one for each of the two
# children of a long ingest, and one more so neither waits while a batch is written.
_IN_FLIGHT = 3
# Documents into one upsert after which chunking and embedding move to a child process,
# for an embedder that holds the GIL while it embeds (a child's start-up, a third of a
# second of CPU, is paid back past about a thousand documents).
_SPAWN_AFTER = 1024
# json.dumps(metadata, ensure_ascii=False), with the encoder built once.
_METADATA_JSON = json.JSONEncoder(ensure_ascii=False)
# The HNSW graph is saved to disk at most this often during ingest (and on close); in
# between, a crash costs a replay of the change log, never data.
_ANN_SAVE_EVERY = 250_000
_CHUNK_SQL = (
    "SELECT c.id, c.idx, c.text, c.start, c.end, d.doc_id, d.title, d.metadata "
    "FROM chunks c JOIN documents d ON d.id = c.doc "
)


class SqliteCorpus:
    """A sift store in a directory (`sift.db` plus derived indexes beside it).

    Args:
        path: the store directory; created when absent (unless `create=False`).
        embedder: an Embedder, or a name for `get_embedder`; None uses the one recorded in
            the store, or `DEFAULT_EMBEDDER` for a new store.
        create: create a store when `path` is absent or an empty directory: True now,
            "on_write" at the first write (until then every read is NotAStoreError naming
            the path, so a mistyped path never reads as an empty store; `open_store`'s
            default), False never.
        fusion: hybrid fusion strategy, one of `fusion_names()` ("relative_score", "rrf").
        alpha: weight of dense scores in hybrid fusion; 0 is BM25 only, 1 dense only;
            None takes the tuned default of the embedder (`default_alpha`).
        chunk_tokens: chunk size for new stores (a store keeps the size it was made with).
        analyzer: how text becomes BM25 terms (`sift.analysis.Analyzer`); None uses the
            one recorded in the store, or `default_analyzer()` for a new store (or one
            made before analyzers were recorded). Another analyzer than the recorded one
            is recorded instead and the BM25 index rebuilt from SQLite (nothing else
            changes; see docs/languages.md).
        hybrid_candidates: how many results of each list hybrid search fuses.
        max_query_chars / max_pattern_chars: input limits for search and grep.
        batch_docs: documents per ingest transaction.
        spawn_after: documents into one upsert after which chunking and embedding move
            to a child process (a second core for them; 0 keeps them in a thread); a
            second child joins it after eight times as many, on two cores or more.
            None (the default): 1,024, unless the embedder releases the GIL while it
            embeds (its `releases_gil` is True, as the static embedder's is when built
            with its C part): then a thread beside the writer is as fast as children
            and costs a fifth to a quarter less CPU, so no child is started
            (benchmarks/results/store_speed.md).
        writer: False opens an existing store for reading beside the process that writes
            it (`sift serve`'s search processes): nothing on disk is written (no derived
            index is repaired or saved, the analyzer and schema are taken as recorded)
            and writes raise CorpusError. It sees the store as of its opening, up to the
            writer's last BM25 commit; open it again to see later writes.
    """

    @released_on_failure
    def __init__(
        self,
        path: str | Path,
        *,
        embedder: Embedder | str | None = None,
        create: bool | Literal["on_write"] = True,
        fusion: str = DEFAULT_FUSION,
        alpha: float | None = None,
        chunk_tokens: int | None = None,
        analyzer: Analyzer | None = None,
        hybrid_candidates: int = 100,
        max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
        max_pattern_chars: int = DEFAULT_MAX_PATTERN_CHARS,
        batch_docs: int = 512,
        lexical_commit_chunks: int = 100_000,
        vector_index: str = "auto",
        ann_threshold: int = 300_000,
        spawn_after: int | None = None,
        writer: bool = True,
    ) -> None:
        if vector_index not in _VECTOR_INDEXES:
            raise ValueError(
                f"unknown vector_index {vector_index!r}; valid: {', '.join(_VECTOR_INDEXES)}"
            )
        self._vector_index = vector_index
        self._ann_threshold = ann_threshold
        self._fusion, _ = check_fusion(fusion, DEFAULT_ALPHA if alpha is None else alpha)
        if hybrid_candidates < 1:
            raise ValueError(f"hybrid_candidates must be at least 1, got {hybrid_candidates!r}")
        if batch_docs < 1:
            raise ValueError(f"batch_docs must be at least 1, got {batch_docs!r}")
        if analyzer is not None and not isinstance(analyzer, Analyzer):
            raise TypeError(
                f"analyzer must be a sift.analysis.Analyzer, got {type(analyzer).__name__}"
            )
        self._path = Path(path).expanduser().resolve()
        self._hybrid_candidates = hybrid_candidates
        self._max_query_chars = max_query_chars
        self._max_pattern_chars = max_pattern_chars
        self._batch_docs = batch_docs
        self._lexical_commit_chunks = lexical_commit_chunks
        self._spawn_after = spawn_after
        self._writer = bool(writer)
        self._write_lock = threading.RLock()
        self._local = threading.local()
        # Every thread's connection, with its thread: a connection whose thread has ended
        # is closed when the next one is opened (episodes run store calls on short-lived
        # pools, and each connection holds up to 64 MB of page cache).
        self._conns: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._conns_lock = threading.Lock()
        self._closed = False

        self._alpha_option = alpha
        self._analyzer_option = analyzer
        # With create="on_write", a store opened where none exists yet is made by its
        # first write, so a mistyped path that is only read from fails with its name.
        self._pending: tuple[Embedder, int, Analyzer] | None = None
        self._pending_root: str | None = None
        if not inspect(self._path, create=bool(create) and self._writer):
            # Everything that can be refused is checked before anything is created.
            new_embedder = self._resolve_embedder(embedder, None)
            size = 512 if chunk_tokens is None else chunk_tokens
            if isinstance(size, bool) or not isinstance(size, int) or size < 8:
                raise ValueError(f"chunk_tokens must be an integer of at least 8, got {size!r}")
            new_analyzer = analyzer or default_analyzer()
            if create is True:
                self._create(new_embedder, size, new_analyzer)
                self._open(new_embedder, None)
                return
            self._pending = (new_embedder, size, new_analyzer)
            self._embedder = new_embedder
            self._analyzer = new_analyzer
            self._alpha = default_alpha(new_embedder.name) if alpha is None else float(alpha)
            self._dim = new_embedder.dim
            self._chunk_tokens = size
            self._seq = 0
            return
        self._open(embedder, chunk_tokens)

    def _open(self, embedder: Embedder | str | None, chunk_tokens: int | None) -> None:
        conn = self._conn()
        if self._writer:
            migrate(conn)
        elif schema_version(conn) != str(SCHEMA_VERSION):
            raise IncompatibleStoreError(
                f"store {self._path} has schema version {schema_version(conn)!r}, not "
                f"{SCHEMA_VERSION}; open it for writing once (any `sift index`) to migrate it"
            )
        meta = self._meta()
        self._analyzer = self._resolve_analyzer(self._analyzer_option, meta)
        self._embedder = self._resolve_embedder(embedder, meta)
        alpha = self._alpha_option
        self._alpha = default_alpha(self._embedder.name) if alpha is None else float(alpha)
        self._dim = int(meta["dim"])
        self._chunk_tokens = int(meta["chunk_tokens"])
        if chunk_tokens is not None and chunk_tokens != self._chunk_tokens:
            raise IncompatibleStoreError(
                f"store {self._path} chunks at {self._chunk_tokens} tokens, not {chunk_tokens}; "
                "omit chunk_tokens or index into a new store"
            )
        self._seq = self._current_seq(conn)
        with self._write_lock:
            # Vectors first: the lexical catch-up prunes the change log, and must see what
            # the HNSW graph still needs from it.
            (count,) = conn.execute("SELECT count(*) FROM vectors").fetchone()
            self._vectors: ExactVectors | AnnVectors
            if self._vector_index == "ann" or (
                self._vector_index == "auto"
                and (count >= self._ann_threshold or (self._path / _ANN_FILE).exists())
            ):
                self._vectors = self._open_ann()
            else:
                self._vectors = ExactVectors(self._dim)
                self._vectors.load(conn)
            self._lexical = LexicalIndex(
                self._path / "lexical", self._analyzer, writable=self._writer
            )
            self._catch_up_lexical()
            self._trigrams = TrigramIndex(self._path / _TRIGRAM_FILE, self._may_write)
            self._trigrams.load(conn)

    def _materialise(self) -> None:
        """Creates the store on its first write, when it was opened before it existed."""
        if self._pending is None:
            return
        embedder, size, analyzer = self._pending
        if not inspect(self._path, create=True):
            self._create(embedder, size, analyzer)
        self._open(embedder, None)
        self._pending = None
        if self._pending_root is not None:
            self.record_source_root(self._pending_root)

    def _check_writer(self) -> None:
        if not self._writer:
            raise CorpusError(
                f"store {self._path} is opened for reading (writer=False); write through "
                "the process that opened it for writing"
            )

    def _require(self) -> None:
        """Reads need a store: one never written to does not exist yet."""
        if self._pending is not None:
            raise NotAStoreError(
                f"no sift store at {self._path} (nothing has been indexed there); "
                "create one with `sift index`, or check the path"
            )

    # ------------------------------------------------------------------ plumbing

    def _create(self, embedder: Embedder, chunk_tokens: int, analyzer: Analyzer) -> None:
        made_dir = not self._path.exists()
        self._path.mkdir(parents=True, exist_ok=True)
        try:
            create_schema(
                self._conn(),
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
            release_quietly(f"store {self._path}", [("closing SQLite", self._close_connections)])
            for suffix in ("", "-wal", "-shm"):
                (self._path / f"{DB_NAME}{suffix}").unlink(missing_ok=True)
            if made_dir:
                self._path.rmdir()
            raise

    def _close_connections(self) -> None:
        """Closes every thread's connection; the first failure is raised after all were
        tried."""
        failed: list[sqlite3.Error] = []
        with self._conns_lock:
            for _, conn in self._conns:
                try:
                    conn.close()
                except sqlite3.Error as exc:
                    failed.append(exc)
            self._conns.clear()
        self._local = threading.local()
        if failed:
            raise failed[0]

    def _release_after_failed_open(self) -> None:
        """What `__init__` opened before it failed: the BM25 index (its writer lock) and
        the SQLite connections."""
        steps: list[tuple[str, Callable[[], object]]] = []
        lexical: LexicalIndex | None = getattr(self, "_lexical", None)
        if lexical is not None:
            steps.append(("closing the BM25 index", lexical.close))
        if hasattr(self, "_conns"):
            steps.append(("closing SQLite", self._close_connections))
        release_quietly(f"store {getattr(self, '_path', '')}", steps)
        self._closed = True

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise CorpusError(f"store {self._path} is closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self._path / DB_NAME)
            self._local.conn = conn
            with self._conns_lock:
                self._close_ended_threads_connections()
                self._conns.append((threading.current_thread(), conn))
        return conn

    def _close_ended_threads_connections(self) -> None:
        """Closes the connections whose threads have ended (no thread uses them again:
        each thread only ever uses its own). Called with `_conns_lock` held."""
        alive: list[tuple[threading.Thread, sqlite3.Connection]] = []
        for thread, conn in self._conns:
            if thread.is_alive():
                alive.append((thread, conn))
                continue
            try:
                conn.close()
            except sqlite3.Error:
                # The connection is dropped either way; nothing of it is left to close.
                log.warning("store %s: closing an ended thread's connection failed", self._path)
        self._conns = alive

    def _meta(self) -> dict[str, str]:
        return dict(self._conn().execute("SELECT key, value FROM meta").fetchall())

    def _resolve_embedder(
        self, embedder: Embedder | str | None, meta: Mapping[str, str] | None
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
                f"store {self._path} was built with embedder {recorded!r} "
                f"(dim {meta.get('dim')}), not {emb.name!r} (dim {emb.dim}); open it with "
                f"embedder={recorded!r} or index into a new store"
            )
        return emb

    def _resolve_analyzer(self, analyzer: Analyzer | None, meta: Mapping[str, str]) -> Analyzer:
        """The analyzer to use, recorded in `meta` (the BM25 index compares it with the
        one it was built with, and rebuilds itself from SQLite when they differ)."""
        recorded = meta.get("analyzer")
        chosen = analyzer
        if chosen is None and recorded is not None:
            try:
                chosen = Analyzer.from_spec(recorded)
            except ValueError as exc:
                log.warning(
                    "store %s: %s; rebuilding it with the default analyzer", self._path, exc
                )
        if chosen is None:
            chosen = default_analyzer()
        if chosen.spec != recorded and not self._writer:
            raise IncompatibleStoreError(
                f"store {self._path} records the analyzer {recorded!r}, not {chosen.spec!r}; "
                "a store opened for reading (writer=False) cannot change it"
            )
        if chosen.spec != recorded:
            if recorded is not None:
                log.warning(
                    "store %s: the analyzer changes from %s to %s; the BM25 index is "
                    "rebuilt from SQLite",
                    self._path,
                    recorded,
                    chosen.spec,
                )
            conn = self._conn()
            with transaction(conn):
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('analyzer', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (chosen.spec,),
                )
        return chosen

    @staticmethod
    def _current_seq(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()
        return int(row[0]) if row else 0

    def _catch_up_lexical(self) -> None:
        """Brings the BM25 index to SQLite's sequence: replay when the change log still
        covers the gap, otherwise rebuild from the chunks."""
        conn = self._conn()
        floor = int(self._meta().get("log_floor", "0"))
        lex = self._lexical
        if lex.seq == self._seq:
            return
        if not self._writer:
            # The writing process is between a SQLite commit and its BM25 commit (or
            # died there, and its next open replays): searches here see BM25 as of its
            # last commit, the rest as of SQLite.
            log.info(
                "store %s opened for reading: its BM25 index holds changes up to %d of %d",
                self._path,
                lex.seq,
                self._seq,
            )
            return
        if lex.seq < floor or lex.seq > self._seq:
            lex.reset()
            cursor = conn.execute(
                "SELECT c.id, d.title, c.text FROM chunks c JOIN documents d ON d.id = c.doc"
            )
            while rows := cursor.fetchmany(5_000):
                lex.add(rows)
        else:
            changes = conn.execute(
                "SELECT op, chunk FROM changes WHERE seq > ? ORDER BY seq", (lex.seq,)
            ).fetchall()
            touched = sorted({chunk for _, chunk in changes})
            # Delete before re-adding: the index may already hold some of these chunks
            # when it committed but died before recording its sequence.
            for start in range(0, len(touched), 10_000):
                part = touched[start : start + 10_000]
                lex.delete(part)
                marks = ",".join("?" * len(part))
                lex.add(
                    conn.execute(
                        "SELECT c.id, d.title, c.text FROM chunks c JOIN documents d "
                        f"ON d.id = c.doc WHERE c.id IN ({marks})",
                        part,
                    ).fetchall()
                )
        self._commit_lexical()

    def _open_ann(self) -> AnnVectors:
        """The HNSW index, caught up with SQLite by replay, or rebuilt when too old."""
        from sift.integrations.stores.sqlite._ann import AnnVectors

        conn = self._conn()
        ann = AnnVectors(self._path / _ANN_FILE, self._dim)
        floor = int(self._meta().get("log_floor", "0"))
        if ann.seq != self._seq:
            if ann.seq < floor or ann.seq > self._seq:
                ann.rebuild(conn)
            else:
                ann.replay(
                    conn,
                    (
                        r[0]
                        for r in conn.execute("SELECT chunk FROM changes WHERE seq > ?", (ann.seq,))
                    ),
                )
            if self._writer:
                ann.save(self._seq)
        return ann

    def _commit_lexical(self, *, save_vectors: bool = False) -> None:
        """Commits the derived indexes that live on disk, then prunes the change log up to
        what all of them hold."""
        self._lexical.commit(self._seq)
        held = self._lexical.seq
        if not isinstance(self._vectors, ExactVectors):
            if save_vectors or self._vectors.unsaved >= _ANN_SAVE_EVERY:
                self._vectors.save(self._seq)
            held = min(held, self._vectors.seq)
        conn = self._conn()
        with transaction(conn):
            conn.execute("DELETE FROM changes WHERE seq <= ?", (held,))
            conn.execute(
                "UPDATE meta SET value = ? WHERE key = 'log_floor' AND CAST(value AS INTEGER) < ?",
                (str(held), held),
            )

    def _may_write(self) -> bool:
        """Whether this process may write the derived indexes' files: it takes the
        store's write lock (tantivy's), unless another process holds it."""
        if not self._writer:
            return False
        try:
            self._lexical.lock()
        except CorpusError:
            return False
        return True

    def _maybe_switch_to_ann(self) -> None:
        if (
            self._vector_index == "auto"
            and isinstance(self._vectors, ExactVectors)
            and len(self._vectors) >= self._ann_threshold
        ):
            self._vectors = self._open_ann()

    # ------------------------------------------------------------------ writes

    def upsert(
        self,
        documents: Iterable[Document],
        *,
        on_progress: Callable[[int], None] | None = None,
    ) -> UpsertReport:
        self._check_writer()
        report = UpsertReport()
        try:
            self._upsert(documents, report, on_progress)
        except (OSError, sqlite3.Error, ValueError) as exc:
            full = _storage_full(exc, self._path)
            if full is None:
                raise
            stored = report.added + report.updated
            raise CorpusError(
                f"the disk holding the store {self._path} is full ({full}): {stored} "
                "document(s) of this call were stored before it filled, each whole, and "
                "nothing of the others; free space, then run the same ingest again (it "
                "skips what is stored)"
            ) from exc
        return report

    def _upsert(
        self,
        documents: Iterable[Document],
        report: UpsertReport,
        on_progress: Callable[[int], None] | None,
    ) -> None:
        with self._write_lock:
            preparer = Preparer(self._embedder, self._chunk_tokens, spawn_after=self._spawn())
            try:
                self._pipeline(documents, report, on_progress, preparer)
            finally:
                preparer.close()
                # Every vector of this call is searchable when it returns (a store never
                # made, because no document was valid, has none).
                if self._pending is None:
                    self._vectors.wait()
            if self._pending is None and self._lexical.seq != self._seq:
                self._commit_lexical()

    def _spawn(self) -> int:
        """`spawn_after` for this ingest (see __init__)."""
        if self._spawn_after is not None:
            return self._spawn_after
        return 0 if getattr(self._embedder, "releases_gil", False) is True else _SPAWN_AFTER

    def _pipeline(
        self,
        documents: Iterable[Document],
        report: UpsertReport,
        on_progress: Callable[[int], None] | None,
        preparer: Preparer,
    ) -> None:
        """Chunks and embeds the next batches (`Preparer`) while this thread writes the
        batch before them."""
        pending: deque[_Batch] = deque()
        written_since_commit = 0

        def finish_first() -> int:
            return self._finish(pending.popleft(), report, on_progress, preparer)

        locked = False
        for docs in self._batches(documents, report, on_progress):
            if not locked:
                self._materialise()  # a store opened before it existed: made now
                self._conn()
                self._lexical.lock()
                locked = True
            ids = {d.id for d in docs}
            # A document may not be looked up while an earlier copy is still in flight.
            while pending and any(ids & batch.ids for batch in pending):
                written_since_commit += finish_first()
            todo, existing = self._classify(docs, report)
            items = items_of(todo)
            pending.append(_Batch(docs, ids, todo, existing, items, preparer.submit(items)))
            while len(pending) > _IN_FLIGHT:
                written_since_commit += finish_first()
            if written_since_commit >= self._lexical_commit_chunks:
                self._commit_lexical()
                written_since_commit = 0
        while pending:
            finish_first()

    def _batches(
        self,
        documents: Iterable[Document],
        report: UpsertReport,
        on_progress: Callable[[int], None] | None,
    ) -> Iterator[list[Document]]:
        """Valid documents in batches of distinct ids; invalid ones go to the report."""
        batch: list[Document] = []
        seen: set[str] = set()
        for position, item in enumerate(documents):
            try:
                doc = coerce_document(item, position)
            except DocumentError as exc:
                ident = item.get("id") if isinstance(item, dict) else getattr(item, "id", None)
                report.failed.append(
                    DocumentFailure(doc_id=str(ident or f"#{position}"), error=str(exc))
                )
                if on_progress:
                    on_progress(1)
                continue
            # The same id twice in one batch: the first is written before the second.
            if doc.id in seen or len(batch) >= self._batch_docs:
                yield batch
                batch, seen = [], set()
            batch.append(doc)
            seen.add(doc.id)
        if batch:
            yield batch

    def _classify(
        self, docs: list[Document], report: UpsertReport
    ) -> tuple[list[Document], dict[str, tuple[int, str]]]:
        """The documents that are new or changed, and the stored (rowid, hash) by id.

        Only a stored document is hashed here, to compare; a new one is hashed where it
        is chunked and embedded (`chunk_and_embed`), off the writer's thread."""
        marks = ",".join("?" * len(docs))
        existing = {
            doc_id: (rowid, digest)
            for rowid, doc_id, digest in self._conn().execute(
                f"SELECT id, doc_id, hash FROM documents WHERE doc_id IN ({marks})",
                [d.id for d in docs],
            )
        }
        todo = [
            doc
            for doc in docs
            if doc.id not in existing or existing[doc.id][1] != content_hash(doc)
        ]
        report.unchanged += len(docs) - len(todo)
        return todo, existing

    def _finish(
        self,
        batch: _Batch,
        report: UpsertReport,
        on_progress: Callable[[int], None] | None,
        preparer: Preparer,
    ) -> int:
        chunked = preparer.result(batch.future, batch.items)
        prepared, failed = assemble(batch.todo, chunked)
        report.failed += failed
        written = 0
        if prepared:
            try:
                written = self._write_prepared(prepared, batch.existing, report)
            except sqlite3.Error as exc:
                if _storage_full(exc, self._path) is not None:
                    raise  # no document of the batch could be written: not theirs to carry
                # Find the document(s) SQLite refuses; the others are still written.
                for one in prepared:
                    try:
                        written += self._write_prepared([one], batch.existing, report)
                    except sqlite3.Error as exc:
                        report.failed.append(
                            DocumentFailure(doc_id=one.doc.id, error=f"store error: {exc}")
                        )
        # Switch as soon as the threshold is crossed, not at the end of a long ingest, so
        # the exact matrix never grows far past it (memory) before the graph takes over.
        self._maybe_switch_to_ann()
        if on_progress:
            on_progress(len(batch.docs))
        return written

    def _write_prepared(
        self,
        prepared: list[PreparedDocument],
        existing: Mapping[str, tuple[int, str]],
        report: UpsertReport,
    ) -> int:
        """One transaction for the whole batch: every document is in or none is."""
        conn = self._conn()
        removed: list[int] = []
        doc_rows: list[tuple[Any, ...]] = []
        chunk_rows: list[tuple[Any, ...]] = []
        vector_rows: list[tuple[int, memoryview]] = []
        texts: list[str] = []
        lexical_rows: list[tuple[int, str, str]] = []
        # One normalisation for the whole batch; rows follow the documents' chunk order.
        vectors = _normalise(np.vstack([item.vectors for item in prepared]))
        # Each row's bytes are a slice of one buffer, not a copy per row.
        blob, width, row = memoryview(vectors.tobytes()), vectors.shape[1] * 4, 0
        added = updated = 0
        with transaction(conn):
            next_doc = self._next_id(conn, "documents")
            next_chunk = first_chunk = self._next_id(conn, "chunks")
            for item in prepared:
                old = existing.get(item.doc.id)
                if old is not None:
                    removed += self._delete_rows(conn, old[0])
                    updated += 1
                else:
                    added += 1
                doc = item.doc
                doc_rows.append(
                    (
                        next_doc,
                        doc.id,
                        doc.title,
                        item.hash,
                        _METADATA_JSON.encode(doc.metadata) if doc.metadata else "{}",
                        len(item.spans),
                    )
                )
                for index, (start, end, tokens) in enumerate(item.spans):
                    cid = next_chunk + index
                    text = doc.text[start:end]
                    chunk_rows.append((cid, next_doc, index, text, start, end, tokens))
                    vector_rows.append((cid, blob[row * width : (row + 1) * width]))
                    texts.append(text)
                    lexical_rows.append((cid, doc.title, text))
                    row += 1
                next_doc += 1
                next_chunk += len(item.spans)
            conn.executemany(
                "INSERT INTO documents (id, doc_id, title, hash, metadata, n_chunks) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                doc_rows,
            )
            conn.executemany(
                "INSERT INTO chunks (id, doc, idx, text, start, end, tokens) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                chunk_rows,
            )
            conn.executemany("INSERT INTO vectors (id, v) VALUES (?, ?)", vector_rows)
            new_ids = range(first_chunk, next_chunk)
            conn.executemany(
                "INSERT INTO changes (op, chunk) VALUES (?, ?)",
                [(OP_DELETE, cid) for cid in removed] + [(OP_ADD, cid) for cid in new_ids],
            )
            seq = self._current_seq(conn)
        self._seq = seq
        report.added += added
        report.updated += updated
        report.chunks_written += len(new_ids)
        # Derived indexes follow the committed state; a crash from here on is repaired by
        # the replay on open.
        self._lexical.delete(removed)
        self._lexical.add(lexical_rows)
        self._vectors.remove(removed)
        if len(new_ids):
            rowids = np.arange(first_chunk, next_chunk, dtype=np.int64)
            self._vectors.add(rowids, vectors)
            self._trigrams.add(rowids, texts)
        return len(new_ids)

    @staticmethod
    def _next_id(conn: sqlite3.Connection, table: str) -> int:
        # AUTOINCREMENT's counter: ids are never reused, even after deletes, so a derived
        # index can never confuse a new chunk with a deleted one.
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
        return (int(row[0]) if row else 0) + 1

    @staticmethod
    def _delete_rows(conn: sqlite3.Connection, doc_rowid: int) -> list[int]:
        """Deletes a document's rows inside the caller's transaction; its chunk rowids."""
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE doc = ?", (doc_rowid,))]
        conn.execute(
            "DELETE FROM vectors WHERE id IN (SELECT id FROM chunks WHERE doc = ?)", (doc_rowid,)
        )
        conn.execute("DELETE FROM chunks WHERE doc = ?", (doc_rowid,))
        conn.execute("DELETE FROM documents WHERE id = ?", (doc_rowid,))
        return ids

    def delete(self, doc_ids: Iterable[str]) -> int:
        self._check_writer()
        wanted = list(dict.fromkeys(check_ids(doc_ids, name="doc_ids")))
        if not wanted or self._pending is not None:
            return 0
        with self._write_lock:
            conn = self._conn()
            self._lexical.lock()
            removed: list[int] = []
            count = 0
            with transaction(conn):
                for doc_id in wanted:
                    row = conn.execute(
                        "SELECT id FROM documents WHERE doc_id = ?", (doc_id,)
                    ).fetchone()
                    if row is None:
                        continue
                    count += 1
                    removed += self._delete_rows(conn, row[0])
                conn.executemany(
                    "INSERT INTO changes (op, chunk) VALUES (?, ?)",
                    [(OP_DELETE, cid) for cid in removed],
                )
                seq = self._current_seq(conn)
            self._seq = seq
            self._lexical.delete(removed)
            self._vectors.remove(removed)
            self._vectors.wait()
            if self._lexical.seq != self._seq:
                self._commit_lexical()
        return count

    # ------------------------------------------------------------------ reads

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        vector: np.ndarray | None = None,
        filters: Filter | Mapping[str, Any] | None = None,
        exclude: Collection[str] = (),
        alpha: float | None = None,
    ) -> list[Hit]:
        self._require()
        request = check_search(
            query,
            k=k,
            mode=mode,
            filters=filters,
            exclude=exclude,
            alpha=alpha,
            max_query_chars=self._max_query_chars,
        )
        text, k, mode = request.text, request.k, request.mode
        weight = self._alpha if request.alpha is None else request.alpha
        if mode == "hybrid":
            weight = dense_weight(self._embedder, text, weight)
        spec = request.filters
        blocked = self._rowids(request.exclude)
        if mode == "hybrid" and weight == 0.0:
            mode = "bm25"
        elif mode == "hybrid" and weight == 1.0:
            mode = "dense"
        checker = _FilterCheck(self._conn(), spec)
        if mode == "bm25":
            ranked = self._filtered(lambda n: self._lexical.search(text, n, blocked), k, checker)
        elif mode == "dense":
            q = embed_query(self._embedder, text, vector)
            ranked = self._filtered(lambda n: self._vectors.search(q, n, blocked), k, checker)
        else:
            q = embed_query(self._embedder, text, vector)
            width = max(self._hybrid_candidates, k)
            lexical = self._filtered(
                lambda n: self._lexical.search(text, n, blocked), width, checker
            )
            dense = self._filtered(lambda n: self._vectors.search(q, n, blocked), width, checker)
            ranked = fuse(self._fusion, dense, lexical, weight)[:k]
        return self._hits(ranked)

    @staticmethod
    def _filtered(
        fetch: Callable[[int], list[tuple[int, float]]], need: int, checker: _FilterCheck
    ) -> list[tuple[int, float]]:
        """The first `need` results passing the filter, fetching more while too many fail."""
        if checker.spec is None:
            return fetch(need)
        limit = max(need * 4, 50)
        while True:
            results = fetch(limit)
            allowed = checker.allowed([rowid for rowid, _ in results])
            kept = [r for r in results if r[0] in allowed]
            if len(kept) >= need or len(results) < limit:
                return kept[:need]
            limit *= 4

    def grep(
        self,
        pattern: str,
        *,
        k: int = 5,
        filters: Filter | Mapping[str, Any] | None = None,
        exclude: Collection[str] = (),
    ) -> GrepResult:
        self._require()
        request = check_grep(
            pattern,
            k=k,
            filters=filters,
            exclude=exclude,
            max_pattern_chars=self._max_pattern_chars,
        )
        regex, k = request.regex, request.k
        blocked = self._rowids(request.exclude)
        checker = _FilterCheck(self._conn(), request.filters)

        def accept(rowids: list[int]) -> set[int]:
            fresh = [r for r in rowids if r not in blocked]
            return checker.allowed(fresh) if checker.spec is not None else set(fresh)

        bits = trigram_bits(literal_fragments(pattern))
        blocks = self._trigrams.candidates(bits) if len(bits) else None
        ranked, more = grep_rowids(self._conn(), regex, blocks, k, accept)
        note = (
            f"showing the first {k} matching chunks in corpus order; more may match, "
            "narrow the pattern or exclude these ids to see others"
            if more
            else None
        )
        return GrepResult(hits=self._hits(ranked), note=note)

    def read(self, doc_id: str) -> list[Chunk]:
        self._require()
        rows = (
            self._conn()
            .execute(_CHUNK_SQL + "WHERE d.doc_id = ? ORDER BY c.idx", (check_doc_id(doc_id),))
            .fetchall()
        )
        return _chunks(rows)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        keys = _split_ids(check_ids(chunk_ids, name="chunk_ids"))
        self._require()
        if not keys:
            return []
        rows = (
            self._conn()
            .execute(
                "SELECT c.id, c.idx, c.text, c.start, c.end, d.doc_id, d.title, d.metadata "
                "FROM json_each(?) j "
                "JOIN documents d ON d.doc_id = json_extract(j.value, '$[0]') "
                "JOIN chunks c ON c.doc = d.id AND c.idx = json_extract(j.value, '$[1]') "
                "ORDER BY j.key",
                (json.dumps(keys),),
            )
            .fetchall()
        )
        return _chunks(rows)

    def _rowids(self, chunk_ids: Collection[str]) -> set[int]:
        keys = _split_ids(chunk_ids)
        if not keys:
            return set()
        rows = (
            self._conn()
            .execute(
                "SELECT c.id FROM json_each(?) j "
                "JOIN documents d ON d.doc_id = json_extract(j.value, '$[0]') "
                "JOIN chunks c ON c.doc = d.id AND c.idx = json_extract(j.value, '$[1]')",
                (json.dumps(keys),),
            )
            .fetchall()
        )
        return {r[0] for r in rows}

    def _hits(self, ranked: Sequence[tuple[int, float]]) -> list[Hit]:
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        rows = (
            self._conn()
            .execute(_CHUNK_SQL + f"WHERE c.id IN ({marks})", [rowid for rowid, _ in ranked])
            .fetchall()
        )
        by_id = {row[0]: chunk for row, chunk in zip(rows, _chunks(rows), strict=True)}
        # A chunk deleted between ranking and hydration is simply left out.
        return [Hit(chunk=by_id[r], score=s) for r, s in ranked if r in by_id]

    def stats(self) -> CorpusStats:
        settings = {
            "chunk_tokens": self._chunk_tokens,
            "fusion": self._fusion,
            "alpha": self._alpha,
            "analyzer": self._analyzer.spec,
        }
        if self._pending is not None:
            # Counting is true of a store not made yet: it holds nothing. Reads refuse.
            return self._stats(0, 0, {"exists": False, **settings})
        conn = self._conn()
        meta = self._meta()
        (documents,) = conn.execute("SELECT count(*) FROM documents").fetchone()
        (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
        return self._stats(
            documents,
            chunks,
            {
                **settings,
                "sequence": self._seq,
                "lexical_sequence": self._lexical.seq,
                "lexical_chunks": self._lexical.count(),
                "vector_chunks": len(self._vectors),
                "vector_index": "exact" if isinstance(self._vectors, ExactVectors) else "ann",
                "source_root": meta.get("source_root"),
                "size_bytes": _size_on_disk(self._path),
            },
        )

    def _stats(self, documents: int, chunks: int, extra: dict[str, Any]) -> CorpusStats:
        return CorpusStats(
            documents=documents,
            chunks=chunks,
            embedder=self._embedder.name,
            dim=self._dim,
            backend="sqlite",
            location=str(self._path),
            schema_version=SCHEMA_VERSION,
            extra=extra,
        )

    # ------------------------------------------------------------------ catalog

    def documents(self, *, prefix: str | None = None) -> Iterator[DocumentInfo]:
        """Every stored document by id (`DocumentCatalog`), read a page at a time."""
        self._require()
        after: str | None = None
        while True:
            if after is None:
                where, key = "doc_id >= ?", prefix or ""
            else:
                where, key = "doc_id > ?", after
            rows = (
                self._conn()
                .execute(
                    "SELECT doc_id, title, n_chunks, metadata FROM documents "
                    f"WHERE {where} ORDER BY doc_id LIMIT 1000",
                    (key,),
                )
                .fetchall()
            )
            for doc_id, title, chunks, metadata in rows:
                if prefix and not doc_id.startswith(prefix):
                    return
                yield DocumentInfo(
                    doc_id=doc_id, title=title, chunks=chunks, metadata=json.loads(metadata)
                )
            if len(rows) < 1000:
                return
            after = rows[-1][0]

    def source_root(self) -> str | None:
        """The folder the ids of indexed files are relative to (`SourceRoots`)."""
        if self._pending is not None:
            return self._pending_root
        return self._meta().get("source_root")

    def record_source_root(self, root: str) -> None:
        """Records the source root; the first one recorded stays."""
        self._check_writer()
        if self._pending is not None:
            self._pending_root = self._pending_root or root
            return
        with self._write_lock, transaction(self._conn()) as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('source_root', ?)", (root,)
            )

    def close(self) -> None:
        """Saves what must be saved and releases every file and connection; when a step
        fails the others still run, then CorpusError says what failed."""
        with self._write_lock:
            if self._closed:
                return
            if self._pending is not None:  # never written to: nothing was opened
                self._closed = True
                return
            steps: list[tuple[str, Callable[[], object]]] = []
            if (
                self._writer
                and not isinstance(self._vectors, ExactVectors)
                and self._vectors.seq != self._seq
            ):
                steps.append(
                    ("saving the vector index", lambda: self._commit_lexical(save_vectors=True))
                )
            steps += [
                ("closing the vector index", self._vectors.close),
                ("saving the grep index", self._trigrams.close),
                ("closing the BM25 index", self._lexical.close),
                ("closing SQLite", self._close_connections),
            ]
            try:
                release_all(f"store {self._path}", steps)
            finally:
                self._closed = True

    @property
    def location(self) -> str:
        """The store's folder."""
        return str(self._path)

    def __enter__(self) -> SqliteCorpus:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        close_on_exit(self.close, exc)

    @property
    def embedder(self) -> Embedder:
        """The embedder of this store's vectors (pass it to a later open of the same
        store to skip loading the model again)."""
        return self._embedder

    @property
    def analyzer(self) -> Analyzer:
        """How this store's text becomes BM25 terms (recorded in the store)."""
        return self._analyzer

    def __repr__(self) -> str:
        return f"SqliteCorpus({str(self._path)!r}, embedder={self._embedder.name!r})"


@dataclass(slots=True)
class _Batch:
    """A batch on its way: the documents read, those to write (new or changed), and
    their chunks, vectors and hashes being prepared."""

    docs: list[Document]
    ids: set[str]
    todo: list[Document]
    existing: dict[str, tuple[int, str]]
    items: list[Item]
    future: Future[Chunked]


class _FilterCheck:
    """Evaluates a Filter on chunks by rowid with `sift.filters.matches`, the semantics
    of record; a document's verdict is cached for the whole call."""

    def __init__(self, conn: sqlite3.Connection, spec: Filter | None) -> None:
        self.spec = spec
        self._conn = conn
        self._verdict: dict[int, bool] = {}

    def allowed(self, rowids: list[int]) -> set[int]:
        unknown = [r for r in rowids if r not in self._verdict]
        for start in range(0, len(unknown), 900):
            part = unknown[start : start + 900]
            marks = ",".join("?" * len(part))
            docs: dict[int, bool] = {}
            for rowid, doc_rowid, doc_id, title, metadata in self._conn.execute(
                "SELECT c.id, d.id, d.doc_id, d.title, d.metadata FROM chunks c "
                f"JOIN documents d ON d.id = c.doc WHERE c.id IN ({marks})",
                part,
            ):
                if doc_rowid not in docs:
                    record = {**json.loads(metadata), "doc_id": doc_id, "title": title}
                    docs[doc_rowid] = matches(self.spec, record)
                self._verdict[rowid] = docs[doc_rowid]
        return {r for r in rowids if self._verdict.get(r)}


def _storage_full(exc: BaseException, path: Path) -> str | None:
    """What says the disk is full in a failure of SQLite, tantivy or the file system, or
    None when the failure is something else."""
    text = str(exc)
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return "No space left on device"
    for marker in ("No space left on device", "database or disk is full", "StorageFull"):
        if marker in text:
            return marker
    if "index writer was killed" in text:
        # tantivy's writer thread died of an I/O error it does not name: the disk is full
        # when the device has (almost) no room left.
        with contextlib.suppress(OSError):
            if shutil.disk_usage(path).free < 1024 * 1024:
                return "No space left on device"
    return None


def _size_on_disk(path: Path) -> int:
    """Bytes of every file of the store (SQLite and its WAL, the derived indexes)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(folder) / name).stat().st_size
    return total


def _split_ids(chunk_ids: Iterable[str]) -> list[list[Any]]:
    keys: list[list[Any]] = []
    for chunk_id in chunk_ids:
        if not isinstance(chunk_id, str):
            continue
        doc_id, sep, index = chunk_id.rpartition("_")
        if sep and doc_id and index.isdigit():
            keys.append([doc_id, int(index)])
    return keys


def _chunks(rows: Iterable[tuple[Any, ...]]) -> list[Chunk]:
    parsed: dict[str, dict[str, Any]] = {}
    out = []
    for _, idx, text, start, end, doc_id, title, metadata in rows:
        meta = parsed.get(metadata)
        if meta is None:
            meta = parsed[metadata] = json.loads(metadata)
        out.append(
            Chunk(
                chunk_id=f"{doc_id}_{idx}",
                doc_id=doc_id,
                index=idx,
                title=title,
                text=text,
                start=start,
                end=end,
                # Pages and section from the chunk's offsets (stores.locations).
                metadata=chunk_metadata(meta, start, end),
            )
        )
    return out


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
