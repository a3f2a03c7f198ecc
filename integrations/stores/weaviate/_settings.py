"""Connection settings of the Weaviate store, and the `weaviate://` URL that carries them."""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["WeaviateSettings"]

# Weaviate capitalises the first letter of a class name and accepts only GraphQL names.
_COLLECTION = re.compile(r"^[A-Z][_0-9A-Za-z]{0,230}$")
_TENANT = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

_URL_KEYS = {
    "grpc": "grpc_port",
    "grpc_port": "grpc_port",
    "grpc_host": "grpc_host",
    "collection": "collection",
    "tenant": "tenant",
    "api_key_env": "api_key_env",
    "secure": "secure",
    "tls": "secure",
    "timeout": "query_timeout",
    "query_timeout": "query_timeout",
    "insert_timeout": "insert_timeout",
    "init_timeout": "init_timeout",
    "batch_size": "batch_size",
    "batch_retries": "batch_retries",
    "grep_scan_limit": "grep_scan_limit",
    "query_maximum_results": "query_maximum_results",
    "multi_tenancy": "multi_tenancy",
    "vectorizer": "vectorizer",
    "ollama_endpoint": "ollama_endpoint",
    "ollama_model": "ollama_model",
}


def check_tenant(name: str) -> str:
    """`name` itself when Weaviate accepts it as a tenant name, else ValueError."""
    if not isinstance(name, str) or not _TENANT.match(name):
        raise ValueError(
            f"tenant name {name!r} is not valid: use 1 to 64 letters, digits, '_' or '-'"
        )
    return name


class WeaviateSettings(BaseSettings):
    """Where the Weaviate store lives and how to talk to it.

    Every field is readable from the environment with the prefix `SIFT_WEAVIATE_`
    (`SIFT_WEAVIATE_HOST`, `SIFT_WEAVIATE_API_KEY`, ...) and from a `weaviate://` URL
    (see `from_url`).
    """

    model_config = SettingsConfigDict(env_prefix="SIFT_WEAVIATE_", extra="forbid")

    host: str = "localhost"
    http_port: int = Field(default=8080, ge=1, le=65535)
    grpc_host: str | None = None  # defaults to `host`
    grpc_port: int = Field(default=50051, ge=1, le=65535)
    secure: bool = False  # TLS on both REST and gRPC
    api_key: SecretStr | None = None
    collection: str = "SiftChunks"
    tenant: str | None = None
    # None: the collection is created multi-tenant exactly when a tenant is configured.
    multi_tenancy: bool | None = None
    query_timeout: float = Field(default=30.0, gt=0)
    insert_timeout: float = Field(default=90.0, gt=0)
    init_timeout: float = Field(default=5.0, gt=0)
    # Objects per BatchObjects request, and how often objects that failed are re-sent.
    batch_size: int = Field(default=200, ge=1, le=10_000)
    batch_retries: int = Field(default=2, ge=0, le=10)
    # A grep pattern without a literal to pre-filter on scans at most this many chunks.
    grep_scan_limit: int = Field(default=20_000, ge=1)
    # The server's QUERY_MAXIMUM_RESULTS (Weaviate's default): no query may reach past
    # this many objects, and a batch delete removes at most this many. Reads and deletes
    # page below it; set it when the server is configured otherwise.
    query_maximum_results: int = Field(default=10_000, ge=2)
    # "none": sift's embedder supplies every vector; "text2vec-ollama": Weaviate also
    # gets the module configured (sift still sends vectors, the module serves near_text).
    vectorizer: str = "none"
    ollama_endpoint: str = "http://ollama:11434"
    ollama_model: str = "nomic-embed-text"

    @field_validator("collection")
    @classmethod
    def _collection_name(cls, value: str) -> str:
        value = value[:1].upper() + value[1:]
        if not _COLLECTION.match(value):
            raise ValueError(
                f"collection name {value!r} is not valid in Weaviate: use letters, digits "
                "and underscores, starting with a letter"
            )
        return value

    @field_validator("tenant")
    @classmethod
    def _tenant_name(cls, value: str | None) -> str | None:
        return None if value is None else check_tenant(value)

    @field_validator("vectorizer")
    @classmethod
    def _vectorizer_name(cls, value: str) -> str:
        if value not in ("none", "text2vec-ollama"):
            raise ValueError(f"vectorizer must be 'none' or 'text2vec-ollama', got {value!r}")
        return value

    @property
    def grpc_address(self) -> str:
        return f"{self.grpc_host or self.host}:{self.grpc_port}"

    @property
    def http_address(self) -> str:
        scheme = "https" if self.secure else "http"
        return f"{scheme}://{self.host}:{self.http_port}"

    def describe(self) -> str:
        """Where the store is, for messages: never the API key."""
        tenant = f", tenant {self.tenant!r}" if self.tenant else ""
        return (
            f"Weaviate at {self.http_address} (gRPC {self.grpc_address}), "
            f"collection {self.collection!r}{tenant}"
        )

    def url(self) -> str:
        """The `weaviate://` URL of these settings (without secrets)."""
        scheme = "weaviates" if self.secure else "weaviate"
        query = f"grpc={self.grpc_port}&collection={self.collection}"
        if self.grpc_host:
            query += f"&grpc_host={self.grpc_host}"
        if self.tenant:
            query += f"&tenant={self.tenant}"
        return f"{scheme}://{self.host}:{self.http_port}?{query}"

    @classmethod
    def from_url(cls, url: str, **overrides: Any) -> WeaviateSettings:
        """Settings from `weaviate://host:8080?grpc=50051&collection=Docs&tenant=t1`.

        `weaviates://` turns TLS on. Query keys: grpc (port), grpc_host, collection,
        tenant, api_key_env (the name of an environment variable holding the API key:
        keys never travel in URLs), secure, timeout, insert_timeout, init_timeout,
        batch_size, batch_retries, grep_scan_limit, query_maximum_results, multi_tenancy,
        vectorizer.
        Keyword overrides win over the URL.
        """
        parts = urlsplit(url)
        if parts.scheme not in ("weaviate", "weaviates"):
            raise ValueError(
                f"not a Weaviate store URL: {url!r}; expected "
                "weaviate://host:8080?grpc=50051&collection=Docs"
            )
        if parts.password or parts.username:
            raise ValueError(
                "do not put credentials in the store URL; name an environment variable "
                "with ?api_key_env=VAR (or set SIFT_WEAVIATE_API_KEY)"
            )
        values: dict[str, Any] = {"secure": parts.scheme == "weaviates"}
        if parts.hostname:
            values["host"] = parts.hostname
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"invalid port in Weaviate store URL {url!r}") from None
        if port:
            values["http_port"] = port
        elif parts.scheme == "weaviates":
            values["http_port"] = 443
        if parts.path not in ("", "/"):
            # weaviate://host:8080/Docs names the collection in the path, too.
            values["collection"] = unquote(parts.path.strip("/"))
        api_key_env: str | None = None
        for key, items in parse_qs(parts.query, keep_blank_values=True).items():
            if key not in _URL_KEYS:
                raise ValueError(
                    f"unknown option {key!r} in Weaviate store URL; valid options: "
                    f"{', '.join(sorted(_URL_KEYS))}"
                )
            value = items[-1]
            if _URL_KEYS[key] == "api_key_env":
                api_key_env = value
            else:
                values[_URL_KEYS[key]] = value
        if api_key_env:
            secret = os.environ.get(api_key_env)
            if not secret:
                raise ValueError(
                    f"the Weaviate store URL names the API key variable {api_key_env!r}, "
                    "but it is not set in the environment"
                )
            values["api_key"] = secret
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
