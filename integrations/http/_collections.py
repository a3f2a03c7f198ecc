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
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from anyio import to_thread

from sift.errors import CorpusError
from sift.integrations.http._errors import (
    AUTH_FAILED,
    INVALID_REQUEST,
    UNAVAILABLE,
    UNKNOWN_COLLECTION,
    ApiError,
    store_error,
)
from sift.integrations.http._settings import (
    ALL_COLLECTIONS,
    COLLECTION_NAME,
    ApiKey,
    CollectionConfig,
    ServerSettings,
)

if TYPE_CHECKING:
    from sift.protocols import Corpus, Embedder
    from sift.types import CorpusStats

__all__ = ["Collection", "Collections", "owner_of"]

log = logging.getLogger("sift.http")

# Who created which collection through the API, beside the collections under a directory
# root (not a collection name: those start with a letter or digit), so a key's cap holds
# across restarts. Keys are recorded by a digest, never as themselves.
OWNERS_FILE = ".sift-owners.json"
ANONYMOUS = "anonymous"


def owner_of(key: ApiKey | None) -> str:
    """The name a key's creations are counted under: a digest of the key (the same
    across restarts and key-file edits that keep the key), or `anonymous`."""
    if key is None:
        return ANONYMOUS
    secret = key.key.get_secret_value().encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(secret).hexdigest()[:16]


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
        # Set when this request may create the collection: who to count it for.
        self.creator: str | None = None


@dataclass
class _Open:
    """An open store, how many requests use it now and when one last did (the clock's
    time)."""

    corpus: Corpus
    users: int = 0
    last_used: float = 0.0


def _is_url(text: str) -> bool:
    return text.startswith(("weaviate://", "weaviates://"))


