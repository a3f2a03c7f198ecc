"""Corpus stores: the embedded SQLite store (default) and Weaviate, chosen by location."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sift.protocols import Corpus

__all__ = ["default_store_path", "open_store"]


def default_store_path() -> Path:
    """`$SIFT_STORE`, else `$SIFT_HOME/store`, else `~/.sift/store`."""
    if os.environ.get("SIFT_STORE"):
        return Path(os.environ["SIFT_STORE"]).expanduser()
    home = Path(os.environ.get("SIFT_HOME", "~/.sift")).expanduser()
    return home / "store"


def open_store(location: str | os.PathLike[str] | None = None, **options: object) -> Corpus:
    """A Corpus for `location`: a filesystem path (embedded store, created when absent)
    or `weaviate://host:port?grpc=50051&collection=Docs`."""
    text = str(location) if location is not None else ""
    if not text:
        text = os.environ.get("SIFT_STORE", "") or str(default_store_path())
    if text.startswith(("weaviate://", "weaviates://")):
        from sift.integrations.stores.weaviate import WeaviateCorpus

        return WeaviateCorpus.from_url(text, **options)
    from sift.integrations.stores.sqlite import SqliteCorpus

    return SqliteCorpus(Path(text).expanduser(), **options)  # type: ignore[arg-type]
