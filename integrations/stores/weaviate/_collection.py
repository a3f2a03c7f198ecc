"""The Weaviate collection a corpus lives in: the connection and schema knowledge its
views share, and one view's access to the collection (scoped to a tenant or to none),
including creating it, adding metadata properties and dropping it."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

import weaviate
from weaviate.exceptions import UnexpectedStatusCodeError, WeaviateBaseError

from sift.errors import CorpusError, StoreUnavailableError
from sift.filters import Filter
from sift.integrations.stores.weaviate import _schema
from sift.integrations.stores.weaviate._connection import version_tuple
from sift.integrations.stores.weaviate._errors import reason, translated
from sift.integrations.stores.weaviate._settings import WeaviateSettings

__all__ = ["Scope", "Shared", "load_schema"]

_NOT_INDEXED = "index documents into it first (sift index --store <url> ...)"


class Shared:
    """The client and the schema knowledge shared by a corpus and its tenant views."""

    def __init__(self, settings: WeaviateSettings, client: weaviate.WeaviateClient) -> None:
        self.settings = settings
        self.client = client
        self.lock = threading.RLock()
        # Property name -> kind; None while the collection does not exist.
        self.kinds: dict[str, _schema.PropKind] | None = None
        self.multi_tenant: bool | None = None
        # What the collection's description records (embedder, dim, chunk size).
        self.description: dict[str, Any] = {}
        self.users = 1
        self.last_seq = 0
        self.server_version = ""


def load_schema(shared: Shared) -> None:
    """Refreshes what the shared state knows of the collection (kinds None when absent)."""
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
            f"cannot read the schema of {settings.describe()}: {reason(exc)}"
        ) from exc
    except WeaviateBaseError as exc:
        raise StoreUnavailableError(
            f"cannot read the schema of {settings.describe()}: {reason(exc)}"
        ) from exc
    kinds = _schema.kinds_from_schema(config.properties)
    missing = [p for p in ("doc_id", "chunk_id", "text", "chunk_index") if p not in kinds]
    if missing:
        raise CorpusError(
            f"{settings.describe()} exists but is not a sift collection (no {missing} "
            "properties); choose another collection name"
        )
    shared.kinds = kinds
    shared.description = _schema.read_description(config.description or "")
    shared.multi_tenant = bool(config.multi_tenancy_config.enabled)


class Scope:
    """One view of the collection: the shared connection, for one tenant or for none."""

    def __init__(self, shared: Shared, tenant: str | None) -> None:
        self.shared = shared
        self.settings = shared.settings
        self.tenant = tenant

    def describe(self) -> str:
        tenant = f", tenant {self.tenant!r}" if self.tenant else ""
        return self.settings.model_copy(update={"tenant": None}).describe() + tenant

    def errors(self, action: str) -> AbstractContextManager[None]:
        """Client errors inside the block become sift errors naming this view."""
        return translated(self.describe(), action)

    def modern(self) -> bool:
        # Not and ContainsNone filters exist from Weaviate 1.33.
        return version_tuple(self.shared.server_version) >= (1, 33)

    def exists(self) -> bool:
        if self.shared.kinds is not None:
            return True
        load_schema(self.shared)
        return self.shared.kinds is not None

    def kinds(self, filters: Filter | None = None) -> dict[str, _schema.PropKind]:
        shared = self.shared
        kinds = shared.kinds or {}
        fields = {_schema.field_property(c.field) for c in (filters.conditions if filters else ())}
        if fields - set(kinds):
            # Another writer may have added metadata since this corpus read the schema; a
            # field unknown here would otherwise be judged absent from every object.
            load_schema(shared)
            kinds = shared.kinds or {}
        return dict(kinds)

    def handle(self) -> Any:
        """The client's collection object, scoped to this view's tenant."""
        shared = self.shared
        collection = shared.client.collections.use(self.settings.collection)
        if shared.multi_tenant:
            if not self.tenant:
                raise CorpusError(
                    f"{self.describe()} is multi-tenant: name a tenant (tenant=... in the "
                    "store URL, or corpus.with_tenant(name))"
                )
            return collection.with_tenant(self.tenant)
        if self.tenant:
            raise CorpusError(
                f"{self.describe()}: the collection was created without multi-tenancy, so "
                "it has no tenants; drop the tenant option or use another collection"
            )
        return collection

    def readable(self) -> Any:
        """`handle()` of a collection that exists, else StoreUnavailableError."""
        if not self.exists():
            raise StoreUnavailableError(
                f"{self.describe()}: the collection does not exist; {_NOT_INDEXED}"
            )
        return self.handle()

    def create(self, recorded: Mapping[str, Any]) -> None:
        """Creates the collection, recording `recorded` in its description. Multi-tenant
        when the settings say so, or (unsaid) when this view names a tenant."""
        settings = self.settings
        multi = settings.multi_tenancy
        if multi is None:
            multi = self.tenant is not None
        config = _schema.collection_config(
            settings.collection,
            multi_tenancy=multi,
            vectorizer=settings.vectorizer,
            ollama_endpoint=settings.ollama_endpoint,
            ollama_model=settings.ollama_model,
        )
        config["description"] = _schema.write_description(dict(recorded))
        with self.errors("create the collection at"):
            self.shared.client.collections.create(**config)
        load_schema(self.shared)
        if self.shared.kinds is None:
            raise StoreUnavailableError(
                f"{self.describe()}: the collection was created but the server does not show it"
            )

    def ensure_properties(self, wanted: Mapping[str, _schema.PropKind], doc_id: str) -> None:
        """Adds the metadata properties a document needs; CorpusError when one exists
        with another type."""
        shared = self.shared
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
                        f"{self.settings.collection!r} stores it as {have}; give it the "
                        "same type in every document"
                    )
                with self.errors("add a metadata property to"):
                    self.handle().config.add_property(_schema.new_property(name, kind))
                kinds[name] = kind
            shared.kinds = kinds

    def drop(self) -> bool:
        """Deletes the whole collection (every tenant); True when it existed."""
        existed = self.exists()
        with self.errors("drop the collection at"):
            self.shared.client.collections.delete(self.settings.collection)
        with self.shared.lock:
            self.shared.kinds = None
            self.shared.description = {}
        return existed

    def next_seq(self) -> float:
        """A new ingest sequence number: microseconds since the epoch, strictly rising."""
        with self.shared.lock:
            seq = max(self.shared.last_seq + 1, time.time_ns() // 1000)
            self.shared.last_seq = seq
        return float(seq)