class Collections:
    """The collections and their open stores.

    Open stores are bounded in time and number (issue 42: each held ~90 MB, 5 files and
    8 threads for the life of the service). Each request holds its collection through
    `using`, which counts it as in use; a store is closed only while no request uses it:
    by `sweep` once idle for `collection_idle_s` (the app runs it periodically, so a quiet
    service lets go of everything), or when opening one more would exceed
    `max_open_collections` (the least recently used idle one goes). Opening and closing
    happen under one lock, so a store is never open twice (its index writer's lock) and
    never closed under a request that took it.
    """

    def __init__(
        self, settings: ServerSettings, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self.clock = clock
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
        self._open: OrderedDict[str, _Open] = OrderedDict()  # least recently used first
        self._opening = threading.Lock()
        # Collections created through the API: with a weaviate:// root nothing on disk
        # says they exist once their store is closed.
        self._created: set[str] = set()
        self._owners = self._load_owners()

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
        return (
            name in self.configs
            or name in self._open
            or name in self._created
            or self._is_sub_store(name)
        )

    def names(self) -> list[str]:
        found = set(self.configs) | set(self._open) | self._created
        root = Path(self.root).expanduser()
        if not _is_url(self.root) and self.single is None and root.is_dir():
            found |= {
                p.name for p in root.iterdir() if p.is_dir() and COLLECTION_NAME.match(p.name)
            }
        return sorted(found)

    def get(self, name: str, *, create: bool = False, key: ApiKey | None = None) -> Collection:
        """The collection, or 404/2001 when it is unknown (and not being created); 403
        when `key` may not create it."""
        self.check_name(name)
        creatable = create and self.settings.create_collections and self.single is None
        exists = self._exists(name)
        if not exists and not creatable:
            raise ApiError(
                404,
                UNKNOWN_COLLECTION,
                f"knowledge base {name!r} does not exist; known: "
                f"{', '.join(self.names()[:20]) or 'none'}",
            )
        collection = Collection(
            name, self._location(name), self.configs.get(name, CollectionConfig()), self.settings
        )
        if not exists:
            self._check_creator(name, key)
            collection.creator = owner_of(key)
        return collection

    # ----------------------------------------------------------------- creation

    def _check_creator(self, name: str, key: ApiKey | None) -> None:
        """403 when `key` may not create `name`: a wildcard key unless `wildcard_create`,
        or a key (anonymous access counts as one) at its `max_collections_per_key`."""
        if (
            key is not None
            and ALL_COLLECTIONS in key.collections
            and not self.settings.wildcard_create
        ):
            raise ApiError(
                403,
                AUTH_FAILED,
                f"collection {name!r} does not exist and this API key, which may use every "
                "collection, may not create one (SIFT_SERVER_WILDCARD_CREATE=true allows "
                f"it); use a key that names {name!r}, or create it with `sift index`",
            )
        self._check_limit(name, owner_of(key))

    def _check_limit(self, name: str, owner: str) -> None:
        limit = self.settings.max_collections_per_key
        created = sum(1 for n, o in self._owners.items() if o == owner and self._exists(n))
        if created >= limit:
            raise ApiError(
                403,
                AUTH_FAILED,
                f"collection {name!r} was not created: this API key has created {created} "
                f"collection(s), its limit (SIFT_SERVER_MAX_COLLECTIONS_PER_KEY={limit})",
            )

    def _owners_path(self) -> Path | None:
        if _is_url(self.root) or self.single is not None:
            return None
        return Path(self.root).expanduser() / OWNERS_FILE

    def _load_owners(self) -> dict[str, str]:
        path = self._owners_path()
        if path is None or not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("cannot read %s (%s): counting collections per key afresh", path, exc)
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): str(v) for k, v in data.items()}

    def _record_owner(self, name: str, owner: str) -> None:
        """Records who created `name` (under the lock), written whole then renamed."""
        self._owners[name] = owner
        self._created.add(name)
        path = self._owners_path()
        if path is None:
            return
        partial = path.with_name(f"{OWNERS_FILE}.{os.getpid()}.tmp")
        try:
            partial.write_text(json.dumps(self._owners, indent=1, sort_keys=True), "utf-8")
            partial.replace(path)
        except OSError as exc:
            # The collection exists and serves; only its count is at risk.
            log.warning("cannot write %s (%s): its count holds until restart", path, exc)

    # ----------------------------------------------------------------- stores

    @contextlib.contextmanager
    def using(self, collection: Collection) -> Iterator[Corpus]:
        """The collection's store, opened when it is not, and counted as in use (so not
        closed) until the block ends. Call from a worker thread: opening takes time."""
        entry = self._acquire(collection)
        try:
            yield entry.corpus
        finally:
            with self._opening:
                entry.users -= 1
                entry.last_used = self.clock()

    def _acquire(self, collection: Collection) -> _Open:
        from sift.integrations.stores import open_store

        name = collection.name
        with self._opening:
            entry = self._open.get(name)
            if entry is None:
                # About to pay for an open anyway: let go of what has been idle first.
                self._sweep_locked()
                self._make_room_locked(name)
                creator = None if self._exists(name) else collection.creator
                if creator is not None:
                    # Checked again here, under the lock: requests that passed `get`
                    # together must not take the key past its limit.
                    self._check_limit(name, creator)
                options = self._options(collection)
                if not _is_url(collection.location):
                    Path(collection.location).expanduser().parent.mkdir(parents=True, exist_ok=True)
                entry = _Open(open_store(collection.location, **options))
                self._open[name] = entry
                if creator is not None:
                    self._record_owner(name, creator)
            entry.users += 1
            entry.last_used = self.clock()
            self._open.move_to_end(name)
            return entry

    def _make_room_locked(self, name: str) -> None:
        """Closes least recently used idle stores until one more may open; 503 when every
        open one is in use."""
        limit = self.settings.max_open_collections
        while len(self._open) >= limit:
            idle = next((n for n, e in self._open.items() if e.users == 0), None)
            if idle is None:
                raise ApiError(
                    503,
                    UNAVAILABLE,
                    f"collection {name!r} cannot be opened now: all {limit} open "
                    "collections are in use (SIFT_SERVER_MAX_OPEN_COLLECTIONS); retry",
                    headers={"Retry-After": str(self.settings.retry_after_s)},
                )
            self._close_locked(idle)

    def _close_locked(self, name: str) -> None:
        entry = self._open.pop(name)
        # Closing one store must not keep the others open.
        with contextlib.suppress(Exception):
            entry.corpus.close()
        log.info("collection %r closed (idle)", name)

    def _sweep_locked(self) -> list[str]:
        now = self.clock()
        idle = [
            name
            for name, entry in self._open.items()
            if entry.users == 0 and now - entry.last_used >= self.settings.collection_idle_s
        ]
        for name in idle:
            self._close_locked(name)
        return idle

    def sweep(self) -> list[str]:
        """Closes every store idle for `collection_idle_s` or longer; their names."""
        with self._opening:
            return self._sweep_locked()

    def open_names(self) -> list[str]:
        """The collections whose stores are open now, least recently used first."""
        with self._opening:
            return list(self._open)

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

    async def stats(self, collection: Collection) -> CorpusStats:
        def work() -> CorpusStats:
            with self.using(collection) as corpus:
                return corpus.stats()

        try:
            return await to_thread.run_sync(work)
        except (CorpusError, OSError, sqlite3.Error) as exc:
            answer = store_error(exc, self.settings.retry_after_s)
            if answer is None:
                raise
            raise answer from None

    def discard(self, name: str) -> None:
        """Closes and forgets one open store (after a failed write), so the next request
        opens it again."""
        with self._opening:
            entry = self._open.pop(name, None)
        if entry is not None:
            with contextlib.suppress(Exception):
                entry.corpus.close()

    def close(self) -> None:
        with self._opening:
            for entry in self._open.values():
                # Closing one store must not keep the others open.
                with contextlib.suppress(Exception):
                    entry.corpus.close()
            self._open.clear()
