"""Configuration of the HTTP service: one settings object, readable from the environment
(prefix `SIFT_SERVER_`), plus the two optional files it points to (API keys, collections).
"""

from __future__ import annotations

import errno
import hashlib
import json
import re
import socket
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from sift.errors import ConfigurationError
from sift.integrations.embedders import check_embedder_name
from sift.paths import collections_path

__all__ = [
    "ApiKey",
    "CollectionConfig",
    "SearchModeName",
    "ServerSettings",
    "checked_key",
    "key_fingerprint",
    "parse_api_keys",
]

SearchModeName = Literal["agentic", "single_shot"]
PolicyName = Literal["heuristic", "ollama"]

# The pattern is also the OpenAPI document's, so clients see the rule before they send.
COLLECTION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
COLLECTION_NAME = re.compile(COLLECTION_PATTERN)
# What an Authorization header can carry through every client: visible ASCII.
_KEY_CHAR = re.compile(r"[\x21-\x7e]")
ALL_COLLECTIONS = "*"


class ApiKey(BaseModel):
    """One accepted bearer key and the collections it may use (`*` is all of them)."""

    model_config = ConfigDict(frozen=True)

    key: SecretStr
    name: str = ""
    collections: tuple[str, ...] = (ALL_COLLECTIONS,)

    @field_validator("key")
    @classmethod
    def _usable(cls, value: SecretStr) -> SecretStr:
        text = value.get_secret_value()
        if len(text) < 8 or any(c.isspace() for c in text):
            raise ValueError("an API key needs at least 8 characters and no whitespace")
        bad = [c for c in text if not _KEY_CHAR.match(c)]
        if bad:
            # HTTP clients refuse to send such a header value (httpx and requests raise
            # before sending, browsers mangle it): the key could never be presented.
            raise ValueError(
                f"an API key may contain only printable ASCII characters (letters, digits "
                f"and punctuation, no spaces); this one contains {bad[0]!r} "
                f"(U+{ord(bad[0]):04X})"
            )
        return value

    def allows(self, collection: str) -> bool:
        return ALL_COLLECTIONS in self.collections or collection in self.collections


class CollectionConfig(BaseModel):
    """How one collection is served. Unset fields fall back to the server's defaults."""

    model_config = ConfigDict(extra="forbid")

    location: str | None = Field(
        default=None, description="Store path or weaviate:// URL; default ROOT/<name>."
    )
    mode: SearchModeName | None = None
    deadline_s: float | None = Field(default=None, gt=0, le=600)
    top_k: int | None = Field(default=None, ge=1)
    tenant: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)


