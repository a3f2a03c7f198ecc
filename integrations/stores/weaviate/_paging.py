"""How the Weaviate store splits work into requests under the server's query window.

Weaviate answers no query past QUERY_MAXIMUM_RESULTS objects (offset + limit), and its
cursor (`after=uuid`) cannot be combined with a filter. Filtered reads therefore page by
key: each page is sorted, and the next asks only for what sorts after the last object
seen, so every object is returned however many there are, and no offset ever grows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from weaviate.classes.query import Filter as WFilter
from weaviate.classes.query import Sort

from sift.errors import CorpusError

if TYPE_CHECKING:
    from sift.integrations.stores.weaviate._collection import Scope

__all__ = ["batched", "document_objects", "ids_per_request", "ordered_objects"]

T = TypeVar("T")
# Ids per request of a lookup or delete by id (fewer when the server's window is smaller).
_IDS_PER_REQUEST = 500


def ids_per_request(scope: Scope) -> int:
    return min(_IDS_PER_REQUEST, scope.settings.query_maximum_results)


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def document_objects(
    scope: Scope,
    collection: Any,
    doc_ids: Sequence[str],
    *,
    action: str,
    return_properties: list[str] | None = None,
    include_vector: bool = False,
) -> Iterator[Any]:
    """Every stored object of these documents, by document then chunk index.

    Sorted by (doc_id, chunk_index); after a page, every document but the page's last
    is complete, so the next page asks for the rest of that one document and for the
    documents not seen yet."""
    size = scope.settings.query_maximum_results
    single = len(doc_ids) == 1
    sort = (
        Sort.by_property("chunk_index", ascending=True)
        if single
        else Sort.by_property("doc_id").by_property("chunk_index")
    )
    unseen = list(dict.fromkeys(doc_ids))
    after: tuple[str, float] | None = None
    while True:
        parts = []
        if after is not None:
            parts.append(
                WFilter.all_of(
                    [
                        WFilter.by_property("doc_id").equal(after[0]),
                        WFilter.by_property("chunk_index").greater_than(after[1]),
                    ]
                )
            )
        if unseen:
            by_id = WFilter.by_property("doc_id")
            parts.append(by_id.equal(unseen[0]) if single else by_id.contains_any(unseen))
        if not parts:
            return
        with scope.errors(action):
            reply = collection.query.fetch_objects(
                filters=parts[0] if len(parts) == 1 else WFilter.any_of(parts),
                sort=sort,
                limit=size,
                return_properties=return_properties,
                include_vector=include_vector,
            )
        yield from reply.objects
        if len(reply.objects) < size:
            return
        seen = {str(o.properties.get("doc_id")) for o in reply.objects}
        last = reply.objects[-1].properties
        unseen = [d for d in unseen if d not in seen]
        after = (str(last.get("doc_id")), float(last.get("chunk_index") or 0.0))


def ordered_objects(
    scope: Scope,
    collection: Any,
    where: Any,
    *,
    action: str,
    page: int,
    limit: int,
    return_properties: list[str],
) -> Iterator[Any]:
    """Up to `limit` objects passing `where`, in corpus order (ingest sequence, then
    chunk index), paged by key: each page asks for what sorts at or after the last
    object seen. At, not after: two writers may give two documents the same sequence,
    so the objects already seen at the last key are skipped rather than assumed alone."""
    page = min(page, scope.settings.query_maximum_results)
    sort = Sort.by_property("seq").by_property("chunk_index")
    key: tuple[float, float] | None = None
    seen_at_key: set[str] = set()
    sent = 0
    while sent < limit:
        after = None if key is None else _at_or_after(*key)
        # Ask for no more than is still wanted, plus the chunks that will be skipped.
        size = min(page, limit - sent + len(seen_at_key))
        with scope.errors(action):
            reply = collection.query.fetch_objects(
                filters=_all_of([w for w in (where, after) if w is not None]),
                limit=size,
                sort=sort,
                return_properties=return_properties,
            )
        fresh = [o for o in reply.objects if str(o.properties.get("chunk_id")) not in seen_at_key]
        yield from fresh[: limit - sent]
        sent += len(fresh)
        if len(reply.objects) < size:
            return
        if not fresh:
            raise CorpusError(
                f"{scope.describe()}: more than {size} chunks share the ingest sequence "
                f"{key}; grep cannot page past them (re-ingest those documents)"
            )
        last = _key(reply.objects[-1])
        if last != key:
            seen_at_key = set()
        key = last
        seen_at_key |= {str(o.properties.get("chunk_id")) for o in fresh if _key(o) == key}


def _key(obj: Any) -> tuple[float, float]:
    props = obj.properties
    return float(props.get("seq") or 0.0), float(props.get("chunk_index") or 0.0)


def _at_or_after(seq: float, index: float) -> Any:
    return WFilter.any_of(
        [
            WFilter.by_property("seq").greater_than(seq),
            WFilter.all_of(
                [
                    WFilter.by_property("seq").equal(seq),
                    WFilter.by_property("chunk_index").greater_or_equal(index),
                ]
            ),
        ]
    )


def _all_of(parts: list[Any]) -> Any:
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else WFilter.all_of(parts)
