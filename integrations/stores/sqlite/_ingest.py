"""The embedded store's write path: upsert and delete.

Under the store's write lock, a worker thread chunks and embeds the next batches of
documents (outside any transaction) while the caller's thread writes the batch before
them: one SQLite transaction per batch writes documents, chunks, vectors and change-log
entries, and only after COMMIT are the derived indexes handed what changed
(`_derived`). A crash at any point leaves SQLite whole (each document entirely in or
out) and the derived indexes behind at worst; opening the store replays what they miss.

Chunking and embedding once also ran in child processes for an embedder that holds the
GIL; the default (static) embedder releases it, so a thread beside the writer is as
fast, and the children were removed (issue 28).
"""

from __future__ import annotations

import contextlib
import errno
import json
import shutil
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sift.errors import DocumentError, StoreFullError
from sift.integrations.stores._checks import check_ids
from sift.integrations.stores._documents import (
    Chunked,
    Item,
    PreparedDocument,
    assemble,
    chunk_and_embed,
    coerce_document,
    content_hash,
    items_of,
)
from sift.integrations.stores.sqlite._changes import Written
from sift.integrations.stores.sqlite._filtering import delete_fields, field_rows, insert_fields
from sift.integrations.stores.sqlite._open import begin_write
from sift.integrations.stores.sqlite._schema import OP_ADD, OP_DELETE, transaction
from sift.integrations.stores.sqlite._state import State, current_seq
from sift.types import Document, DocumentFailure, UpsertReport, make_chunk_id

__all__ = ["delete", "upsert"]

# Batches chunked and embedded ahead of the one being written (as before the split): the
# thread never waits for the writer to hand it the next, and a slow batch is absorbed.
_IN_FLIGHT = 3
# json.dumps(metadata, ensure_ascii=False), with the encoder built once.
_METADATA_JSON = json.JSONEncoder(ensure_ascii=False)


def upsert(
    state: State,
    documents: Iterable[Document],
    on_progress: Callable[[int], None] | None,
) -> UpsertReport:
    state.check_writer()
    report = UpsertReport()
    try:
        with state.write_lock:
            _upsert(state, documents, report, on_progress)
    except (OSError, sqlite3.Error, ValueError) as exc:
        full = _storage_full(exc, state.path)
        if full is None:
            raise
        stored = report.added + report.updated
        raise StoreFullError(
            f"the disk holding the store {state.path} is full ({full}): {stored} "
            "document(s) of this call were stored before it filled, each whole, and "
            "nothing of the others; free space, then run the same ingest again (it "
            "skips what is stored)",
            stored,
        ) from exc
    return report


def delete(state: State, doc_ids: Iterable[str]) -> int:
    state.check_writer()
    wanted = list(dict.fromkeys(check_ids(doc_ids, name="doc_ids")))
    if not wanted or state.pending is not None:
        return 0
    with state.write_lock:
        derived = begin_write(state)
        conn = state.conn()
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
                removed += _delete_rows(conn, row[0])
            conn.executemany(
                "INSERT INTO changes (op, chunk) VALUES (?, ?)",
                [(OP_DELETE, cid) for cid in removed],
            )
            state.seq = current_seq(conn)
        derived.apply(Written(removed, _NO_ROWIDS, _NO_VECTORS, [], []))
        derived.wait()
        if derived.behind(state.seq):
            derived.record(conn, state.seq)
    return count


_NO_ROWIDS = np.zeros(0, dtype=np.int64)
_NO_VECTORS = np.zeros((0, 0), dtype=np.float32)


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


def _upsert(
    state: State,
    documents: Iterable[Document],
    report: UpsertReport,
    on_progress: Callable[[int], None] | None,
) -> None:
    preparer = ThreadPoolExecutor(1, thread_name_prefix="sift-prepare")
    try:
        _pipeline(state, documents, report, on_progress, preparer)
    finally:
        preparer.shutdown(wait=True, cancel_futures=True)
        # Every vector of this call is searchable when it returns (a store never made,
        # because no document was valid, has none).
        if state.derived is not None:
            state.derived.wait()
    if state.derived is not None and state.derived.behind(state.seq):
        state.derived.record(state.conn(), state.seq)


def _pipeline(
    state: State,
    documents: Iterable[Document],
    report: UpsertReport,
    on_progress: Callable[[int], None] | None,
    preparer: ThreadPoolExecutor,
) -> None:
    """Chunks and embeds the next batches in the `preparer` thread while this thread
    writes the batch before them."""
    pending: deque[_Batch] = deque()
    written_since_commit = 0

    def finish_first() -> int:
        return _finish(state, pending.popleft(), report, on_progress)

    locked = False
    read = 0
    for docs in _batches(documents, state.options.batch_docs, report, on_progress):
        if not locked:
            begin_write(state)  # a store opened before it existed is made now
            locked = True
        # A write of at least this many chunks (every document makes one) is under way,
        # told at each batch's start: the entity index starts its worker process once
        # the write is long enough for one, before the batch in hand is chunked.
        read += len(docs)
        state.indexes().expect(read)
        ids = {d.id for d in docs}
        # A document may not be looked up while an earlier copy is still in flight.
        while pending and any(ids & batch.ids for batch in pending):
            written_since_commit += finish_first()
        todo, existing = _classify(state.conn(), docs, report)
        items = items_of(todo)
        future = preparer.submit(
            chunk_and_embed, items, state.embedder, chunk_tokens=state.chunk_tokens
        )
        pending.append(_Batch(docs, ids, todo, existing, items, future))
        while len(pending) > _IN_FLIGHT:
            written_since_commit += finish_first()
        if written_since_commit >= state.options.lexical_commit_chunks:
            state.indexes().record(state.conn(), state.seq)
            written_since_commit = 0
    while pending:
        finish_first()