def _read_structured(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        kind = "TOML" if path.suffix == ".toml" else "JSON"
        raise ValueError(f"{path} is not valid {kind}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold an object at the top level")
    return data


def store_collection_name(folder: Path) -> str:
    """A collection name for a store folder: its name, with what a collection name may
    not hold replaced by '-' (`default` when nothing is left)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", folder.resolve().name).strip("-._")[:128]
    return name or "default"


def parse_api_keys(text: str) -> list[ApiKey]:
    """`KEY` or `KEY=coll1,coll2` entries separated by `;` or whitespace.

    A bare key may use every collection. Keys themselves must not contain `=`, `;`, `,`
    or whitespace; use a keys file for anything richer.
    """
    keys: list[ApiKey] = []
    for entry in re.split(r"[;\s]+", text.strip()):
        if not entry:
            continue
        key, _, scope = entry.partition("=")
        collections = tuple(c for c in scope.split(",") if c) if scope else (ALL_COLLECTIONS,)
        name = f"env#{len(keys) + 1}"
        keys.append(
            checked_key(
                {"key": key, "name": name, "collections": collections},
                f"SIFT_SERVER_API_KEYS: key #{len(keys) + 1}",
            )
        )
    return keys


def checked_key(entry: dict[str, Any], where: str) -> ApiKey:
    """The ApiKey of a keys file's or SIFT_SERVER_API_KEYS's entry; ValueError naming it
    by `where` and a fingerprint of the key, never the key itself: pydantic's own message
    quotes the input, and the service's start-up error printed a rejected key (a real
    one, with a typo) on the terminal and into its logs."""
    try:
        return ApiKey.model_validate(entry)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors(include_url=False, include_input=False)
        )
        raise ValueError(f"{where} ({key_fingerprint(entry.get('key'))}): {problems}") from None


def key_fingerprint(key: object) -> str:
    """How a key is named where it must not be shown: its length and the start of its
    SHA-256, which an operator can compare with `printf %s KEY | sha256sum`."""
    if not isinstance(key, str):
        return "no key given as text"
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{len(key)} characters, sha256 {digest}"


class ServerSettings(BaseSettings):
    """Every knob of `sift serve`; each one also reads `SIFT_SERVER_<NAME>`."""

    model_config = SettingsConfigDict(env_prefix="SIFT_SERVER_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    store: str | None = Field(
        default=None,
        description="Root of the collections: a directory whose sub-stores ROOT/<name> are "
        "the collections, or a weaviate:// URL. Default: $SIFT_HOME/collections "
        "(~/.sift/collections).",
    )
    embedder: str | None = Field(
        default=None, description="Embedder of collections created through the API."
    )
    api_keys: SecretStr | None = Field(
        default=None, description="`KEY` or `KEY=coll1,coll2` entries separated by `;`."
    )
    keys_file: Path | None = Field(
        default=None,
        description='JSON or TOML: {"keys": [{"key": "...", "name": "...", '
        '"collections": ["docs"]}]}',
    )
    allow_anonymous: bool = Field(
        default=False,
        description="Serve without any key (development only). Then a request is refused "
        "unless its Host is a loopback name, an IP address or an allowed host, and its "
        "Origin (when sent) one of those too: no web page can reach the service.",
    )
    allowed_hosts: str = Field(
        default="",
        description="Without keys: host names clients reach the service by besides loopback "
        "names and IP addresses (`sift.example.org *.example.org`; spaces or commas).",
    )
    collections_file: Path | None = Field(
        default=None,
        description='JSON or TOML: {"collections": {"docs": {"mode": "single_shot", '
        '"deadline_s": 3}}}',
    )
    create_collections: bool = Field(
        default=True,
        description="Ingest into an unknown collection creates it (when the key may: see "
        "`wildcard_create` and `max_collections_per_key`).",
    )
    wildcard_create: bool = Field(
        default=False,
        description="A key that may use every collection (`*`, a bare key, the generated "
        "one) may also create collections. Off: such a key only uses what exists, and a "
        "new collection comes from a key that names it (`KEY=docs`) or from `sift index`.",
    )
    max_collections_per_key: int = Field(
        default=100,
        ge=0,
        description="Collections one key (or anonymous access) may create through the API, "
        "counted over the collections it created that still exist.",
    )
    collection_idle_s: float = Field(
        default=600.0,
        ge=0,
        description="An open collection no request has used for this long is closed (its "
        "store, indexes and threads); the next request opens it again.",
    )
    max_open_collections: int = Field(
        default=32,
        ge=1,
        description="Collections open at once; opening one more first closes the least "
        "recently used one not in use (503 when every one is in use).",
    )
    default_mode: SearchModeName = "agentic"
    retrieval_deadline_s: float = Field(
        default=4.0, gt=0, le=600, description="Default deadline of /retrieval (Dify waits 5 s)."
    )
    search_deadline_s: float = Field(default=60.0, gt=0, le=3600)
    deadline_grace_s: float = Field(
        default=0.5,
        ge=0,
        le=60,
        description="Past deadline + grace the service answers with a single-shot search.",
    )
    max_body_bytes: int = Field(default=256 * 1024, ge=1024)
    max_ingest_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    max_documents_per_request: int = Field(default=1_000, ge=1)
    max_query_chars: int = Field(default=2_000, ge=1)
    max_top_k: int = Field(default=100, ge=1, le=1_000)
    max_rollouts: int = Field(default=8, ge=1)
    max_concurrency: int = Field(
        default=4,
        ge=1,
        le=256,
        description="Searches, ingests and deletes at work at once (a search beyond the "
        "search processes waits for one).",
    )
    search_processes: int | None = Field(
        default=None,
        ge=0,
        le=256,
        description="Processes that run searches (each opens the stores it searches for "
        "reading; the service itself writes). Default: one per core up to max_concurrency "
        "on 2 cores or more, else 0. 0 runs searches on worker threads of the service "
        "(one core, and the event loop shares it).",
    )
    search_nice: int = Field(
        default=5,
        ge=0,
        le=19,
        description="Niceness added to the search processes: when every core is busy, the "
        "service's own process (its event loop answers every request, /healthz and 429s "
        "included) goes first. It also gives every other program on the machine the "
        "same lead over searches: 0 where the cores are shared and throughput matters "
        "more than the service's latency under overload.",
    )
    queue_size: int = Field(
        default=64, ge=0, le=100_000, description="Requests that may wait for a working slot."
    )
    queue_wait_s: float = Field(
        default=2.0,
        ge=0,
        le=600,
        description="Longest wait for a working slot before 429 (a search also stops "
        "waiting at its deadline).",
    )
    retry_after_s: int = Field(default=1, ge=1, description="The 429's and 503's Retry-After.")
    body_idle_timeout_s: float = Field(
        default=3.0,
        gt=0,
        le=600,
        description="A request body with no byte for this long is refused (408).",
    )
    body_timeout_s: float = Field(
        default=30.0, gt=0, le=3600, description="Longest time to receive a whole body (408)."
    )
    switch_interval_s: float = Field(
        default=0.001,
        gt=0,
        le=0.1,
        description="`sift serve` only: the interpreter's thread switch interval (Python's "
        "default is 0.005 s).",
    )
    warm_up: bool = Field(
        default=True,
        description="Open and warm every collection at start-up, before /readyz says ready.",
    )
    warm_policies: Annotated[list[PolicyName], NoDecode] = Field(
        default_factory=lambda: list[PolicyName](["heuristic"]),
        description="Policies whose first episode runs at start-up (add `ollama` to load "
        "the model before the first request).",
    )
    freeze_heap: bool = Field(
        default=True,
        description="Once warm, move every object alive then out of the garbage "
        "collector's reach (gc.freeze): a full collection then walks only what requests "
        "made since, so it no longer stalls /healthz and every stream for 100 ms and more.",
    )

    def allowed_host_names(self) -> list[str]:
        return [name for name in re.split(r"[\s,]+", self.allowed_hosts) if name]

    def store_root(self) -> str:
        if self.store:
            return self.store
        return str(collections_path())

    def single_store(self) -> tuple[str, str] | None:
        """(collection name, folder) when `store` is one sift store (`sift index`'s)
        rather than a root of collections: that store is served alone, named for its
        folder."""
        from sift.integrations.stores import is_store

        if self.store and is_store(self.store):
            folder = Path(self.store).expanduser()
            return store_collection_name(folder), str(folder)
        return None

    def cli_store(self) -> tuple[str, str] | None:
        """(collection name, folder) of the store `sift index` writes by default
        (`$SIFT_STORE`, else ~/.sift/store), when no root is set and it exists: served
        beside the root's collections, so `sift index` then `sift serve` answers."""
        from sift.integrations.stores import default_store_path, is_store

        folder = default_store_path()
        if self.store or not is_store(folder):
            return None
        return store_collection_name(folder), str(folder)

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, value: str | None) -> str | None:
        # Checked before anything is served: an unknown name used to start the service,
        # which then failed each collection's creation, request after request.
        return None if value is None else check_embedder_name(value)

    @field_validator("warm_policies", mode="before")
    @classmethod
    def _policy_names(cls, value: object) -> object:
        """From the environment: a JSON list, or names separated by commas or spaces;
        an unknown name says which are known (a value that was not JSON was a
        traceback from the settings' own decoding)."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError:
                raise ValueError(f"{text!r} is not a JSON list of policy names") from None
        else:
            value = [name for name in re.split(r"[,\s]+", text) if name]
        known = get_args(PolicyName)
        if isinstance(value, list):
            for name in value:
                if name not in known:
                    raise ValueError(
                        f"unknown policy {name!r}; known: {', '.join(known)} (a JSON list, "
                        "or names separated by commas)"
                    )
        return value

    def check_port(self) -> None:
        """ConfigurationError, on one line, when the service could not listen on `host`
        and `port` (another process listens there, a port below 1024 without the right
        to it): checked before anything starts. uvicorn found out only after the
        service had started, and its error came with the start-up's tracebacks."""
        if self.port == 0:
            return  # any free port
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        probe = socket.socket(family, socket.SOCK_STREAM)
        try:
            # As uvicorn binds: a port in TIME_WAIT after a restart is free to it.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((self.host, self.port))
        except OSError as exc:
            why = (
                "another process is listening there; stop it or choose another port "
                "(--port, SIFT_SERVER_PORT)"
                if exc.errno == errno.EADDRINUSE
                else exc.strerror or str(exc)
            )
            raise ConfigurationError(f"cannot listen on {self.host}:{self.port}: {why}") from None
        finally:
            probe.close()

    def load_keys(self) -> list[ApiKey]:
        keys: list[ApiKey] = []
        if self.api_keys is not None:
            keys += parse_api_keys(self.api_keys.get_secret_value())
        if self.keys_file is not None:
            data = _read_structured(self.keys_file)
            entries = data.get("keys")
            if not isinstance(entries, list):
                raise ValueError(f'{self.keys_file} must hold {{"keys": [...]}}')
            for number, entry in enumerate(entries, 1):
                where = f"{self.keys_file}: key #{number}"
                if not isinstance(entry, dict):
                    raise ValueError(f'{where} is not an object {{"key": ..., ...}}')
                keys.append(checked_key({"name": f"file#{number}", **entry}, where))
        return keys

    def load_collections(self) -> dict[str, CollectionConfig]:
        if self.collections_file is None:
            return {}
        data = _read_structured(self.collections_file)
        entries = data.get("collections", {})
        if not isinstance(entries, dict):
            raise ValueError(f'{self.collections_file} must hold {{"collections": {{name: ...}}}}')
        configs: dict[str, CollectionConfig] = {}
        for name, entry in entries.items():
            if not COLLECTION_NAME.match(name):
                raise ValueError(f"{self.collections_file}: bad collection name {name!r}")
            try:
                configs[name] = CollectionConfig.model_validate(entry)
            except ValueError as exc:
                raise ValueError(f"{self.collections_file}: collection {name!r}: {exc}") from None
        return configs
