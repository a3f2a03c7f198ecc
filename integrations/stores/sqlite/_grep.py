"""grep over the stored chunks: RE2 on the candidates the trigram signatures pick.

The signatures fold case, so they return a superset of the chunks holding a fragment in
any case; the regex (with its own case rules) then decides. Candidates come in rowid
order, which is document then chunk order for documents ingested together, and the scan
stops at the k-th hit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["grep_rowids"]

_BATCH = 512


def _texts(conn: sqlite3.Connection, rowids: list[int]) -> list[tuple[int, str]]:
    # A candidate deleted since it was indexed has no row: it is simply not read.
    marks = ",".join("?" * len(rowids))
    return conn.execute(
        f"SELECT id, text FROM chunks WHERE id IN ({marks}) ORDER BY id", rowids
    ).fetchall()


def _candidates(
    conn: sqlite3.Connection, blocks: Iterator[np.ndarray] | None
) -> Iterator[list[tuple[int, str]]]:
    if blocks is None:
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
        for rowids in blocks:
            for start in range(0, len(rowids), _BATCH):
                rows = _texts(conn, rowids[start : start + _BATCH].tolist())
                if rows:
                    yield rows


def grep_rowids(
    conn: sqlite3.Connection,
    regex: Any,
    blocks: Iterator[np.ndarray] | None,
    k: int,
    accept: Callable[[list[int]], set[int]],
) -> tuple[list[tuple[int, float]], bool]:
    """(rowid, number of matches) of the first k matching chunks among the candidate
    rowids (`blocks`, ascending; None reads every chunk), and whether the scan stopped
    early (more chunks may match)."""
    hits: list[tuple[int, float]] = []
    for rows in _candidates(conn, blocks):
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
