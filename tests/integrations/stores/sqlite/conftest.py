"""Helpers the embedded store's tests and the service's share."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def zero_chunks_root(store: Path) -> None:
    """Zeroes the first page of the chunks table in sift.db (every read of a chunk goes
    through it), after checkpointing the WAL so that the page is in the file."""
    db = store / "sift.db"
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'chunks'"
        ).fetchone()
    finally:
        conn.close()
    with open(db, "r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(bytes(page_size))
