"""Corpus stores: the embedded SQLite store (default) and Weaviate, chosen by location.

`open_embedded` and `open_weaviate` are the factories this distribution registers in the
`sift.stores` entry-point group (schemes `file`, `weaviate`, `weaviates`), through which
`sift.open_store` finds them; `open_store` here is that same function.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from sift import open_store
from sift.paths import default_store_location, default_store_path

if TYPE_CHECKING:
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.integrations.stores.weaviate import WeaviateCorpus

__all__ = [
    "default_store_location",
    "default_store_path",
    "open_embedded",
    "open_store",
    "open_weaviate",
]


def open_embedded(location: str, **options: Any) -> SqliteCorpus:
    """The embedded store in the folder `location` (a path or a `file://` URL), created
    when absent unless `create=False`."""
    from sift.integrations.stores.sqlite import SqliteCorpus

    if location.startswith("file://"):
        location = unquote(urlsplit(location).path)
    return SqliteCorpus(Path(location).expanduser(), **options)


def open_weaviate(location: str, **options: Any) -> WeaviateCorpus:
    """A Weaviate collection from `weaviate://host:8080?grpc=50051&collection=Docs`
    (`weaviates://` for TLS)."""
    from sift.integrations.stores.weaviate import WeaviateCorpus

    return WeaviateCorpus.from_url(location, **options)
