"""The embedded corpus store: one SQLite file as the source of truth, with a tantivy BM25
index, an in-memory exact vector index and an FTS5 trigram grep pre-filter derived from it.

Write path (under one lock): chunk and embed a batch of documents outside any
transaction, then one SQLite transaction writes documents, chunks, vectors, grep
trigrams and change-log entries; only after COMMIT are the derived indexes updated. A
crash at any point leaves SQLite whole (each document entirely in or out) and the derived
indexes behind at worst, and opening the store replays what they miss.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sift.analysis import Analyzer, default_analyzer
from sift.errors import CorpusError, DocumentError, IncompatibleStoreError
from sift.filters import Filter, matches
from sift.integrations.embedders import DEFAULT_EMBEDDER, get_embedder
from sift.integrations.stores._checks import (
    DEFAULT_MAX_QUERY_CHARS,
    check_doc_id,
    check_grep,
    check_ids,
    check_search,
)
from sift.integrations.stores._closing import close_on_exit, release_all, release_quietly
from sift.integrations.stores._documents import (
    PreparedDocument,
    coerce_document,
    content_hash,
    prepare_documents,
)
from sift.integrations.stores._embedding import dense_weight, embed_query
from sift.integrations.stores.fusion import (
    DEFAULT_ALPHA,
    DEFAULT_FUSION,
    check_fusion,
    default_alpha,
    fuse,
)
from sift.integrations.stores.patterns import DEFAULT_MAX_PATTERN_CHARS, literal_fragments
from sift.integrations.stores.sqlite._ann import AnnVectors
from sift.integrations.stores.sqlite._grep import fts_query, grep_rowids
from sift.integrations.stores.sqlite._lexical import LexicalIndex
from sift.integrations.stores.sqlite._schema import (
    DB_NAME,
    OP_ADD,
    OP_DELETE,
    SCHEMA_VERSION,
    connect,
    create_schema,
    inspect,
    transaction,
)
from sift.integrations.stores.sqlite._vectors import ExactVectors
from sift.protocols import Embedder
from sift.tokens import estimate_tokens
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

__all__ = ["SqliteCorpus"]

log = logging.getLogger("sift.integrations.stores")

_VECTOR_INDEXES = ("auto", "exact", "ann")
_ANN_FILE = "vectors.usearch"
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
        create: create a store when `path` is absent or an empty directory.
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
    """

    def __init__(
        self,
        path: str | Path,
        *,
        embedder: Embedder | str | None = None,
        create: bool = True,
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
        self._write_lock = threading.RLock()
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._closed = False

        exists = inspect(self._path, create=create)
        if not exists:
            # Everything that can be refused is checked before anything is created.
            embedder = self._resolve_embedder(embedder, None)
            size = 512 if chunk_tokens is None else chunk_tokens
            if isinstance(size, bool) or not isinstance(size, int) or size < 8:
                raise ValueError(f"chunk_tokens must be an integer of at least 8, got {size!r}")
            self._create(embedder, size, analyzer or default_analyzer())
        conn = self._conn()
        meta = self._meta()
        self._analyzer = self._resolve_analyzer(analyzer, meta)
        self._embedder = self._resolve_embedder(embedder, meta)
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
            self._lexical = LexicalIndex(self._path / "lexical", self._analyzer)
            self._catch_up_lexical()

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
            for conn in self._conns:
                try:
                    conn.close()
                except sqlite3.Error as exc:
                    failed.append(exc)
            self._conns.clear()
        self._local = threading.local()
        if failed:
            raise failed[0]

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise CorpusError(f"store {self._path} is closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self._path / DB_NAME)
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

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
            ann.save(self._seq)
        return ann

    def _commit_lexical(self, *, save_vectors: bool = False) -> None:
        """Commits the derived indexes that live on disk, then prunes the change log up to
        what all of them hold."""
        self._lexical.commit(self._seq)
        held = self._lexical.seq
        if isinstance(self._vectors, AnnVectors):
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
        with self._write_lock, ThreadPoolExecutor(1, thread_name_prefix="sift-prepare") as pool:
            self._conn()
            self._lexical.lock()
            pending: _Batch | None = None
            written_since_commit = 0
            for batch in self._batches(documents, report, on_progress):
                # A document may not be looked up while an earlier copy is still in flight.
                if pending is not None and pending.ids & {d.id for d in batch}:
                    written_since_commit += self._finish(pending, report, on_progress)
                    pending = None
                todo, existing = self._classify(batch, report)
                # Chunk and embed the next batch while this thread writes the previous one.
                future = pool.submit(
                    prepare_documents, todo, self._embedder, chunk_tokens=self._chunk_tokens
                )
                if pending is not None:
                    written_since_commit += self._finish(pending, report, on_progress)
                pending = _Batch(batch, existing, future)
                if written_since_commit >= self._lexical_commit_chunks:
                    self._commit_lexical()
                    written_since_commit = 0
            if pending is not None:
                self._finish(pending, report, on_progress)
            if self._lexical.seq != self._seq:
                self._commit_lexical()

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
        """The documents that are new or changed, and the stored (rowid, hash) by id."""
        marks = ",".join("?" * len(docs))
        existing = {
            doc_id: (rowid, digest)
            for rowid, doc_id, digest in self._conn().execute(
                f"SELECT id, doc_id, hash FROM documents WHERE doc_id IN ({marks})",
                [d.id for d in docs],
            )
        }
        todo = [d for d in docs if existing.get(d.id, (0, ""))[1] != content_hash(d)]
        report.unchanged += len(docs) - len(todo)
        return todo, existing

    def _finish(
        self,
        batch: _Batch,
        report: UpsertReport,
        on_progress: Callable[[int], None] | None,
    ) -> int:
        prepared, failed = batch.future.result()
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
        vector_rows: list[tuple[int, bytes]] = []
        grep_rows: list[tuple[int, str]] = []
        lexical_rows: list[tuple[int, str, str]] = []
        # One normalisation for the whole batch; rows follow the documents' chunk order.
        vectors = _normalise(np.vstack([item.vectors for item in prepared]))
        row = 0
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
                        json.dumps(doc.metadata, ensure_ascii=False),
                        len(item.chunks),
                    )
                )
                matrix = vectors[row : row + len(item.chunks)]
                row += len(item.chunks)
                tokens = item.tokens or tuple(estimate_tokens(c.text) for c in item.chunks)
                for i, chunk in enumerate(item.chunks):
                    cid = next_chunk + i
                    chunk_rows.append(
                        (cid, next_doc, chunk.index, chunk.text, chunk.start, chunk.end, tokens[i])
                    )
                    vector_rows.append((cid, matrix[i].tobytes()))
                    grep_rows.append((cid, chunk.text))
                    lexical_rows.append((cid, doc.title, chunk.text))
                next_doc += 1
                next_chunk += len(item.chunks)
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
            conn.executemany("INSERT INTO grep (rowid, text) VALUES (?, ?)", grep_rows)
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
            self._vectors.add(np.arange(first_chunk, next_chunk, dtype=np.int64), vectors)
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
            "INSERT INTO grep (grep, rowid, text) SELECT 'delete', id, text FROM chunks "
            "WHERE doc = ?",
            (doc_rowid,),
        )
        conn.execute(
            "DELETE FROM vectors WHERE id IN (SELECT id FROM chunks WHERE doc = ?)", (doc_rowid,)
        )
        conn.execute("DELETE FROM chunks WHERE doc = ?", (doc_rowid,))
        conn.execute("DELETE FROM documents WHERE id = ?", (doc_rowid,))
        return ids

    def delete(self, doc_ids: Iterable[str]) -> int:
        wanted = list(dict.fromkeys(check_ids(doc_ids, name="doc_ids")))
        if not wanted:
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

        match = fts_query(literal_fragments(pattern))
        ranked, more = grep_rowids(self._conn(), regex, match, k, accept)
        note = (
            f"showing the first {k} matching chunks in corpus order; more may match, "
            "narrow the pattern or exclude these ids to see others"
            if more
            else None
        )
        return GrepResult(hits=self._hits(ranked), note=note)

    def read(self, doc_id: str) -> list[Chunk]:
        rows = (
            self._conn()
            .execute(_CHUNK_SQL + "WHERE d.doc_id = ? ORDER BY c.idx", (check_doc_id(doc_id),))
            .fetchall()
        )
        return _chunks(rows)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        keys = _split_ids(check_ids(chunk_ids, name="chunk_ids"))
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
        conn = self._conn()
        (documents,) = conn.execute("SELECT count(*) FROM documents").fetchone()
        (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
        return CorpusStats(
            documents=documents,
            chunks=chunks,
            embedder=self._embedder.name,
            dim=self._dim,
            backend="sqlite",
            location=str(self._path),
            schema_version=SCHEMA_VERSION,
            extra={
                "chunk_tokens": self._chunk_tokens,
                "analyzer": self._analyzer.spec,
                "fusion": self._fusion,
                "alpha": self._alpha,
                "sequence": self._seq,
                "lexical_sequence": self._lexical.seq,
                "lexical_chunks": self._lexical.count(),
                "vector_chunks": len(self._vectors),
                "vector_index": "ann" if isinstance(self._vectors, AnnVectors) else "exact",
            },
        )

    def close(self) -> None:
        """Saves what must be saved and releases every file and connection; when a step
        fails the others still run, then CorpusError says what failed."""
        with self._write_lock:
            if self._closed:
                return
            steps: list[tuple[str, Callable[[], object]]] = []
            if isinstance(self._vectors, AnnVectors) and self._vectors.seq != self._seq:
                steps.append(
                    ("saving the vector index", lambda: self._commit_lexical(save_vectors=True))
                )
            steps += [
                ("closing the BM25 index", self._lexical.close),
                ("closing SQLite", self._close_connections),
            ]
            try:
                release_all(f"store {self._path}", steps)
            finally:
                self._closed = True

    def __enter__(self) -> SqliteCorpus:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        close_on_exit(self.close, exc)

    @property
    def analyzer(self) -> Analyzer:
        """How this store's text becomes BM25 terms (recorded in the store)."""
        return self._analyzer

    def __repr__(self) -> str:
        return f"SqliteCorpus({str(self._path)!r}, embedder={self._embedder.name!r})"


@dataclass(slots=True)
class _Batch:
    """A batch being prepared (chunked and embedded) in the worker thread."""

    docs: list[Document]
    existing: dict[str, tuple[int, str]]
    future: Future[tuple[list[PreparedDocument], list[DocumentFailure]]]

    @property
    def ids(self) -> set[str]:
        return {d.id for d in self.docs}


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
                metadata=dict(meta),
            )
        )
    return out


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
