"""Writing to the Weaviate store: upserts (batch import with per-object errors, retries,
and the previous version put back when an update fails) and deletes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter as WFilter
from weaviate.exceptions import WeaviateBaseError

from sift.errors import CorpusError, DocumentError
from sift.integrations.stores._documents import (
    PreparedDocument,
    coerce_document,
    content_hash,
    prepare_documents,
)
from sift.integrations.stores.weaviate import _objects, _schema
from sift.integrations.stores.weaviate._collection import Scope
from sift.integrations.stores.weaviate._errors import reason
from sift.integrations.stores.weaviate._paging import batched, ids_per_request
from sift.integrations.stores.weaviate._reads import existing, snapshot
from sift.text import Analyzer
from sift.types import Document, DocumentFailure, UpsertReport

if TYPE_CHECKING:
    from sift.protocols import Embedder

__all__ = ["delete", "delete_where", "upsert"]

Object = DataObject[dict[str, Any], None]


def upsert(
    scope: Scope,
    documents: Iterable[Document],
    *,
    embedder: Embedder,
    chunk_tokens: int,
    batch_docs: int,
    analyzer: Analyzer | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> UpsertReport:
    """Stores documents in groups of `batch_docs` into an existing collection, with the
    terms of `analyzer` (None: a collection made before analyzers were recorded)."""
    report = UpsertReport()
    collection = scope.handle()
    position = 0
    for group in batched(documents, batch_docs):
        docs: dict[str, Document] = {}
        for item in group:
            try:
                doc = coerce_document(item, position)
            except DocumentError as exc:
                ident = getattr(item, "id", None) or (
                    item.get("id") if isinstance(item, dict) else None
                )
                report.failed.append(
                    DocumentFailure(doc_id=str(ident or f"#{position}"), error=str(exc))
                )
                continue
            finally:
                position += 1
            docs.pop(doc.id, None)
            docs[doc.id] = doc  # a later copy of the same id wins
        _upsert_round(
            scope, collection, embedder, chunk_tokens, list(docs.values()), report, analyzer
        )
        if on_progress is not None:
            on_progress(len(group))
    return report


def _upsert_round(
    scope: Scope,
    collection: Any,
    embedder: Embedder,
    chunk_tokens: int,
    docs: list[Document],
    report: UpsertReport,
    analyzer: Analyzer | None,
) -> None:
    if not docs:
        return
    stored = existing(scope, collection, [d.id for d in docs])
    todo = []
    for doc in docs:
        if doc.id in stored and stored[doc.id][0] == content_hash(doc):
            report.unchanged += 1
        else:
            todo.append(doc)
    if not todo:
        return
    prepared, failures = prepare_documents(todo, embedder, chunk_tokens=chunk_tokens)
    report.failed += failures
    objects: list[tuple[str, Object]] = []
    ok_docs: list[PreparedDocument] = []
    for prep in prepared:
        try:
            objs = _objects_of(scope, prep, scope.next_seq(), analyzer)
        except CorpusError as exc:
            report.failed.append(DocumentFailure(doc_id=prep.doc.id, error=str(exc)))
            continue
        ok_docs.append(prep)
        objects += [(prep.doc.id, o) for o in objs]
    # Overwriting a changed document's chunks in place is what makes re-ingest an
    # upsert; keep the stored version so a failed update can put it back.
    previous = snapshot(scope, collection, [p.doc.id for p in ok_docs if p.doc.id in stored])
    errors = import_objects(scope, collection, objects)
    for prep in ok_docs:
        doc_id = prep.doc.id
        if doc_id in errors:
            outcome = _undo(scope, collection, doc_id, previous.get(doc_id, []))
            report.failed.append(DocumentFailure(doc_id=doc_id, error=errors[doc_id] + outcome))
            continue
        old = stored.get(doc_id)
        if old is not None and old[1] > len(prep.chunks):
            delete_where(
                scope,
                collection,
                WFilter.all_of(
                    [
                        WFilter.by_property("doc_id").equal(doc_id),
                        WFilter.by_property("chunk_index").greater_or_equal(
                            float(len(prep.chunks))
                        ),
                    ]
                ),
                "remove the stale chunks of",
            )
        if old is None:
            report.added += 1
        else:
            report.updated += 1
        report.chunks_written += len(prep.chunks)


def _objects_of(
    scope: Scope, prep: PreparedDocument, seq: float, analyzer: Analyzer | None
) -> list[Object]:
    out = []
    new_kinds: dict[str, _schema.PropKind] = {}
    for chunk, vector in zip(prep.chunks, prep.vectors, strict=True):
        props, kinds = _objects.chunk_properties(
            chunk,
            content_hash=prep.hash,
            chunk_count=len(prep.chunks),
            seq=seq,
            analyzer=analyzer,
        )
        new_kinds.update(kinds)
        out.append(
            DataObject(
                properties=props,
                uuid=_objects.chunk_uuid(chunk.chunk_id),
                vector=np.asarray(vector, dtype=np.float32).tolist(),
            )
        )
    scope.ensure_properties(new_kinds, prep.doc.id)
    return out


def import_objects(
    scope: Scope, collection: Any, objects: list[tuple[str, Object]]
) -> dict[str, str]:
    """Sends objects in batches, re-sending failed ones up to `batch_retries` times.

    Returns doc id -> first error for every document with an object that never
    imported."""
    settings = scope.settings
    pending = list(objects)
    last_error: dict[str, str] = {}
    for _attempt in range(settings.batch_retries + 1):
        failed: list[tuple[str, Object]] = []
        for batch in batched(pending, settings.batch_size):
            try:
                result = collection.data.insert_many([obj for _, obj in batch])
            except WeaviateBaseError as exc:
                why = reason(exc)
                for doc_id, obj in batch:
                    failed.append((doc_id, obj))
                    last_error[str(obj.uuid)] = why
                continue
            for index, err in result.errors.items():
                doc_id, obj = batch[index]
                failed.append((doc_id, obj))
                last_error[str(obj.uuid)] = str(getattr(err, "message", err))
        pending = failed
        if not pending:
            return {}
    errors: dict[str, str] = {}
    for doc_id, obj in pending:
        if doc_id not in errors:
            attempts = settings.batch_retries + 1
            errors[doc_id] = (
                f"Weaviate did not import chunk {obj.properties['chunk_id']!r} after "
                f"{attempts} attempt(s): {last_error.get(str(obj.uuid), 'unknown error')}"
            )
    return errors


def _undo(scope: Scope, collection: Any, doc_id: str, previous: list[Object]) -> str:
    """Removes a failed document's partly written chunks and restores its previous
    version, if it had one; says what became of the document."""
    try:
        delete_where(scope, collection, WFilter.by_property("doc_id").equal(doc_id), "clean up")
    except CorpusError as exc:
        return f"; its partly written chunks could not be removed ({exc}): re-run the ingest"
    if not previous:
        return "; the document is not stored (its partly written chunks were removed)"
    lost = import_objects(scope, collection, [(doc_id, obj) for obj in previous])
    if lost:
        return f"; restoring its previous version failed too ({lost[doc_id]}): re-run the ingest"
    return "; the previous version of the document is kept"


def delete(scope: Scope, doc_ids: list[str]) -> int:
    """Deletes documents; how many of them existed."""
    ids = sorted(set(doc_ids))
    if not ids or not scope.exists():
        return 0
    collection = scope.handle()
    found = 0
    for group in batched(ids, ids_per_request(scope)):
        where = WFilter.by_property("doc_id").contains_any(group)
        found += len(existing(scope, collection, group))
        delete_where(scope, collection, where, "delete documents from")
    return found


def delete_where(scope: Scope, collection: Any, where: Any, action: str) -> int:
    """Deletes every object passing `where`; how many were deleted."""
    window = scope.settings.query_maximum_results
    deleted = 0
    while True:
        with scope.errors(action):
            result = collection.data.delete_many(where=where)
        if result.failed:
            raise CorpusError(
                f"{scope.describe()}: {result.failed} object(s) could not be deleted "
                f"while trying to {action} it"
            )
        deleted += int(result.successful)
        # One batch delete removes at most QUERY_MAXIMUM_RESULTS objects: ask again
        # while a request reached that many.
        if int(result.matches) < window or not result.successful:
            return deleted
