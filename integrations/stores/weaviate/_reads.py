"""Reading from the Weaviate store: documents and chunks by id, the stored version of
documents about to be replaced, and the counts behind `stats`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter as WFilter
from weaviate.classes.query import Sort

from sift.integrations.stores.catalog import DocumentInfo
from sift.integrations.stores.locations import CHUNK_KEYS, LOCATION_KEYS
from sift.integrations.stores.weaviate import _objects, _schema
from sift.integrations.stores.weaviate._collection import Scope
from sift.integrations.stores.weaviate._errors import MissingTenantError, empty_for_new_tenant
from sift.integrations.stores.weaviate._paging import batched, document_objects, ids_per_request
from sift.types import Chunk

__all__ = ["counts", "documents", "existing", "get_chunks", "read", "snapshot"]


@empty_for_new_tenant(dict)
def existing(scope: Scope, collection: Any, doc_ids: list[str]) -> dict[str, tuple[str, int]]:
    """doc id -> (content hash, chunk count) of the stored version, from chunk 0."""
    out: dict[str, tuple[str, int]] = {}
    for group in batched(doc_ids, ids_per_request(scope)):
        with scope.errors("look up documents in"):
            reply = collection.query.fetch_objects(
                filters=WFilter.all_of(
                    [
                        WFilter.by_property("doc_id").contains_any(group),
                        WFilter.by_property("chunk_index").equal(0.0),
                    ]
                ),
                limit=len(group),
                return_properties=["doc_id", "content_hash", "chunk_count"],
            )
        for obj in reply.objects:
            props = obj.properties
            out[str(props["doc_id"])] = (
                str(props.get("content_hash") or ""),
                int(props.get("chunk_count") or 0),
            )
    return out


def snapshot(
    scope: Scope, collection: Any, doc_ids: list[str]
) -> dict[str, list[DataObject[dict[str, Any], None]]]:
    """The stored objects (properties and vectors) of these documents, every one of them
    however many there are."""
    out: dict[str, list[DataObject[dict[str, Any], None]]] = {}
    for group in batched(doc_ids, 100):
        for obj in document_objects(
            scope,
            collection,
            group,
            action="read the stored version of documents in",
            include_vector=True,
        ):
            props = dict(obj.properties)
            out.setdefault(str(props.get("doc_id")), []).append(
                DataObject(properties=props, uuid=obj.uuid, vector=obj.vector or None)
            )
    return out


def read(scope: Scope, doc_id: str) -> list[Chunk]:
    """Every chunk of the document, in order."""
    collection = scope.readable()
    objects = document_objects(
        scope, collection, [doc_id], action="read", return_properties=_schema.RETURN_PROPERTIES
    )
    chunks = [_objects.chunk_from_properties(o.properties) for o in objects]
    chunks = [c for c in chunks if c.doc_id == doc_id]
    return sorted(chunks, key=lambda c: c.index)


def get_chunks(scope: Scope, wanted: list[str]) -> list[Chunk]:
    if not wanted:
        return []
    collection = scope.readable()
    found: dict[str, Chunk] = {}
    for group in batched(sorted(set(wanted)), ids_per_request(scope)):
        with scope.errors("get chunks from"):
            reply = collection.query.fetch_objects(
                filters=WFilter.by_property("chunk_id").contains_any(group),
                limit=len(group),
                return_properties=_schema.RETURN_PROPERTIES,
            )
        for obj in reply.objects:
            chunk = _objects.chunk_from_properties(obj.properties)
            found[chunk.chunk_id] = chunk
    return [found[c] for c in wanted if c in found]


def counts(scope: Scope) -> tuple[int, int]:
    """(chunks, documents) stored; zeros for a tenant nothing was written to yet."""
    chunks = documents = 0
    collection = scope.handle()
    with contextlib.suppress(MissingTenantError), scope.errors("count the objects of"):
        chunks = int(collection.aggregate.over_all(total_count=True).total_count or 0)
        documents = int(
            collection.aggregate.over_all(
                total_count=True,
                filters=WFilter.by_property("chunk_index").equal(0.0),
            ).total_count
            or 0
        )
    return chunks, documents


# Chunk-level keys `stores.locations` adds to chunk metadata: not the document's.
_CHUNK_KEYS = CHUNK_KEYS | LOCATION_KEYS


def documents(scope: Scope, prefix: str | None) -> Iterator[DocumentInfo]:
    """Every document by id, from its chunk 0, paged by key (ids after the last one
    seen), so no page ever reaches past the server's query window."""
    collection = scope.readable()
    size = scope.settings.query_maximum_results
    after: str | None = None
    while True:
        parts = [WFilter.by_property("chunk_index").equal(0.0)]
        if after is not None:
            parts.append(WFilter.by_property("doc_id").greater_than(after))
        elif prefix:
            parts.append(WFilter.by_property("doc_id").greater_or_equal(prefix))
        try:
            with scope.errors("list the documents of"):
                reply = collection.query.fetch_objects(
                    filters=WFilter.all_of(parts),
                    sort=Sort.by_property("doc_id"),
                    limit=size,
                    return_properties=["doc_id", "title", "chunk_count", "metadata_json"],
                )
        except MissingTenantError:
            return  # a tenant nothing was written to holds no documents
        for obj in reply.objects:
            chunk = _objects.chunk_from_properties(obj.properties)
            if prefix and not chunk.doc_id.startswith(prefix):
                return
            yield DocumentInfo(
                doc_id=chunk.doc_id,
                title=chunk.title,
                chunks=int(obj.properties.get("chunk_count") or 0),
                metadata={k: v for k, v in chunk.metadata.items() if k not in _CHUNK_KEYS},
            )
        if len(reply.objects) < size:
            return
        after = str(reply.objects[-1].properties.get("doc_id"))
