"""The embedded store's reads: search (BM25, dense, hybrid), grep, chunks by document or
id, the document catalog and statistics. Every result is hydrated from SQLite, the
source of truth; the derived indexes only rank."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from sift.entities import WalkResult
from sift.errors import CorpusError, IndexDamagedError
from sift.filters import Filter, matches
from sift.fusion import fuse
from sift.integrations.stores._checks import check_doc_id, check_grep, check_ids, check_search
from sift.integrations.stores._embedding import dense_weight, embed_query
from sift.integrations.stores.catalog import DocumentInfo
from sift.integrations.stores.locations import CHUNK_KEYS, chunk_metadata
from sift.integrations.stores.patterns import literal_fragments
from sift.integrations.stores.sqlite._derived import Derived
from sift.integrations.stores.sqlite._filtering import Allowed, chunk_verdicts, first_passing
from sift.integrations.stores.sqlite._grep import grep_rowids
from sift.integrations.stores.sqlite._open import heal
from sift.integrations.stores.sqlite._schema import SCHEMA_VERSION
from sift.integrations.stores.sqlite._state import State, current_seq, read_meta
from sift.integrations.stores.sqlite._trigrams import trigram_bits
from sift.integrations.stores.sqlite._vectors import ExactVectors
from sift.types import (
    Chunk,
    CorpusStats,
    GrepResult,
    Hit,
    SearchMode,
    make_chunk_id,
    split_chunk_id,
)

__all__ = ["documents", "get_chunks", "grep", "read", "search", "stats", "walk"]

K = TypeVar("K")  # what a ranked list ranks: chunk rowids, or chunk ids
T = TypeVar("T")

_CHUNK_SQL = (
    "SELECT c.id, c.idx, c.text, c.start, c.end, d.doc_id, d.title, d.metadata "
    "FROM chunks c JOIN documents d ON d.id = c.doc "
)


def search(
    state: State,
    query: str,
    *,
    k: int,
    mode: SearchMode,
    vector: np.ndarray | None,
    filters: Filter | Mapping[str, Any] | None,
    exclude: Collection[str],
    alpha: float | None,
) -> list[Hit]:
    state.require()
    request = check_search(
        query,
        k=k,
        mode=mode,
        filters=filters,
        exclude=exclude,
        alpha=alpha,
        max_query_chars=state.options.max_query_chars,
    )
    text, k, mode = request.text, request.k, request.mode
    weight = state.alpha if request.alpha is None else request.alpha
    if mode == "hybrid":
        weight = dense_weight(state.embedder, text, weight)
    blocked = _rowids(state.conn(), request.exclude)
    if mode == "hybrid" and weight == 0.0:
        mode = "bm25"
    elif mode == "hybrid" and weight == 1.0:
        mode = "dense"
    inside, after = _filter_plan(state, request.filters)
    q = None if mode == "bm25" else embed_query(state.embedder, text, vector)

    def bm25(derived: Derived, n: int) -> list[tuple[int, float]]:
        if inside is not None:
            return derived.lexical.search(text, n, blocked, inside)
        return _filtered(lambda m: derived.lexical.search(text, m, blocked), n, after)

    def dense(derived: Derived, n: int) -> list[tuple[int, float]]:
        assert q is not None
        if inside is not None:
            return derived.vectors.search(q, n, blocked, inside)
        return _filtered(lambda m: derived.vectors.search(q, m, blocked), n, after)

    def rank(derived: Derived) -> list[tuple[int, float]]:
        if mode == "bm25":
            return bm25(derived, k)
        if mode == "dense":
            return dense(derived, k)
        width = max(state.options.hybrid_candidates, k)
        return fuse(state.options.fusion, dense(derived, width), bm25(derived, width), weight)[:k]

    return _hits(state.conn(), _healing(state, rank))


def _healing(state: State, ask: Callable[[Derived], T]) -> T:
    """`ask` of the derived indexes; when an index turns out damaged (its engine fails:
    files flipped or removed under the process), it is rebuilt from SQLite and asked
    again, once: a second failure is raised."""
    derived = state.indexes()
    try:
        return ask(derived)
    except IndexDamagedError as damage:
        heal(state, derived, damage)
    return ask(state.indexes())


def grep(
    state: State,
    pattern: str,
    *,
    k: int,
    filters: Filter | Mapping[str, Any] | None,
    exclude: Collection[str],
) -> GrepResult:
    state.require()
    request = check_grep(
        pattern,
        k=k,
        filters=filters,
        exclude=exclude,
        max_pattern_chars=state.options.max_pattern_chars,
    )
    regex, k = request.regex, request.k
    conn = state.conn()
    blocked = _rowids(conn, request.exclude)
    inside, after = _filter_plan(state, request.filters)

    def accept(rowids: list[int]) -> set[int]:
        fresh = [r for r in rowids if r not in blocked]
        return after(fresh) if after is not None else set(fresh)

    bits = trigram_bits(literal_fragments(pattern))

    def run(derived: Derived) -> tuple[list[tuple[int, float]], bool]:
        blocks = derived.trigrams.candidates(bits) if len(bits) else None
        if inside is not None:
            # Only the filter's chunks are read: those of the signatures' blocks, or
            # all of them in order when the pattern has no literal to pick by.
            blocks = _within(blocks, inside)
        return grep_rowids(conn, regex, blocks, k, accept)

    ranked, more = _healing(state, run)
    note = (
        f"showing the first {k} matching chunks in corpus order; more may match, "
        "narrow the pattern or exclude these ids to see others"
        if more
        else None
    )
    return GrepResult(hits=_hits(conn, ranked), note=note)


def read(state: State, doc_id: str) -> list[Chunk]:
    state.require()
    rows = (
        state.conn()
        .execute(_CHUNK_SQL + "WHERE d.doc_id = ? ORDER BY c.idx", (check_doc_id(doc_id),))
        .fetchall()
    )
    return _chunks(rows)


def get_chunks(state: State, chunk_ids: Sequence[str]) -> list[Chunk]:
    keys = _split_ids(check_ids(chunk_ids, name="chunk_ids"))
    state.require()
    if not keys:
        return []
    rows = (
        state.conn()
        .execute(
            "SELECT c.id, c.idx, c.text, c.start, c.end, d.doc_id, d.title, d.metadata "
            "FROM json_each(?) j "
            "JOIN documents d ON d.doc_id = json_extract(j.value, '$[0]') "
            "JOIN chunks c ON c.doc = d.id AND c.idx = json_extract(j.value, '$[1]') "
            "ORDER BY j.key",
            (json.dumps(keys),),
        )
        .fetchall()
    )
    return _chunks(rows)


def stats(state: State) -> CorpusStats:
    settings = {
        "chunk_tokens": state.chunk_tokens,
        "fusion": state.options.fusion,
        "alpha": state.alpha,
        "analyzer": state.analyzer.spec,
    }
    if state.pending is not None:
        # Counting is true of a store not made yet: it holds nothing. Reads refuse.
        return _stats(state, 0, 0, {"exists": False, **settings})
    conn = state.conn()
    meta = read_meta(conn)
    (count_documents,) = conn.execute("SELECT count(*) FROM documents").fetchone()
    (count_chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
    lexical_chunks = _healing(state, lambda derived: derived.lexical.count())
    derived = state.indexes()
    return _stats(
        state,
        count_documents,
        count_chunks,
        {
            **settings,
            "sequence": state.seq,
            "lexical_sequence": derived.lexical.seq,
            "lexical_chunks": lexical_chunks,
            "vector_chunks": len(derived.vectors),
            "vector_index": "exact" if isinstance(derived.vectors, ExactVectors) else "ann",
            "source_root": meta.get("source_root"),
            "size_bytes": _size_on_disk(state.path),
            # The chunks the entity graph holds, or None: this open keeps none.
            "entity_graph_chunks": None if derived.entities is None else len(derived.entities),
        },
        # What the file holds: an older version read as it is says so.
        version=int(meta.get("schema_version", SCHEMA_VERSION)),
    )


def documents(state: State, prefix: str | None) -> Iterator[DocumentInfo]:
    """Every stored document by id (`DocumentCatalog`), read a page at a time."""
    state.require()
    after: str | None = None
    while True:
        if after is None:
            where, key = "doc_id >= ?", prefix or ""
        else:
            where, key = "doc_id > ?", after
        rows = (
            state.conn()
            .execute(
                "SELECT doc_id, title, n_chunks, metadata FROM documents "
                f"WHERE {where} ORDER BY doc_id LIMIT 1000",
                (key,),
            )
            .fetchall()
        )
        for doc_id, title, chunks, metadata in rows:
            if prefix and not doc_id.startswith(prefix):
                return
            yield DocumentInfo(
                doc_id=doc_id, title=title, chunks=chunks, metadata=json.loads(metadata)
            )
        if len(rows) < 1000:
            return
        after = rows[-1][0]


def _stats(
    state: State,
    documents: int,
    chunks: int,
    extra: dict[str, Any],
    version: int = SCHEMA_VERSION,
) -> CorpusStats:
    return CorpusStats(
        documents=documents,
        chunks=chunks,
        embedder=state.embedder.name,
        dim=state.dim,
        backend="sqlite",
        location=str(state.path),
        schema_version=version,
        extra=extra,
    )


def _filter_plan(
    state: State, spec: Filter | None
) -> tuple[Allowed | None, Callable[[list[int]], set[int]] | None]:
    """How a search applies `spec`: inside the indexes, given the chunks it allows
    (first), or, where its SQL cannot say it (`_filtering`), after ranking, judging
    each result (second); (None, None) without a filter."""
    if spec is None:
        return None, None
    conn = state.conn()
    inside = state.filters.allowed(conn, spec, current_seq(conn))
    if inside is not None:
        return inside, None
    return None, _FilterCheck(conn, spec).allowed


# A filter allowing at most this many chunks has them read directly: visiting every
# block of trigram signatures to keep a few rows cost more than the rows (1M chunks, 50
# allowed: 6.3 ms against 2.3 unfiltered). The regex decides either way.
_READ_ALLOWED_BELOW = 4096


def _within(blocks: Iterator[np.ndarray] | None, allowed: Allowed) -> Iterator[np.ndarray]:
    if blocks is None or len(allowed) <= _READ_ALLOWED_BELOW:
        for start in range(0, len(allowed.rowids), 4096):
            yield allowed.rowids[start : start + 4096]
        return
    for block in blocks:
        kept = block[allowed.contains(block)]
        if len(kept):
            yield kept


def _filtered(
    fetch: Callable[[int], list[tuple[K, float]]],
    need: int,
    allowed: Callable[[list[K]], set[K]] | None,
) -> list[tuple[K, float]]:
    """The first `need` results passing the filter (`allowed` says which of some keys
    do; None: no filter), fetching more while too many fail."""
    if allowed is None:
        return fetch(need)

    def keep(results: list[tuple[K, float]]) -> list[tuple[K, float]]:
        passed = allowed([key for key, _ in results])
        return [r for r in results if r[0] in passed]

    return first_passing(fetch, need, keep, max(need * 4, 50))


class _FilterCheck:
    """Evaluates a Filter on chunks by rowid with `sift.filters.matches`, the semantics
    of record, on the record a search result carries: the document's metadata, and the
    chunk's `page`, `pages` and `section` (`stores.locations.chunk_metadata`). A filter
    on none of those three is judged once per document for the whole call."""

    def __init__(self, conn: sqlite3.Connection, spec: Filter | None) -> None:
        self.spec = spec
        self._conn = conn
        self._verdict: dict[int, bool] = {}
        self._per_chunk = spec is not None and any(c.field in CHUNK_KEYS for c in spec.conditions)

    def allowed(self, rowids: list[int]) -> set[int]:
        unknown = [r for r in rowids if r not in self._verdict]
        for start in range(0, len(unknown), 900):
            part = unknown[start : start + 900]
            marks = ",".join("?" * len(part))
            rows = self._conn.execute(
                "SELECT c.id, c.start, c.end, d.id, d.doc_id, d.title, d.metadata "
                f"FROM chunks c JOIN documents d ON d.id = c.doc WHERE c.id IN ({marks})",
                part,
            )
            if self._per_chunk:
                self._judge_chunks(rows)
            else:
                self._judge_documents(rows)
        return {r for r in rowids if self._verdict.get(r)}

    def _judge_documents(self, rows: Iterable[tuple[Any, ...]]) -> None:
        docs: dict[int, bool] = {}
        for rowid, _, _, doc_rowid, doc_id, title, metadata in rows:
            if doc_rowid not in docs:
                record = {**json.loads(metadata), "doc_id": doc_id, "title": title}
                docs[doc_rowid] = matches(self.spec, record)
            self._verdict[rowid] = docs[doc_rowid]

    def _judge_chunks(self, rows: Iterable[tuple[Any, ...]]) -> None:
        self._verdict.update(chunk_verdicts(self.spec, rows))


def walk(
    state: State,
    question: str,
    *,
    seeds: Sequence[str],
    k: int,
    exclude: Collection[str],
    filters: Filter | Mapping[str, Any] | None,
) -> WalkResult:
    """The entity graph's walk (`SqliteCorpus.walk_entities`), its chunks filtered as a
    search's results are."""
    state.require()
    if state.pending is not None:
        return WalkResult([], {}, [])
    entities = state.indexes().entities
    if entities is None:
        raise CorpusError(
            f"store {state.path} keeps no entity graph; open it with entity_graph=True"
        )
    spec = Filter.of(filters)
    if spec is None:
        return entities.walk(question, seeds=seeds, k=k, exclude=exclude)
    walks: list[WalkResult] = []

    def fetch(n: int) -> list[tuple[str, float]]:
        walks.append(entities.walk(question, seeds=seeds, k=n, exclude=exclude))
        return walks[-1].chunks

    chunks = _filtered(fetch, k, lambda ids: _allowed_chunks(state, ids, spec))
    walked = walks[-1]
    via = {c: walked.via[c] for c, _ in chunks if c in walked.via}
    return WalkResult(chunks, via, walked.entities)


