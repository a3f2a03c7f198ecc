"""grep over the stored chunks: RE2 on candidates that an FTS5 trigram pre-filter picks.

The trigram table folds case, so it returns a superset of the chunks holding a fragment
in any case; the regex (with its own case rules) then decides. Candidates come in rowid
order, which is document then chunk order for documents ingested together, and the scan
stops at the k-th hit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["fts_query", "grep_rowids"]

_BATCH = 512
# Trigram matching needs at least three characters per fragment.
_MIN_FRAGMENT = 3
_MAX_FRAGMENTS = 4
_MATCH_SQL = "SELECT rowid FROM grep WHERE grep MATCH ? AND rowid > ? ORDER BY rowid LIMIT ?"


def fts_query(fragments: list[str]) -> str | None:
    """An FTS5 MATCH expression requiring every usable fragment, or None."""
    usable = [f for f in fragments if len(f) >= _MIN_FRAGMENT and "\x00" not in f]
    if not usable:
        return None
    # The longest fragments are the most selective; a few suffice.
    quoted = ['"' + f.replace('"', '""') + '"' for f in usable[:_MAX_FRAGMENTS]]
    return " AND ".join(quoted)


def _candidates(conn: sqlite3.Connection, match: str | None) -> Iterator[list[tuple[int, str]]]:
    if match is None:
        last = 0
        while True:
            rows = conn.execute(
                "SELECT id, text FROM chunks WHERE id > ? ORDER BY id LIMIT ?", (last, _BATCH)
            ).fetchall()
            if not rows:
                return
            yield rows
            last = rows[-1][0]
    else:
        last = 0
        while True:
            ids = [
                r[0]
                for r in conn.execute(
                    _MATCH_SQL,
                    (match, last, _BATCH),
                )
            ]
            if not ids:
                return
            marks = ",".join("?" * len(ids))
            rows = conn.execute(
                f"SELECT id, text FROM chunks WHERE id IN ({marks}) ORDER BY id", ids
            ).fetchall()
            yield rows
            last = ids[-1]


def grep_rowids(
    conn: sqlite3.Connection,
    regex: Any,
    match: str | None,
    k: int,
    accept: Callable[[list[int]], set[int]],
) -> tuple[list[tuple[int, float]], bool]:
    """(rowid, number of matches) of the first k matching chunks, and whether the scan
    stopped early (more chunks may match)."""
    hits: list[tuple[int, float]] = []
    for rows in _candidates(conn, match):
        matched = []
        for rowid, text in rows:
            count = sum(1 for _ in regex.finditer(text))
            if count:
                matched.append((rowid, float(count)))
        if not matched:
            continue
        allowed = accept([rowid for rowid, _ in matched])
        for rowid, matches in matched:
            if rowid in allowed:
                hits.append((rowid, matches))
                if len(hits) >= k:
                    return hits, True
    return hits, False
