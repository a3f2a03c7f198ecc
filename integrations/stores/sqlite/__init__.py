"""The embedded store: SQLite as the source of truth, tantivy BM25, dense vectors (exact
or HNSW) and grep's trigram signatures derived from it (DESIGN "Stores")."""

from __future__ import annotations

from pathlib import Path

from sift.integrations.stores.sqlite._schema import DB_NAME
from sift.integrations.stores.sqlite._settings import EmbeddedSettings, split_location
from sift.integrations.stores.sqlite._store import SqliteCorpus

__all__ = ["EmbeddedSettings", "SqliteCorpus", "is_store", "split_location"]


def is_store(path: str | Path) -> bool:
    """True when the folder holds an embedded store (its SQLite file), without opening it."""
    return (Path(path).expanduser() / DB_NAME).is_file()
