"""grep on the Weaviate store: a Like filter on the pattern's longest literal word narrows
the candidates (in corpus order), RE2 decides; a pattern without one is scanned with the
cursor up to `grep_scan_limit` chunks, and the note says so."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sift.filters import matches
from sift.integrations.stores._checks import GrepRequest
from sift.integrations.stores.weaviate import _filters, _objects, _query, _schema
from sift.integrations.stores.weaviate._collection import Scope
from sift.integrations.stores.weaviate._paging import ordered_objects
from sift.types import Chunk, GrepResult, Hit

__all__ = ["grep"]

_GREP_PAGE = 200


def grep(scope: Scope, request: GrepRequest) -> GrepResult:
    k, filters, excluded = request.k, request.filters, request.exclude
    collection = scope.readable()
    push = _filters.pushdown(filters, scope.kinds(filters), modern=scope.modern())
    if push.nothing:
        return GrepResult()
    needle = _query.like_needle(request.pattern)
    bound = scope.settings.grep_scan_limit
    candidates: Iterator[tuple[float, Chunk]]
    if needle is not None:
        where = _filters.combine(
            push.where,
            _query.like_filter(needle),
            _filters.exclusion(excluded, modern=scope.modern()),
        )
        # Candidates come in corpus order, so the first k matches are the answer. The
        # scan reads one past its bound, to know whether more exist.
        candidates = _filtered_scan(scope, collection, where, bound + 1)
        stop_at_k = True
    else:
        # The cursor walks in UUID order: collect the bounded window's matches, then
        # report the first k of them in corpus order.
        candidates = _cursor_scan(scope, collection)
        stop_at_k = False
    found: list[tuple[float, Hit]] = []
    scanned = 0
    complete = True
    for seq, chunk in candidates:
        scanned += 1
        if scanned > bound:
            complete = False
            break
        if chunk.chunk_id in excluded or not matches(filters, _objects.record_of(chunk)):
            continue
        # Scored like the embedded store: the number of matches in the chunk.
        count = sum(1 for _ in request.regex.finditer(chunk.text))
        if count:
            found.append((seq, Hit(chunk=chunk, score=float(count))))
            if stop_at_k and len(found) == k:
                break
    found.sort(key=lambda item: (item[0], item[1].chunk.index))
    hits = [hit for _, hit in found[:k]]
    note = None
    if len(found) >= k:
        note = (
            f"showing the first {k} matching chunks; more may match, narrow the "
            "pattern or exclude these ids to see others"
        )
    elif not complete:
        why = (
            "the pattern has no literal text to narrow the candidates with"
            if needle is None
            else f"more than {bound} chunks contain {needle!r}"
        )
        note = (
            f"searched only {bound} chunks because {why}; add a literal word "
            "to the pattern (or a filter) to search the whole corpus"
        )
    return GrepResult(hits=hits, note=note)


def _filtered_scan(
    scope: Scope, collection: Any, where: Any, limit: int
) -> Iterator[tuple[float, Chunk]]:
    for obj in ordered_objects(
        scope,
        collection,
        where,
        action="grep",
        page=_GREP_PAGE,
        limit=limit,
        return_properties=[*_schema.RETURN_PROPERTIES, "seq"],
    ):
        yield _objects.seq_of(obj), _objects.chunk_from_properties(obj.properties)


def _cursor_scan(scope: Scope, collection: Any) -> Iterator[tuple[float, Chunk]]:
    with scope.errors("grep"):
        for obj in collection.iterator(
            return_properties=[*_schema.RETURN_PROPERTIES, "seq"],
            cache_size=min(_GREP_PAGE, scope.settings.query_maximum_results),
        ):
            yield _objects.seq_of(obj), _objects.chunk_from_properties(obj.properties)
