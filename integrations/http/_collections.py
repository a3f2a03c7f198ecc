"""Collections: names the API uses, mapped to stores.

Scheme: the store root is a directory and each collection is the sub-store `ROOT/<name>`
(created by the first ingest when `create_collections` is on). A collections file may add
or override entries: an explicit `location` (any store path or weaviate:// URL), the search
`mode`, the `deadline_s`, a default `top_k`, a Weaviate `tenant`. With a weaviate:// root,
collection `<name>` is that URL with `collection=<name>`.

A root that is itself one store (the folder `sift index` wrote) is served alone, as the
collection named for its folder; no other collection can be created then. With no root
given, the CLI's default store (~/.sift/store) is served too, as collection `store`.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from anyio import to_thread

from sift.errors import CorpusError
from sift.integrations.http._errors import (
    INVALID_REQUEST,
    UNKNOWN_COLLECTION,
    ApiError,
    store_error,
)
from sift.integrations.http._settings import (
    COLLECTION_NAME,
    CollectionConfig,
    ServerSettings,
)

if TYPE_CHECKING:
    from sift.protocols import Corpus, Embedder

__all__ = ["Collection", "Collections"]


class Collection:
    """A collection's effective settings."""

    def __init__(
        self, name: str, location: str, config: CollectionConfig, settings: ServerSettings
    ) -> None:
        self.name = name
        self.location = location
        self.config = config
        self.mode = config.mode or settings.default_mode
        self.retrieval_deadline_s = config.deadline_s or settings.retrieval_deadline_s
        self.search_deadline_s = config.deadline_s or settings.search_deadline_s
        self.top_k = config.top_k


def _is_url(text: str) -> bool:
    return text.startswith(("weaviate://", "weaviates://"))


class Collections:
    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.root = settings.store_root()
        self.configs = settings.load_collections()
        # `--store` naming one store serves it alone; with no root given, the CLI's
        # default store (when it exists) is served beside the root's collections.
        self.single = settings.single_store()
        extra = self.single or settings.cli_store()
        if extra is not None:
            name, folder = extra
            if name not in self.configs and not self._is_sub_store(name):
                self.configs[name] = CollectionConfig(location=folder)
        self._open: dict[str, Corpus] = {}
        self._opening = threading.Lock()

    # ----------------------------------------------------------------- naming

    @staticmethod
    def check_name(name: str) -> None:
        if not COLLECTION_NAME.match(name):
            raise ApiError(
                422,
                INVALID_REQUEST,
                f"invalid collection name {name[:80]!r}: use 1-128 letters, digits, '_', '-' "
                "or '.', starting with a letter or digit",
            )

    def _location(self, name: str) -> str:
        config = self.configs.get(name)
        if config is not None and config.location:
            return config.location
        if _is_url(self.root):
            parts = urlsplit(self.root)
            query = dict(parse_qsl(parts.query))
            query["collection"] = name
            return urlunsplit(parts._replace(query=urlencode(query)))
        return str(Path(self.root).expanduser() / name)

    def _is_sub_store(self, name: str) -> bool:
        if _is_url(self.root) or self.single is not None:
            return False
        return (Path(self.root).expanduser() / name).is_dir()

    def _exists(self, name: str) -> bool:
        return name in self.configs or name in self._open or self._is_sub_store(name)

    def names(self) -> list[str]:
        found = set(self.configs) | set(self._open)
        root = Path(self.root).expanduser()
        if not _is_url(self.root) and self.single is None and root.is_dir():
            found |= {
                p.name for p in root.iterdir() if p.is_dir() and COLLECTION_NAME.match(p.name)
            }
        return sorted(found)

    def get(self, name: str, *, create: bool = False) -> Collection:
        """The collection, or 404/2001 when it is unknown (and not being created)."""
        self.check_name(name)
        creatable = create and self.settings.create_collections and self.single is None
        if not self._exists(name) and not creatable:
            raise ApiError(
                404,
                UNKNOWN_COLLECTION,
                f"knowledge base {name!r} does not exist; known: "
                f"{', '.join(self.names()[:20]) or 'none'}",
            )
        return Collection(
            name, self._location(name), self.configs.get(name, CollectionConfig()), self.settings
        )

    # ----------------------------------------------------------------- stores

    def open_sync(self, collection: Collection) -> Corpus:
        """The collection's store, opened once (call from a worker thread)."""
        from sift.integrations.stores import open_store

        with self._opening:
            corpus = self._open.get(collection.name)
            if corpus is not None:
                return corpus
            options = self._options(collection)
            if not _is_url(collection.location):
                Path(collection.location).expanduser().parent.mkdir(parents=True, exist_ok=True)
            corpus = open_store(collection.location, **options)
            self._open[collection.name] = corpus
            return corpus

    def open_reader(self, collection: Collection, embedder: Embedder | None = None) -> Corpus:
        """The collection's store opened anew for reading beside the service that writes
        it (a search process's; see `_processes`). Not kept here: the caller closes it.
        `embedder`: the one an earlier open of it loaded (loading the model again cost
        a third of a reopen at 7k passages)."""
        from sift.integrations.stores import open_store

        options = self._options(collection)
        if not _is_url(collection.location):
            options["writer"] = False
            if embedder is not None:
                options["embedder"] = embedder
        return open_store(collection.location, **options)

    def _options(self, collection: Collection) -> dict[str, Any]:
        options = dict(collection.config.options)
        if collection.config.tenant:
            options.setdefault("tenant", collection.config.tenant)
        if not _is_url(collection.location):
            # An existing store keeps the embedder it was indexed with.
            if self.settings.embedder and not Path(collection.location).expanduser().exists():
                options.setdefault("embedder", self.settings.embedder)
        elif self.settings.embedder:
            options.setdefault("embedder", self.settings.embedder)
        return options

    async def corpus(self, collection: Collection) -> Corpus:
        corpus = self._open.get(collection.name)
        if corpus is not None:
            return corpus
        try:
            return await to_thread.run_sync(self.open_sync, collection)
        except (CorpusError, OSError, sqlite3.Error) as exc:
            answer = store_error(exc, self.settings.retry_after_s)
            if answer is None:
                raise
            raise answer from None

    def discard(self, name: str) -> None:
        """Closes and forgets one open store (after a failed write), so the next request
        opens it again."""
        with self._opening:
            corpus = self._open.pop(name, None)
        if corpus is not None:
            with contextlib.suppress(Exception):
                corpus.close()

    def close(self) -> None:
        with self._opening:
            for corpus in self._open.values():
                # Closing one store must not keep the others open.
                with contextlib.suppress(Exception):
                    corpus.close()
            self._open.clear()