def _allowed_chunks(state: State, chunk_ids: Sequence[str], spec: Filter) -> set[str]:
    """Which of these chunk ids pass `spec`, judged as a search judges its results."""
    conn = state.conn()
    rows = _id_rows(conn, chunk_ids)
    inside, after = _filter_plan(state, spec)
    rowids = [rowid for rowid, _, _ in rows]
    if inside is not None:
        passed = inside.contains(np.asarray(rowids, dtype=np.int64)).tolist()
        allowed = {r for r, ok in zip(rowids, passed, strict=True) if ok}
    else:
        assert after is not None
        allowed = after(rowids)
    return {make_chunk_id(doc_id, idx) for rowid, doc_id, idx in rows if rowid in allowed}


def _rowids(conn: sqlite3.Connection, chunk_ids: Collection[str]) -> set[int]:
    return {rowid for rowid, _, _ in _id_rows(conn, chunk_ids)}


def _id_rows(conn: sqlite3.Connection, chunk_ids: Iterable[str]) -> list[tuple[int, str, int]]:
    """(rowid, doc id, index) of the chunks with these ids that exist."""
    keys = _split_ids(chunk_ids)
    if not keys:
        return []
    return conn.execute(
        "SELECT c.id, d.doc_id, c.idx FROM json_each(?) j "
        "JOIN documents d ON d.doc_id = json_extract(j.value, '$[0]') "
        "JOIN chunks c ON c.doc = d.id AND c.idx = json_extract(j.value, '$[1]')",
        (json.dumps(keys),),
    ).fetchall()


