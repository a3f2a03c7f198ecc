"""The embedded store: SQLite as the source of truth, tantivy BM25, dense vectors (exact
or HNSW) and grep's trigram signatures derived from it (DESIGN "Stores")."""

from __future__ import annotations

from sift.integrations.stores.sqlite._store import SqliteCorpus

__all__ = ["SqliteCorpus"]
