"""`WeaviateCorpus`: the `Corpus` protocol on a Weaviate collection (weaviate-client v4).

REST carries the schema (create the collection, add metadata properties); gRPC carries
the data (BatchObjects, Search, BatchDelete, Aggregate). Every Weaviate failure leaves
the store as a sift error that names the server and the collection. This class holds the
options and the embedder, checks arguments, and hands each operation to the module of
its concern: _writes, _search, _grep, _reads, _health.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sift.errors import CorpusError, StoreUnavailableError
from sift.filters import Filter
from sift.fusion import (
    DEFAULT_ALPHA,
    DEFAULT_FUSION,
    check_fusion,
    default_alpha,
)
from sift.integrations.stores._checks import (
    DEFAULT_MAX_QUERY_CHARS,
    check_doc_id,
    check_grep,
    check_ids,
    check_search,
)
from sift.integrations.stores._closing import close_on_exit, release_all, release_quietly
from sift.integrations.stores.catalog import DocumentInfo
from sift.integrations.stores.patterns import DEFAULT_MAX_PATTERN_CHARS
from sift.integrations.stores.weaviate import _grep, _reads, _search, _writes
from sift.integrations.stores.weaviate._collection import Scope, Shared, load_schema
from sift.integrations.stores.weaviate._connection import connect, server_version
from sift.integrations.stores.weaviate._errors import empty_for_new_tenant
from sift.integrations.stores.weaviate._health import WeaviateHealth, check_health
from sift.integrations.stores.weaviate._schema import SCHEMA_VERSION
from sift.integrations.stores.weaviate._settings import WeaviateSettings, check_tenant
from sift.text import Analyzer, default_analyzer
from sift.types import Chunk, CorpusStats, Document, GrepResult, Hit, SearchMode, UpsertReport

if TYPE_CHECKING:
    from sift.protocols import Embedder

__all__ = ["WeaviateCorpus", "WeaviateHealth"]


class WeaviateCorpus:
    """A sift corpus stored in one Weaviate collection.

    Open it with `WeaviateCorpus.from_url("weaviate://host:8080?grpc=50051&collection=Docs")`
    or with `WeaviateCorpus(WeaviateSettings(...))`. The collection is created on the first
    upsert; reading a collection that does not exist raises StoreUnavailableError.
    `with_tenant(name)` gives a view of one tenant sharing this corpus's connection.

    It keeps no entity graph: the heuristic planner builds the graph of the chunks an
    episode has read (docs/entity-graph.md), which needs nothing from the store.
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
        analyzer: Analyzer | None = None,
        batch_docs: int = 64,
        max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
        max_pattern_chars: int = DEFAULT_MAX_PATTERN_CHARS,
        _shared: Shared | None = None,
        _tenant: str | None = None,
    ) -> None:
        self._fusion, _ = check_fusion(fusion, DEFAULT_ALPHA if alpha is None else alpha)
        if analyzer is not None and not isinstance(analyzer, Analyzer):
            raise TypeError(f"analyzer must be a sift.text.Analyzer, got {type(analyzer).__name__}")
        self._analyzer_option = analyzer
        self._alpha_option = alpha
        if batch_docs < 1:
            raise ValueError(f"batch_docs must be at least 1, got {batch_docs!r}")
        self._batch_docs = batch_docs
        self._chunk_tokens_option = chunk_tokens
        self._max_query_chars = max_query_chars
        self._max_pattern_chars = max_pattern_chars
        if _shared is None:
            settings = settings or WeaviateSettings()
            _shared = Shared(settings, connect(settings))
            try:
                _shared.server_version = server_version(_shared.client, settings)
                load_schema(_shared)
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
        self._scope = Scope(_shared, self._tenant)
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
        return WeaviateCorpus(
            embedder=self._embedder_option if self._embedder is None else self._embedder,
            fusion=self._fusion,
            alpha=self._alpha_option,
            chunk_tokens=self._chunk_tokens_option,
            analyzer=self._analyzer_option,
            batch_docs=self._batch_docs,
            max_query_chars=self._max_query_chars,
            max_pattern_chars=self._max_pattern_chars,
            _shared=self._shared,
            _tenant=tenant,
        )

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
        return self._scope.drop()

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
            release_all(self._scope.describe(), [("closing the client", self._shared.client.close)])

    def __enter__(self) -> WeaviateCorpus:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        close_on_exit(self.close, exc)

    def __repr__(self) -> str:
        return f"WeaviateCorpus({self._scope.describe()})"

    def health(self) -> WeaviateHealth:
        """Checks REST readiness, gRPC serving and the collection; never raises."""
        return check_health(self._scope, self.location)

    # ------------------------------------------------------------------ writes

    def upsert(
        self,
        documents: Iterable[Document],
        *,
        on_progress: Callable[[int], None] | None = None,
    ) -> UpsertReport:
        self._ensure_collection()
        return _writes.upsert(
            self._scope,
            documents,
            embedder=self._get_embedder(),
            chunk_tokens=self._chunk_tokens(),
            batch_docs=self._batch_docs,
            analyzer=self._analyzer(),
            on_progress=on_progress,
        )

    @empty_for_new_tenant(int)
    def delete(self, doc_ids: Iterable[str]) -> int:
        return _writes.delete(self._scope, check_ids(doc_ids, name="doc_ids"))

    # ------------------------------------------------------------------ reads

    @empty_for_new_tenant(list)
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
        return _search.search(
            self._scope,
            request,
            embedder=self._get_embedder(),
            vector=vector,
            alpha=self._alpha if request.alpha is None else request.alpha,
            fusion=self._fusion,
            analyzer=self._analyzer(),
        )

    @empty_for_new_tenant(GrepResult)
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
        return _grep.grep(self._scope, request)

    @empty_for_new_tenant(list)
    def read(self, doc_id: str) -> list[Chunk]:
        return _reads.read(self._scope, check_doc_id(doc_id))

    @empty_for_new_tenant(list)
    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return _reads.get_chunks(self._scope, check_ids(chunk_ids, name="chunk_ids"))

    def documents(self, *, prefix: str | None = None) -> Iterator[DocumentInfo]:
        """Every stored document by id (`DocumentCatalog`): its title, chunk count and
        metadata (read from its first chunk)."""
        return _reads.documents(self._scope, prefix)

    def stats(self) -> CorpusStats:
        embedder, dim = self._recorded_embedder()
        exists = self._scope.exists()
        chunks, documents = _reads.counts(self._scope) if exists else (0, 0)
        return CorpusStats(
            documents=documents,
            chunks=chunks,
            embedder=embedder,
            dim=dim,
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
                "analyzer": self._analyzer_name(exists),
            },
        )

    # ------------------------------------------------------------------ options

    def _ensure_collection(self) -> None:
        with self._shared.lock:
            if self._scope.exists():
                self._check_embedder()
                return
            embedder = self._get_embedder()
            self._scope.create(
                {
                    "schema": SCHEMA_VERSION,
                    "embedder": embedder.name,
                    "dim": embedder.dim,
                    "chunk_tokens": self._chunk_tokens(),
                    "analyzer": (self._analyzer_option or default_analyzer()).spec,
                }
            )

    def _analyzer(self) -> Analyzer | None:
        """The collection's analyzer; None for a collection made before analyzers were
        recorded (its keyword search uses Weaviate's word tokenizer, as it always did)."""
        recorded = self._shared.description.get("analyzer")
        option = self._analyzer_option
        if recorded is None:
            if self._shared.kinds is None:
                return option or default_analyzer()  # created with it on the first upsert
            if option is not None:
                raise CorpusError(
                    f"{self._scope.describe()} was made before sift recorded analyzers: "
                    "its keyword search uses Weaviate's word tokenizer. Open it without "
                    "analyzer=..., or index into a new collection to use one"
                )
            return None
        try:
            analyzer = Analyzer.from_spec(str(recorded))
        except ValueError as exc:
            raise CorpusError(
                f"{self._scope.describe()}: {exc} (re-index into a new collection)"
            ) from None
        if option is not None and option.spec != analyzer.spec:
            raise CorpusError(
                f"{self._scope.describe()} was indexed with the analyzer {analyzer.spec}, "
                f"not {option.spec}: its terms are stored in every object. Open it without "
                "analyzer=..., or index into a new collection to change it"
            )
        return analyzer

    def _analyzer_name(self, exists: bool) -> str:
        if not exists:
            return (self._analyzer_option or default_analyzer()).spec
        try:
            analyzer = self._analyzer()
        except CorpusError as exc:
            return f"unusable: {exc}"
        return analyzer.spec if analyzer is not None else "weaviate word tokenizer"

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
                f"{self._scope.describe()} was indexed with the embedder "
                f"{recorded['embedder']!r}, not {embedder.name!r}; open it with "
                f"embedder={recorded['embedder']!r} or index into another collection"
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
