"""`WeaviateCorpus`: the `Corpus` protocol on a Weaviate collection (weaviate-client v4).

REST carries the schema (create the collection, add metadata properties); gRPC carries
the data (BatchObjects, Search, BatchDelete, Aggregate). Every Weaviate failure leaves
this module as a sift error that names the server and the collection.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import weaviate
from pydantic import BaseModel
from weaviate.classes.data import DataObject
from weaviate.classes.init import AdditionalConfig, Auth, Timeout
from weaviate.classes.query import Filter as WFilter
from weaviate.classes.query import HybridFusion, MetadataQuery, Sort
from weaviate.connect import ConnectionParams
from weaviate.exceptions import (
    UnexpectedStatusCodeError,
    WeaviateBaseError,
    WeaviateConnectionError,
    WeaviateQueryError,
    WeaviateStartUpError,
)

from sift.errors import CorpusError, DocumentError, StoreUnavailableError
from sift.filters import Filter, matches
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
from sift.integrations.stores._embedding import embed_query
from sift.integrations.stores.fusion import (
    DEFAULT_ALPHA,
    DEFAULT_FUSION,
    check_fusion,
    default_alpha,
)
from sift.integrations.stores.patterns import DEFAULT_MAX_PATTERN_CHARS, literal_fragments
from sift.integrations.stores.weaviate import _schema
from sift.integrations.stores.weaviate._paging import batched
from sift.integrations.stores.weaviate._settings import WeaviateSettings, check_tenant
from sift.types import Chunk, CorpusStats, Document, DocumentFailure, GrepResult, Hit, UpsertReport

if TYPE_CHECKING:
    from sift.protocols import Embedder
    from sift.types import SearchMode

__all__ = ["WeaviateCorpus", "WeaviateHealth"]

SCHEMA_VERSION = 1
_DESCRIPTION_PREFIX = "sift:"
# Weaviate's default QUERY_MAXIMUM_RESULTS: no single query may reach past it.
_MAX_WINDOW = 10_000
_GREP_PAGE = 200
# sift's fusion names -> Weaviate's: relative-score fusion, and Weaviate's rank fusion
# (reciprocal-rank style) for "rrf".
_FUSIONS = {"relative_score": HybridFusion.RELATIVE_SCORE, "rrf": HybridFusion.RANKED}


class _MissingTenantError(StoreUnavailableError):
    """The tenant has no shard yet: readers see an empty corpus, writers create it."""


def _empty_for_new_tenant(empty: Callable[[], Any]) -> Callable[[Any], Any]:
    """Reading a tenant nothing was written to yet answers like an empty corpus."""

    def wrap(method: Any) -> Any:
        @functools.wraps(method)
        def inner(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except _MissingTenantError:
                return empty()

        return inner

    return wrap


class WeaviateHealth(BaseModel):
    """What `WeaviateCorpus.health()` found; `ok` only when every part answers."""

    ok: bool
    location: str
    server_version: str | None = None
    rest_ready: bool = False
    grpc_serving: bool = False
    collection_exists: bool = False
    multi_tenancy: bool | None = None
    error: str | None = None


class _Shared:
    """The client and the schema knowledge shared by a corpus and its tenant views."""

    def __init__(self, settings: WeaviateSettings, client: weaviate.WeaviateClient) -> None:
        self.settings = settings
        self.client = client
        self.lock = threading.RLock()
        self.kinds: dict[str, _schema.PropKind] | None = None
        self.multi_tenant: bool | None = None
        self.description: dict[str, Any] = {}
        self.users = 1
        self.last_seq = 0
        self.server_version = ""


class WeaviateCorpus:
    """A sift corpus stored in one Weaviate collection.

    Open it with `WeaviateCorpus.from_url("weaviate://host:8080?grpc=50051&collection=Docs")`
    or with `WeaviateCorpus(WeaviateSettings(...))`. The collection is created on the first
    upsert; reading a collection that does not exist raises StoreUnavailableError.
    `with_tenant(name)` gives a view of one tenant sharing this corpus's connection.
    """

    def __init__(
        self,
        settings: WeaviateSettings | None = None,
        *,
        embedder: Embedder | str | None = None,
        create: bool = True,
        fusion: str = DEFAULT_FUSION,
        alpha: float | None = None,
        chunk_tokens: int | None = None,
        batch_docs: int = 64,
        max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
        max_pattern_chars: int = DEFAULT_MAX_PATTERN_CHARS,
        _shared: _Shared | None = None,
        _tenant: str | None = None,
    ) -> None:
        self._fusion, _ = check_fusion(fusion, DEFAULT_ALPHA if alpha is None else alpha)
        self._alpha_option = alpha
        if batch_docs < 1:
            raise ValueError(f"batch_docs must be at least 1, got {batch_docs!r}")
        self._batch_docs = batch_docs
        self._chunk_tokens_option = chunk_tokens
        self._max_query_chars = max_query_chars
        self._max_pattern_chars = max_pattern_chars
        if _shared is None:
            settings = settings or WeaviateSettings()
            _shared = _Shared(settings, _connect(settings))
            try:
                _shared.server_version = _server_version(_shared)
                _load_schema(_shared)
            except BaseException:
                release_quietly(settings.describe(), [("closing the client", _shared.client.close)])
                raise
        self._shared = _shared
        self._settings = _shared.settings
        if not create and _shared.kinds is None:
            release_quietly(
                _shared.settings.describe(), [("closing the client", _shared.client.close)]
            )
            raise StoreUnavailableError(
                f"{_shared.settings.describe()}: the collection does not exist; index "
                "documents into it first (sift index --store <url> ...)"
            )
        self._tenant = _tenant if _tenant is not None else self._settings.tenant
        self._embedder_option = embedder
        self._embedder: Embedder | None = None
        self._closed = False

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_url(cls, url: str, **options: Any) -> WeaviateCorpus:
        """A corpus from `weaviate://host:8080?grpc=50051&collection=Docs&tenant=t1`.

        Options named like WeaviateSettings fields (tenant, api_key, query_timeout, ...)
        override the URL; the rest (embedder, alpha, chunk_tokens, ...) go to the corpus.
        """
        fields = set(WeaviateSettings.model_fields)
        overrides = {k: v for k, v in options.items() if k in fields}
        rest = {k: v for k, v in options.items() if k not in fields}
        return cls(WeaviateSettings.from_url(url, **overrides), **rest)

    def with_tenant(self, tenant: str) -> WeaviateCorpus:
        """A view of this corpus scoped to `tenant`, on the same connection."""
        check_tenant(tenant)
        with self._shared.lock:
            self._shared.users += 1
        view = WeaviateCorpus(
            embedder=self._embedder_option if self._embedder is None else self._embedder,
            fusion=self._fusion,
            alpha=self._alpha_option,
            chunk_tokens=self._chunk_tokens_option,
            batch_docs=self._batch_docs,
            max_query_chars=self._max_query_chars,
            max_pattern_chars=self._max_pattern_chars,
            _shared=self._shared,
            _tenant=tenant,
        )
        return view

    @property
    def settings(self) -> WeaviateSettings:
        return self._settings

    @property
    def tenant(self) -> str | None:
        return self._tenant

    @property
    def location(self) -> str:
        return self._settings.model_copy(update={"tenant": self._tenant}).url()

    def drop(self) -> bool:
        """Deletes the whole collection (every tenant); True when it existed."""
        existed = self._collection_exists()
        with self._errors("drop the collection at"):
            self._shared.client.collections.delete(self._settings.collection)
        with self._shared.lock:
            self._shared.kinds = None
            self._shared.description = {}
        return existed

    def close(self) -> None:
        """Releases this view; the last view of a connection closes the client (REST and
        gRPC), and CorpusError says so when that fails."""
        if self._closed:
            return
        self._closed = True
        with self._shared.lock:
            self._shared.users -= 1
            last = self._shared.users == 0
        if last:
            release_all(self._describe(), [("closing the client", self._shared.client.close)])

    def __enter__(self) -> WeaviateCorpus:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        close_on_exit(self.close, exc)

    def __repr__(self) -> str:
        return f"WeaviateCorpus({self._describe()})"

    # ------------------------------------------------------------------ health

    def health(self) -> WeaviateHealth:
        """Checks REST readiness, gRPC serving and the collection; never raises."""
        report = WeaviateHealth(ok=False, location=self.location)
        client = self._shared.client
        try:
            report.rest_ready = bool(client.is_ready())
            report.server_version = self._shared.server_version or None
            report.grpc_serving = _grpc_serving(self._settings)
            with self._errors("read the schema of"):
                report.collection_exists = bool(
                    client.collections.exists(self._settings.collection)
                )
            if report.collection_exists:
                _load_schema(self._shared)
                report.multi_tenancy = self._shared.multi_tenant
        except Exception as exc:
            report.error = str(exc)
        report.ok = report.rest_ready and report.grpc_serving and report.collection_exists
        if not report.ok and report.error is None:
            missing = [
                name
                for name, good in (
                    ("REST /v1/.well-known/ready", report.rest_ready),
                    ("gRPC health", report.grpc_serving),
                    (f"collection {self._settings.collection!r}", report.collection_exists),
                )
                if not good
            ]
            report.error = f"{self._describe()}: not answering: {', '.join(missing)}"
        return report

    # ------------------------------------------------------------------ writes

    def upsert(
        self,
        documents: Iterable[Document],
        *,
        on_progress: Callable[[int], None] | None = None,
    ) -> UpsertReport:
        report = UpsertReport()
        self._ensure_collection()
        collection = self._collection()
        embedder = self._get_embedder()
        position = 0
        for group in batched(documents, self._batch_docs):
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
            self._upsert_round(collection, embedder, list(docs.values()), report)
            if on_progress is not None:
                on_progress(len(group))
        return report

    def _upsert_round(
        self, collection: Any, embedder: Embedder, docs: list[Document], report: UpsertReport
    ) -> None:
        if not docs:
            return
        existing = self._existing(collection, [d.id for d in docs])
        todo = []
        for doc in docs:
            if doc.id in existing and existing[doc.id][0] == content_hash(doc):
                report.unchanged += 1
            else:
                todo.append(doc)
        if not todo:
            return
        prepared, failures = prepare_documents(todo, embedder, chunk_tokens=self._chunk_tokens())
        report.failed += failures
        objects: list[tuple[str, DataObject]] = []
        ok_docs: list[PreparedDocument] = []
        for prep in prepared:
            try:
                objs = self._objects(prep, self._next_seq())
            except CorpusError as exc:
                report.failed.append(DocumentFailure(doc_id=prep.doc.id, error=str(exc)))
                continue
            ok_docs.append(prep)
            objects += [(prep.doc.id, o) for o in objs]
        # Overwriting a changed document's chunks in place is what makes re-ingest an
        # upsert; keep the stored version so a failed update can put it back.
        previous = self._snapshot(collection, [p.doc.id for p in ok_docs if p.doc.id in existing])
        errors = self._import(collection, objects)
        for prep in ok_docs:
            doc_id = prep.doc.id
            if doc_id in errors:
                outcome = self._undo(collection, doc_id, previous.get(doc_id, []))
                report.failed.append(DocumentFailure(doc_id=doc_id, error=errors[doc_id] + outcome))
                continue
            old = existing.get(doc_id)
            if old is not None and old[1] > len(prep.chunks):
                self._delete_where(
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

    def _next_seq(self) -> float:
        with self._shared.lock:
            seq = max(self._shared.last_seq + 1, time.time_ns() // 1000)
            self._shared.last_seq = seq
        return float(seq)

    def _objects(self, prep: PreparedDocument, seq: float) -> list[DataObject]:
        out = []
        new_kinds: dict[str, _schema.PropKind] = {}
        for chunk, vector in zip(prep.chunks, prep.vectors, strict=True):
            props, kinds = _schema.chunk_properties(
                chunk, content_hash=prep.hash, chunk_count=len(prep.chunks), seq=seq
            )
            new_kinds.update(kinds)
            out.append(
                DataObject(
                    properties=props,
                    uuid=_schema.chunk_uuid(chunk.chunk_id),
                    vector=np.asarray(vector, dtype=np.float32).tolist(),
                )
            )
        self._ensure_properties(new_kinds, prep.doc.id)
        return out

    def _ensure_properties(self, wanted: dict[str, _schema.PropKind], doc_id: str) -> None:
        shared = self._shared
        with shared.lock:
            kinds = shared.kinds or {}
            for name, kind in wanted.items():
                have = kinds.get(name)
                if have == kind:
                    continue
                if have is not None:
                    key = name[2:]
                    raise CorpusError(
                        f"metadata {key!r} of document {doc_id!r} is {kind} but the collection "
                        f"{self._settings.collection!r} stores it as {have}; give it the "
                        "same type in every document"
                    )
                with self._errors("add a metadata property to"):
                    self._collection().config.add_property(_schema.new_property(name, kind))
                kinds[name] = kind
            shared.kinds = kinds

    def _import(self, collection: Any, objects: list[tuple[str, DataObject]]) -> dict[str, str]:
        """Sends objects in batches, re-sending failed ones up to `batch_retries` times.

        Returns doc id -> first error for every document with an object that never
        imported."""
        pending = list(objects)
        last_error: dict[str, str] = {}
        for _attempt in range(self._settings.batch_retries + 1):
            failed: list[tuple[str, DataObject]] = []
            for batch in batched(pending, self._settings.batch_size):
                try:
                    result = collection.data.insert_many([obj for _, obj in batch])
                except WeaviateBaseError as exc:
                    reason = _reason(exc)
                    for doc_id, obj in batch:
                        failed.append((doc_id, obj))
                        last_error[str(obj.uuid)] = reason
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
                attempts = self._settings.batch_retries + 1
                errors[doc_id] = (
                    f"Weaviate did not import chunk {obj.properties['chunk_id']!r} after "
                    f"{attempts} attempt(s): {last_error.get(str(obj.uuid), 'unknown error')}"
                )
        return errors

    def _snapshot(self, collection: Any, doc_ids: list[str]) -> dict[str, list[DataObject]]:
        """The stored objects (properties and vectors) of these documents."""
        out: dict[str, list[DataObject]] = {}
        for group in batched(doc_ids, 100):
            with self._errors("read the stored version of documents in"):
                reply = collection.query.fetch_objects(
                    filters=WFilter.by_property("doc_id").contains_any(group),
                    limit=_MAX_WINDOW,
                    include_vector=True,
                )
            for obj in reply.objects:
                props = dict(obj.properties)
                out.setdefault(str(props.get("doc_id")), []).append(
                    DataObject(properties=props, uuid=obj.uuid, vector=obj.vector or None)
                )
        return out

    def _undo(self, collection: Any, doc_id: str, previous: list[DataObject]) -> str:
        """Removes a failed document's partly written chunks and restores its previous
        version, if it had one; says what became of the document."""
        try:
            self._delete_where(collection, WFilter.by_property("doc_id").equal(doc_id), "clean up")
        except CorpusError as exc:
            return f"; its partly written chunks could not be removed ({exc}): re-run the ingest"
        if not previous:
            return "; the document is not stored (its partly written chunks were removed)"
        lost = self._import(collection, [(doc_id, obj) for obj in previous])
        if lost:
            return (
                f"; restoring its previous version failed too ({lost[doc_id]}): re-run the ingest"
            )
        return "; the previous version of the document is kept"

    @_empty_for_new_tenant(int)
    def delete(self, doc_ids: Iterable[str]) -> int:
        ids = sorted(set(check_ids(doc_ids, name="doc_ids")))
        if not ids or not self._collection_exists():
            return 0
        collection = self._collection()
        found = 0
        for group in batched(ids, 500):
            where = WFilter.by_property("doc_id").contains_any(group)
            found += len(self._existing(collection, group))
            self._delete_where(collection, where, "delete documents from")
        return found

    def _delete_where(self, collection: Any, where: Any, action: str) -> int:
        with self._errors(action):
            result = collection.data.delete_many(where=where)
        if result.failed:
            raise CorpusError(
                f"{self._describe()}: {result.failed} object(s) could not be deleted "
                f"while trying to {action} it"
            )
        return int(result.successful)

    # ------------------------------------------------------------------ reads

    @_empty_for_new_tenant(list)
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
        text, k, mode, filters = request.text, request.k, request.mode, request.filters
        weight = self._alpha if request.alpha is None else request.alpha
        collection = self._readable_collection()
        push = _schema.pushdown(filters, self._kinds(filters), modern=self._modern())
        if push.nothing:
            return []
        excluded = request.exclude
        where = _schema.combine(push.where, _schema.exclusion(excluded, modern=self._modern()))
        limit = k if push.exact else min(k * 5 + 50, _MAX_WINDOW)
        common: dict[str, Any] = {
            "limit": limit,
            "filters": where,
            "return_properties": _schema.RETURN_PROPERTIES,
        }
        with self._errors("search"):
            if mode == "bm25":
                reply = collection.query.bm25(
                    query=text,
                    query_properties=_schema.SEARCH_PROPERTIES,
                    return_metadata=MetadataQuery(score=True),
                    **common,
                )
            else:
                vec = embed_query(self._get_embedder(), text, vector).tolist()
                if mode == "dense":
                    reply = collection.query.near_vector(
                        near_vector=vec, return_metadata=MetadataQuery(distance=True), **common
                    )
                else:
                    reply = collection.query.hybrid(
                        query=text,
                        vector=vec,
                        alpha=weight,
                        fusion_type=_FUSIONS[self._fusion],
                        query_properties=_schema.SEARCH_PROPERTIES,
                        return_metadata=MetadataQuery(score=True),
                        **common,
                    )
        hits: list[Hit] = []
        for obj in reply.objects:
            chunk = _schema.chunk_from_properties(obj.properties)
            if chunk.chunk_id in excluded or not matches(filters, _schema.record_of(chunk)):
                continue
            if mode == "dense":
                # Cosine distance back to similarity, as the embedded store scores.
                score = 1.0 - float(obj.metadata.distance or 0.0)
            else:
                score = float(obj.metadata.score or 0.0)
            hits.append(Hit(chunk=chunk, score=score))
            if len(hits) == k:
                break
        return hits

    @_empty_for_new_tenant(GrepResult)
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
        regex, k, filters = request.regex, request.k, request.filters
        collection = self._readable_collection()
        push = _schema.pushdown(filters, self._kinds(filters), modern=self._modern())
        if push.nothing:
            return GrepResult()
        excluded = request.exclude
        needle = _like_token(literal_fragments(pattern))
        bound = self._settings.grep_scan_limit
        candidates: Iterator[tuple[float, Chunk]]
        if needle is not None:
            where = _schema.combine(
                push.where,
                WFilter.by_property("text").like(f"*{needle}*"),
                _schema.exclusion(excluded, modern=self._modern()),
            )
            # Candidates come in corpus order, so the first k matches are the answer.
            # The scan reads one past its bound (to know whether more exist) and
            # offset + limit may not pass the server's window.
            candidates = self._filtered_scan(collection, where, min(bound, _MAX_WINDOW - 1))
            stop_at_k = True
        else:
            # The cursor walks in UUID order: collect the bounded window's matches, then
            # report the first k of them in corpus order.
            candidates = self._cursor_scan(collection)
            stop_at_k = False
        found: list[tuple[float, Hit]] = []
        scanned = 0
        complete = True
        for seq, chunk in candidates:
            scanned += 1
            if scanned > bound:
                complete = False
                break
            if chunk.chunk_id in excluded or not matches(filters, _schema.record_of(chunk)):
                continue
            # Scored like the embedded store: the number of matches in the chunk.
            count = sum(1 for _ in regex.finditer(chunk.text))
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
        self, collection: Any, where: Any, bound: int
    ) -> Iterator[tuple[float, Chunk]]:
        offset = 0
        while offset <= bound:
            size = min(_GREP_PAGE, bound - offset + 1)
            with self._errors("grep"):
                reply = collection.query.fetch_objects(
                    filters=where,
                    limit=size,
                    offset=offset,
                    sort=Sort.by_property("seq").by_property("chunk_index"),
                    return_properties=[*_schema.RETURN_PROPERTIES, "seq"],
                )
            for obj in reply.objects:
                yield _seq(obj), _schema.chunk_from_properties(obj.properties)
            if len(reply.objects) < size:
                return
            offset += size

    def _cursor_scan(self, collection: Any) -> Iterator[tuple[float, Chunk]]:
        with self._errors("grep"):
            for obj in collection.iterator(
                return_properties=[*_schema.RETURN_PROPERTIES, "seq"], cache_size=_GREP_PAGE
            ):
                yield _seq(obj), _schema.chunk_from_properties(obj.properties)

    @_empty_for_new_tenant(list)
    def read(self, doc_id: str) -> list[Chunk]:
        check_doc_id(doc_id)
        collection = self._readable_collection()
        with self._errors("read"):
            reply = collection.query.fetch_objects(
                filters=WFilter.by_property("doc_id").equal(doc_id),
                sort=Sort.by_property("chunk_index", ascending=True),
                limit=_MAX_WINDOW,
                return_properties=_schema.RETURN_PROPERTIES,
            )
        chunks = [_schema.chunk_from_properties(o.properties) for o in reply.objects]
        chunks = [c for c in chunks if c.doc_id == doc_id]
        return sorted(chunks, key=lambda c: c.index)

    @_empty_for_new_tenant(list)
    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        wanted = check_ids(chunk_ids, name="chunk_ids")
        if not wanted:
            return []
        collection = self._readable_collection()
        found: dict[str, Chunk] = {}
        for group in batched(sorted(set(wanted)), 500):
            with self._errors("get chunks from"):
                reply = collection.query.fetch_objects(
                    filters=WFilter.by_property("chunk_id").contains_any(group),
                    limit=len(group),
                    return_properties=_schema.RETURN_PROPERTIES,
                )
            for obj in reply.objects:
                chunk = _schema.chunk_from_properties(obj.properties)
                found[chunk.chunk_id] = chunk
        return [found[c] for c in wanted if c in found]

    def stats(self) -> CorpusStats:
        embedder = self._recorded_embedder()
        exists = self._collection_exists()
        chunks = documents = 0
        if exists:
            collection = self._collection()
            with contextlib.suppress(_MissingTenantError), self._errors("count the objects of"):
                chunks = int(collection.aggregate.over_all(total_count=True).total_count or 0)
                documents = int(
                    collection.aggregate.over_all(
                        total_count=True,
                        filters=WFilter.by_property("chunk_index").equal(0.0),
                    ).total_count
                    or 0
                )
        return CorpusStats(
            documents=documents,
            chunks=chunks,
            embedder=embedder[0],
            dim=embedder[1],
            backend="weaviate",
            location=self.location,
            schema_version=SCHEMA_VERSION,
            extra={
                "collection": self._settings.collection,
                "tenant": self._tenant,
                "collection_exists": exists,
                "server_version": self._shared.server_version,
                "fusion": self._fusion,
                "alpha": self._alpha,
                "chunk_tokens": self._chunk_tokens(),
            },
        )

    # ------------------------------------------------------------------ internals

    def _describe(self) -> str:
        tenant = f", tenant {self._tenant!r}" if self._tenant else ""
        base = self._settings.model_copy(update={"tenant": None}).describe()
        return base + tenant

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except (WeaviateConnectionError, WeaviateStartUpError) as exc:
            raise StoreUnavailableError(
                f"cannot {action} {self._describe()}: the server is unreachable "
                f"({_reason(exc)}); check the host and ports, or start Weaviate "
                "(examples/weaviate/docker-compose.yml)"
            ) from exc
        except UnexpectedStatusCodeError as exc:
            if exc.status_code in (401, 403):
                raise StoreUnavailableError(
                    f"{self._describe()} refused the request to {action} it (HTTP "
                    f"{exc.status_code}): check the API key (api_key_env=... in the URL or "
                    "SIFT_WEAVIATE_API_KEY)"
                ) from exc
            raise CorpusError(f"cannot {action} {self._describe()}: {_reason(exc)}") from exc
        except WeaviateQueryError as exc:
            reason = _reason(exc)
            lowered = reason.lower()
            if "deadline" in lowered or "timed out" in lowered or "timeout" in lowered:
                raise StoreUnavailableError(
                    f"{self._describe()} did not answer in time to {action} it ({reason}); "
                    "raise query_timeout/insert_timeout or check the server's load"
                ) from exc
            if "unavailable" in lowered or "connection refused" in lowered:
                raise StoreUnavailableError(
                    f"cannot {action} {self._describe()}: gRPC is unreachable ({reason})"
                ) from exc
            if "tenant" in lowered and ("not found" in lowered or "not exist" in lowered):
                raise _MissingTenantError(
                    f"cannot {action} {self._describe()}: the tenant does not exist "
                    f"({reason}); index documents into it first"
                ) from exc
            raise CorpusError(f"cannot {action} {self._describe()}: {reason}") from exc
        except WeaviateBaseError as exc:
            raise CorpusError(f"cannot {action} {self._describe()}: {_reason(exc)}") from exc

    def _modern(self) -> bool:
        # Not and ContainsNone filters exist from Weaviate 1.33.
        return _version_tuple(self._shared.server_version) >= (1, 33)

    def _collection_exists(self) -> bool:
        if self._shared.kinds is not None:
            return True
        _load_schema(self._shared)
        return self._shared.kinds is not None

    def _kinds(self, filters: Filter | None = None) -> dict[str, _schema.PropKind]:
        kinds = self._shared.kinds or {}
        fields = {_schema.field_property(c.field) for c in (filters.conditions if filters else ())}
        if fields - set(kinds):
            # Another writer may have added metadata since this corpus read the schema; a
            # field unknown here would otherwise be judged absent from every object.
            _load_schema(self._shared)
            kinds = self._shared.kinds or {}
        return dict(kinds)

    def _collection(self) -> Any:
        shared = self._shared
        collection = shared.client.collections.use(self._settings.collection)
        if shared.multi_tenant:
            if not self._tenant:
                raise CorpusError(
                    f"{self._describe()} is multi-tenant: name a tenant (tenant=... in the "
                    "store URL, or corpus.with_tenant(name))"
                )
            return collection.with_tenant(self._tenant)
        if self._tenant:
            raise CorpusError(
                f"{self._describe()}: the collection was created without multi-tenancy, so "
                "it has no tenants; drop the tenant option or use another collection"
            )
        return collection

    def _readable_collection(self) -> Any:
        if not self._collection_exists():
            raise StoreUnavailableError(
                f"{self._describe()}: the collection does not exist; index documents "
                "into it first (sift index --store <url> ...)"
            )
        return self._collection()

    def _ensure_collection(self) -> None:
        shared = self._shared
        with shared.lock:
            if self._collection_exists():
                self._check_embedder()
                return
            settings = self._settings
            multi = settings.multi_tenancy
            if multi is None:
                multi = self._tenant is not None
            embedder = self._get_embedder()
            description = {
                "schema": SCHEMA_VERSION,
                "embedder": embedder.name,
                "dim": embedder.dim,
                "chunk_tokens": self._chunk_tokens(),
            }
            config = _schema.collection_config(
                settings.collection,
                multi_tenancy=multi,
                vectorizer=settings.vectorizer,
                ollama_endpoint=settings.ollama_endpoint,
                ollama_model=settings.ollama_model,
            )
            config["description"] = _DESCRIPTION_PREFIX + json.dumps(description)
            with self._errors("create the collection at"):
                shared.client.collections.create(**config)
            _load_schema(shared)
            if shared.kinds is None:
                raise StoreUnavailableError(
                    f"{self._describe()}: the collection was created "
                    "but the server does not show it"
                )

    def _chunk_tokens(self) -> int:
        # A collection keeps the chunk size it was made with, as the embedded store does.
        recorded = self._shared.description.get("chunk_tokens")
        return int(self._chunk_tokens_option or recorded or 512)

    def _recorded_embedder(self) -> tuple[str, int]:
        recorded = self._shared.description
        if recorded.get("embedder"):
            return str(recorded["embedder"]), int(recorded.get("dim", 0))
        embedder = self._get_embedder()
        return embedder.name, embedder.dim

    def _check_embedder(self) -> None:
        recorded = self._shared.description
        embedder = self._get_embedder()
        if recorded.get("embedder") and recorded["embedder"] != embedder.name:
            raise CorpusError(
                f"{self._describe()} was indexed with the embedder {recorded['embedder']!r}, "
                f"not {embedder.name!r}; open it with embedder={recorded['embedder']!r} or "
                "index into another collection"
            )

    @property
    def _alpha(self) -> float:
        # Resolved with the embedder, which a collection may only name once it is read.
        if self._alpha_option is not None:
            return float(self._alpha_option)
        return default_alpha(self._get_embedder().name)

    def _get_embedder(self) -> Embedder:
        if self._embedder is not None:
            return self._embedder
        from sift.integrations.embedders import DEFAULT_EMBEDDER, get_embedder

        option = self._embedder_option
        if option is None:
            option = self._shared.description.get("embedder") or DEFAULT_EMBEDDER
        self._embedder = get_embedder(option) if isinstance(option, str) else option
        return self._embedder

    @_empty_for_new_tenant(dict)
    def _existing(self, collection: Any, doc_ids: list[str]) -> dict[str, tuple[str, int]]:
        """doc id -> (content hash, chunk count) of the stored version, from chunk 0."""
        out: dict[str, tuple[str, int]] = {}
        for group in batched(doc_ids, 500):
            with self._errors("look up documents in"):
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


# --------------------------------------------------------------------------- helpers


def _connect(settings: WeaviateSettings) -> weaviate.WeaviateClient:
    api_key = settings.api_key.get_secret_value() if settings.api_key else None
    try:
        params = ConnectionParams.from_params(
            http_host=settings.host,
            http_port=settings.http_port,
            http_secure=settings.secure,
            grpc_host=settings.grpc_host or settings.host,
            grpc_port=settings.grpc_port,
            grpc_secure=settings.secure,
        )
    except ValueError as exc:
        raise ValueError(
            f"invalid Weaviate connection settings ({settings.describe()}): {_reason(exc)}"
        ) from None
    client = weaviate.WeaviateClient(
        connection_params=params,
        auth_client_secret=Auth.api_key(api_key) if api_key else None,
        additional_config=AdditionalConfig(
            timeout=Timeout(
                query=settings.query_timeout,
                insert=settings.insert_timeout,
                init=settings.init_timeout,
            )
        ),
        # The client's own init checks ask pypi.org for the latest version; sift never
        # touches the network beyond the store, so it runs its own checks below.
        skip_init_checks=True,
    )
    try:
        client.connect()
    except UnexpectedStatusCodeError as exc:
        release_quietly(settings.describe(), [("closing the client", client.close)])
        if exc.status_code in (401, 403):
            raise StoreUnavailableError(
                f"{settings.describe()} refused the connection (HTTP {exc.status_code}): "
                "check the API key (api_key_env=... in the URL or SIFT_WEAVIATE_API_KEY)"
            ) from exc
        raise StoreUnavailableError(
            f"cannot connect to {settings.describe()}: {_reason(exc)}"
        ) from exc
    except WeaviateBaseError as exc:
        release_quietly(settings.describe(), [("closing the client", client.close)])
        raise StoreUnavailableError(
            f"cannot connect to {settings.describe()}: the server is unreachable "
            f"({_reason(exc)}); check the host and ports, or start Weaviate "
            "(examples/weaviate/docker-compose.yml)"
        ) from exc
    if not _grpc_serving(settings):
        release_quietly(settings.describe(), [("closing the client", client.close)])
        raise StoreUnavailableError(
            f"cannot connect to {settings.describe()}: REST answers but gRPC at "
            f"{settings.grpc_address} does not; check the gRPC port (?grpc=PORT in the URL)"
        )
    return client


def _grpc_serving(settings: WeaviateSettings) -> bool:
    """The gRPC health check the client would run, without its pypi.org version check."""
    import grpc
    from weaviate.proto.v1 import health_weaviate_pb2

    address = settings.grpc_address
    channel = (
        grpc.secure_channel(address, grpc.ssl_channel_credentials())
        if settings.secure
        else grpc.insecure_channel(address)
    )
    try:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health_weaviate_pb2.WeaviateHealthCheckRequest.SerializeToString,
            response_deserializer=health_weaviate_pb2.WeaviateHealthCheckResponse.FromString,
        )
        reply = check(
            health_weaviate_pb2.WeaviateHealthCheckRequest(), timeout=settings.init_timeout
        )
        return reply.status == health_weaviate_pb2.WeaviateHealthCheckResponse.SERVING
    except grpc.RpcError:
        return False
    finally:
        channel.close()


def _server_version(shared: _Shared) -> str:
    try:
        return str(shared.client.get_meta().get("version", ""))
    except WeaviateBaseError as exc:
        raise StoreUnavailableError(
            f"cannot read the version of {shared.settings.describe()}: {_reason(exc)}"
        ) from exc


def _load_schema(shared: _Shared) -> None:
    """Refreshes what the shared state knows of the collection (None when absent)."""
    settings = shared.settings
    try:
        collection = shared.client.collections.use(settings.collection)
        if not shared.client.collections.exists(settings.collection):
            shared.kinds = None
            return
        config = collection.config.get()
    except UnexpectedStatusCodeError as exc:
        if exc.status_code in (401, 403):
            raise StoreUnavailableError(
                f"{settings.describe()} refused to show its schema (HTTP {exc.status_code}): "
                "check the API key"
            ) from exc
        raise StoreUnavailableError(
            f"cannot read the schema of {settings.describe()}: {_reason(exc)}"
        ) from exc
    except WeaviateBaseError as exc:
        raise StoreUnavailableError(
            f"cannot read the schema of {settings.describe()}: {_reason(exc)}"
        ) from exc
    kinds = _schema.kinds_from_schema(config.properties)
    missing = [p for p in ("doc_id", "chunk_id", "text", "chunk_index") if p not in kinds]
    if missing:
        raise CorpusError(
            f"{settings.describe()} exists but is not a sift collection (no {missing} "
            "properties); choose another collection name"
        )
    description = config.description or ""
    recorded: dict[str, Any] = {}
    if description.startswith(_DESCRIPTION_PREFIX):
        with contextlib.suppress(ValueError):
            recorded = json.loads(description[len(_DESCRIPTION_PREFIX) :])
    shared.kinds = kinds
    shared.description = recorded if isinstance(recorded, dict) else {}
    shared.multi_tenant = bool(config.multi_tenancy_config.enabled)


def _like_token(fragments: list[str]) -> str | None:
    """The longest word-character run of the pattern's literal fragments, lowercased.

    `text` is word-tokenized, so Like matches single lowercased tokens: a run of word
    characters inside a fragment is always inside one token of every matching text.
    """
    import re

    runs = [r.lower() for f in fragments for r in re.findall(r"[0-9A-Za-z]+", f)]
    runs = [r for r in runs if len(r) >= 2]
    return max(runs, key=len) if runs else None


def _seq(obj: Any) -> float:
    value = obj.properties.get("seq")
    return float(value) if isinstance(value, int | float) else 0.0


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc)
    return " ".join(str(text).split())[:500]


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)
