"""Corpus stores: the embedded SQLite store (default) and Weaviate, chosen by location.

`open_embedded` and `open_weaviate` are the factories this distribution registers in the
`sift.stores` entry-point group (schemes `file`, `weaviate`, `weaviates`), through which
`sift.open_store` finds them; `open_store` here is that same function.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sift import open_store
from sift.paths import default_store_location, default_store_path

if TYPE_CHECKING:
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.integrations.stores.weaviate import WeaviateCorpus

__all__ = [
    "default_store_location",
    "default_store_path",
    "is_store",
    "open_embedded",
    "open_store",
    "open_weaviate",
]


def is_store(location: str | Path) -> bool:
    """True when a local path holds an embedded sift store (a folder with its SQLite
    file); False for URLs and anything else."""
    from sift.integrations.stores.sqlite import is_store as is_embedded

    text = str(location)
    return "://" not in text and is_embedded(text)


def open_embedded(location: str, **options: Any) -> SqliteCorpus:
    """The embedded store in the folder `location` (a path, or a `file://` or
    `sqlite://` URL whose query names options: `sqlite:///data/store?vector_index=ann`).
    Its options come from `options`, then the URL, then the environment
    (`SIFT_EMBEDDED_<OPTION>`; `EmbeddedSettings`). When absent it is made by the first
    write (`create="on_write"`, the default here: reading a path with no store is an
    error naming it); `create=True` makes it now, `False` never."""
    from sift.integrations.stores.sqlite import SqliteCorpus, split_location

    folder, resolved = split_location(location, options)
    resolved.setdefault("create", "on_write")
    return SqliteCorpus(Path(folder).expanduser(), **resolved)


def open_weaviate(location: str, **options: Any) -> WeaviateCorpus:
    """A Weaviate collection from `weaviate://host:8080?grpc=50051&collection=Docs`
    (`weaviates://` for TLS)."""
    from sift.integrations.stores.weaviate import WeaviateCorpus

    return WeaviateCorpus.from_url(location, **options)
