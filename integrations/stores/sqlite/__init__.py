"""The embedded store: SQLite as the source of truth, tantivy BM25, exact dense vectors
and an FTS5 trigram grep pre-filter derived from it (DESIGN "Stores")."""

from __future__ import annotations

from sift.integrations.stores.sqlite._store import SqliteCorpus

__all__ = ["SqliteCorpus"]