def _batches(
    documents: Iterable[Document],
    batch_docs: int,
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
        if doc.id in seen or len(batch) >= batch_docs:
            yield batch
            batch, seen = [], set()
        batch.append(doc)
        seen.add(doc.id)
    if batch:
        yield batch


def _classify(
    conn: sqlite3.Connection, docs: list[Document], report: UpsertReport
) -> tuple[list[Document], dict[str, tuple[int, str]]]:
    """The documents that are new or changed, and the stored (rowid, hash) by id.

    Only a stored document is hashed here, to compare; a new one is hashed where it is
    chunked and embedded (`chunk_and_embed`), off the writer's thread."""
    marks = ",".join("?" * len(docs))
    existing = {
        doc_id: (rowid, digest)
        for rowid, doc_id, digest in conn.execute(
            f"SELECT id, doc_id, hash FROM documents WHERE doc_id IN ({marks})",
            [d.id for d in docs],
        )
    }
    todo = [
        doc for doc in docs if doc.id not in existing or existing[doc.id][1] != content_hash(doc)
    ]
    report.unchanged += len(docs) - len(todo)
    return todo, existing


def _finish(
    state: State,
    batch: _Batch,
    report: UpsertReport,
    on_progress: Callable[[int], None] | None,
) -> int:
    chunked = batch.future.result()
    prepared, failed = assemble(batch.todo, chunked)
    report.failed += failed
    written = 0
    if prepared:
        try:
            written = write_prepared(state, prepared, batch.existing, report)
        except sqlite3.Error as exc:
            if _storage_full(exc, state.path) is not None:
                raise  # no document of the batch could be written: not theirs to carry
            # Find the document(s) SQLite refuses; the others are still written.
            for one in prepared:
                try:
                    written += write_prepared(state, [one], batch.existing, report)
                except sqlite3.Error as exc:
                    report.failed.append(
                        DocumentFailure(doc_id=one.doc.id, error=f"store error: {exc}")
                    )
    if on_progress:
        on_progress(len(batch.docs))
    return written


def write_prepared(
    state: State,
    prepared: list[PreparedDocument],
    existing: Mapping[str, tuple[int, str]],
    report: UpsertReport,
) -> int:
    """One transaction for the whole batch: every document is in or none is."""
    conn = state.conn()
    removed: list[int] = []
    doc_rows: list[tuple[Any, ...]] = []
    chunk_rows: list[tuple[Any, ...]] = []
    vector_rows: list[tuple[int, memoryview]] = []
    lexical_rows: list[tuple[int, str, str]] = []
    lexical_metadata: list[Mapping[str, Any]] = []
    chunk_ids: list[str] = []
    field_rows_: list[tuple[Any, ...]] = []
    # One normalisation for the whole batch; rows follow the documents' chunk order.
    vectors = _normalise(np.vstack([item.vectors for item in prepared]))
    # Each row's bytes are a slice of one buffer, not a copy per row.
    blob, width, row = memoryview(vectors.tobytes()), vectors.shape[1] * 4, 0
    added = updated = 0
    with transaction(conn):
        next_doc = _next_id(conn, "documents")
        next_chunk = first_chunk = _next_id(conn, "chunks")
        for item in prepared:
            old = existing.get(item.doc.id)
            if old is not None:
                removed += _delete_rows(conn, old[0])
                updated += 1
            else:
                added += 1
            doc = item.doc
            field_rows_ += field_rows(next_doc, doc.metadata)
            metadata = _METADATA_JSON.encode(doc.metadata) if doc.metadata else "{}"
            doc_rows.append((next_doc, doc.id, doc.title, item.hash, metadata, len(item.spans)))
            for index, (start, end, tokens) in enumerate(item.spans):
                cid = next_chunk + index
                text = doc.text[start:end]
                chunk_rows.append((cid, next_doc, index, text, start, end, tokens))
                vector_rows.append((cid, blob[row * width : (row + 1) * width]))
                lexical_rows.append((cid, doc.title, text))
                lexical_metadata.append(doc.metadata)
                chunk_ids.append(make_chunk_id(doc.id, index))
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
        insert_fields(conn, field_rows_)
        new_ids = range(first_chunk, next_chunk)
        conn.executemany(
            "INSERT INTO changes (op, chunk) VALUES (?, ?)",
            [(OP_DELETE, cid) for cid in removed] + [(OP_ADD, cid) for cid in new_ids],
        )
        seq = current_seq(conn)
    state.seq = seq
    report.added += added
    report.updated += updated
    report.chunks_written += len(new_ids)
    # Derived indexes follow the committed state; a crash from here on is repaired by the
    # replay on open.
    rowids = np.arange(first_chunk, next_chunk, dtype=np.int64)
    state.indexes().apply(
        Written(removed, rowids, vectors, lexical_rows, chunk_ids, lexical_metadata)
    )
    return len(new_ids)


def _next_id(conn: sqlite3.Connection, table: str) -> int:
    # AUTOINCREMENT's counter: ids are never reused, even after deletes, so a derived
    # index can never confuse a new chunk with a deleted one.
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
    return (int(row[0]) if row else 0) + 1


def _delete_rows(conn: sqlite3.Connection, doc_rowid: int) -> list[int]:
    """Deletes a document's rows inside the caller's transaction; its chunk rowids."""
    ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE doc = ?", (doc_rowid,))]
    conn.execute(
        "DELETE FROM vectors WHERE id IN (SELECT id FROM chunks WHERE doc = ?)", (doc_rowid,)
    )
    conn.execute("DELETE FROM chunks WHERE doc = ?", (doc_rowid,))
    conn.execute("DELETE FROM documents WHERE id = ?", (doc_rowid,))
    delete_fields(conn, doc_rowid)
    return ids


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


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