def _hits(conn: sqlite3.Connection, ranked: Sequence[tuple[int, float]]) -> list[Hit]:
    if not ranked:
        return []
    marks = ",".join("?" * len(ranked))
    rows = conn.execute(
        _CHUNK_SQL + f"WHERE c.id IN ({marks})", [rowid for rowid, _ in ranked]
    ).fetchall()
    by_id = {row[0]: chunk for row, chunk in zip(rows, _chunks(rows), strict=True)}
    # A chunk deleted between ranking and hydration is simply left out.
    return [Hit(chunk=by_id[r], score=s) for r, s in ranked if r in by_id]


def _size_on_disk(path: Path) -> int:
    """Bytes of every file of the store (SQLite and its WAL, the derived indexes)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(folder) / name).stat().st_size
    return total


def _split_ids(chunk_ids: Iterable[str]) -> list[list[Any]]:
    keys: list[list[Any]] = []
    for chunk_id in chunk_ids:
        if not isinstance(chunk_id, str):
            continue
        parts = split_chunk_id(chunk_id)
        if parts is not None:
            keys.append(list(parts))
    return keys


def _chunks(rows: Iterable[tuple[Any, ...]]) -> list[Chunk]:
    parsed: dict[str, dict[str, Any]] = {}
    out = []
    for _, idx, text, start, end, doc_id, title, metadata in rows:
        meta = parsed.get(metadata)
        if meta is None:
            meta = parsed[metadata] = json.loads(metadata)
        out.append(
            Chunk(
                chunk_id=make_chunk_id(doc_id, idx),
                doc_id=doc_id,
                index=idx,
                title=title,
                text=text,
                start=start,
                end=end,
                # Pages and section from the chunk's offsets (stores.locations).
                metadata=chunk_metadata(meta, start, end),
            )
        )
    return out
