"""Metadata filters inside the embedded store: the `fields` table, the SQL a filter
becomes, and the chunks a filter allows, worked out before any index ranks.

Every document's metadata is also kept as rows of `fields` (document, name, and one row
per value: a list gives a row per item), written and deleted in the transaction that
writes the document, so it can never disagree with `documents` (a kill -9 leaves both or
neither). A filter becomes one SQL query over it (`_translate`), indexed by (name,
value): a filter matching a few documents reads a few index entries, where the store
used to rank everything and judge each result's JSON in Python.

`sift.filters.matches` stays the semantics of record; each operator's SQL is written to
agree with it value for value (SQLite compares integers, reals and texts by storage
class, never across them, as Python's `==` and `<` do; a row keeps Python's own `str()`
of a number for the text operators). Values SQL cannot hold or compare as Python would
(integers past 64 bits, non-finite reals, texts holding NUL) are rows of kind
`_PYTHON`, and the documents holding one are judged by `matches` itself. Filters the
SQL cannot say (on a chunk's own `page`/`section` under `or`, or values like those)
return None: the caller filters the old way, after ranking.

`Allowed` is what a search is given: the sorted chunk rowids a filter allows, kept per
(filter, change sequence) in a small cache (`FilterCache`), since a pipeline runs many
questions under one tenant's filter. Each index then ranks inside it: the vectors score
only those rows (or mask the others), tantivy intersects the text's postings with the
filter's text equalities (`Allowed.terms`, kept as terms in the BM25 index) or with the
rows themselves, or is asked deeper for a wide filter, and grep reads only those rows.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import numpy as np

from sift.filters import Condition, Filter, matches
from sift.integrations.stores.locations import CHUNK_KEYS, LOCATION_KEYS, chunk_metadata

K = TypeVar("K")  # what a ranking ranks: chunk rowids, or chunk ids
T = TypeVar("T")

__all__ = [
    "FIELDS_DDL",
    "Allowed",
    "FilterCache",
    "chunk_verdicts",
    "deepen",
    "delete_fields",
    "depth_for",
    "field_rows",
    "fill_fields",
    "first_passing",
    "insert_fields",
    "meta_term",
]

# What a row of `fields` holds, by kind. Numbers keep their value and Python's str() of
# it; texts their value; opaque values (a list inside a list) only their str().
_NULL, _NUMBER, _TEXT, _PYTHON, _OPAQUE, _EMPTY_LIST = range(6)
_INT64 = (-(2**63), 2**63 - 1)
# Fields the record of a search result never has (`chunk_metadata` drops the location
# tables; `doc_id` and `title` are the document's columns).
_COLUMNS = {"doc_id": "doc_id", "title": "title"}

FIELDS_DDL = """
CREATE TABLE IF NOT EXISTS fields (
    doc INTEGER NOT NULL,
    name TEXT NOT NULL,
    ord INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    value,
    text TEXT,
    listed INTEGER NOT NULL,
    PRIMARY KEY (doc, name, ord)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fields_by_value ON fields (name, value, doc);
CREATE INDEX IF NOT EXISTS fields_python ON fields (name, doc) WHERE kind = 3;
"""
# `value` has no declared type on purpose: no affinity, so '1' stays text beside 1. The
# rows are kept in their primary key's order, by document (WITHOUT ROWID: no second
# b-tree to write for them), appended as documents are; `fields_by_value` finds the
# documents of a value.


def _row(value: Any) -> tuple[int, Any, str | None]:
    """(kind, value, text) of one metadata value."""
    if value is None:
        return _NULL, None, None
    if isinstance(value, bool):
        return _NUMBER, int(value), str(value)
    if isinstance(value, int):
        if _INT64[0] <= value <= _INT64[1]:
            return _NUMBER, value, str(value)
        return _PYTHON, None, None
    if isinstance(value, float):
        return (_NUMBER, value, str(value)) if math.isfinite(value) else (_PYTHON, None, None)
    if isinstance(value, str):
        return (_PYTHON, None, None) if "\x00" in value else (_TEXT, value, None)
    text = str(value)
    return (_PYTHON, None, None) if "\x00" in text else (_OPAQUE, None, text)


def field_rows(doc: int, metadata: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """The `fields` rows of a document's metadata (its rowid `doc`)."""
    rows: list[tuple[Any, ...]] = []
    for name, value in metadata.items():
        if name in LOCATION_KEYS or name in _COLUMNS:
            continue
        if isinstance(value, list):
            if not value:
                rows.append((doc, name, 0, _EMPTY_LIST, None, None, 1))
            rows.extend((doc, name, i, *_row(item), 1) for i, item in enumerate(value))
        else:
            rows.append((doc, name, 0, *_row(value), 0))
    return rows


_INSERT = (
    "INSERT INTO fields (doc, name, ord, kind, value, text, listed) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def insert_fields(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    conn.executemany(_INSERT, rows)


def delete_fields(conn: sqlite3.Connection, doc: int) -> None:
    conn.execute("DELETE FROM fields WHERE doc = ?", (doc,))


def fill_fields(conn: sqlite3.Connection) -> None:
    """Makes the table and fills it from every stored document (a migration, inside the
    caller's transaction)."""
    for statement in FIELDS_DDL.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("DELETE FROM fields")
    cursor = conn.execute("SELECT id, metadata FROM documents")
    while batch := cursor.fetchmany(2000):
        rows: list[tuple[Any, ...]] = []
        for doc, metadata in batch:
            rows += field_rows(doc, json.loads(metadata))
        insert_fields(conn, rows)


class _Untranslatable(Exception):
    """The filter says something its SQL cannot: filter after ranking instead."""


def _scalar(value: Any) -> Any:
    """A filter's value as SQL compares it as Python would, or _Untranslatable."""
    kind, sql, _ = _row(value)
    if kind in (_PYTHON, _OPAQUE):
        raise _Untranslatable
    return sql


def _needle(value: Any) -> str:
    needle = str(value)
    if "\x00" in needle:
        raise _Untranslatable
    return needle


class _Sql:
    """One condition as SQL: `has` (rows of the field exist meeting `where`) and the
    set of documents it holds for, as a predicate on `d.id` and, when it is positive
    (true only of documents with a row), a query of those documents (`driver`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.column = _COLUMNS.get(name)

    def source(self, correlated: bool) -> tuple[str, list[Any]]:
        """Rows of the field, as (doc, kind, value, text, listed)."""
        if self.column is not None:
            rows = (
                f"(SELECT id AS doc, 2 AS kind, {self.column} AS value, NULL AS text, "
                "0 AS listed FROM documents)"
            )
            if correlated:
                rows = (
                    f"(SELECT d.id AS doc, 2 AS kind, d.{self.column} AS value, "
                    "NULL AS text, 0 AS listed)"
                )
            return rows + " f WHERE 1", []
        if correlated:
            return "fields f WHERE f.doc = d.id AND f.name = ?", [self.name]
        return "fields f WHERE f.name = ?", [self.name]

    def has(self, where: str, params: list[Any]) -> tuple[str, list[Any]]:
        rows, head = self.source(correlated=True)
        # By document, on the primary key: `+f.value` keeps the planner from walking a
        # range's entries of `fields_by_value` once per document checked.
        where = where.replace("f.value", "+f.value")
        return f"EXISTS (SELECT 1 FROM {rows} AND ({where}))", head + params

    def docs(self, where: str, params: list[Any]) -> tuple[str, list[Any]]:
        rows, head = self.source(correlated=False)
        return f"SELECT f.doc FROM {rows} AND ({where})", head + params


_PRESENT = "NOT (f.listed = 0 AND (f.kind = 0 OR (f.kind = 2 AND f.value = ''))) AND f.kind != 5"
_TEXTUAL = "f.kind IN (1, 2, 4)"
_TEXT_OF = "ifnull(f.text, f.value)"
_RANGE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _positive(condition: Condition) -> tuple[str, list[Any]] | None:
    """The rows that make a condition hold, for a condition that holds exactly when the
    document has such a row; None for the others (negations, and those that hold where
    the field is missing)."""
    op, want = condition.op, condition.value
    if op == "not_empty":
        return _PRESENT, []
    if op == "eq" and want is not None:
        return "f.value = ?", [_scalar(want)]
    if op == "in":
        if not isinstance(want, list | tuple | set | frozenset | str):
            return "0", []  # Python's `in` finds no member in what is not a list or text
        members = _members(condition)
        if None in members:
            return None
        return _member_of(members)
    if op in _RANGE:
        if want is None:
            return "0", []  # nothing compares with None
        bound = _scalar(want)
        kind = _TEXT if isinstance(bound, str) else _NUMBER
        return f"f.kind = {kind} AND f.value {_RANGE[op]} ?", [bound]
    if op == "contains":
        return f"{_TEXTUAL} AND instr({_TEXT_OF}, ?) > 0", [_needle(want)]
    if op == "starts_with":
        needle = _needle(want)
        return f"{_TEXTUAL} AND substr({_TEXT_OF}, 1, length(?)) = ?", [needle, needle]
    if op == "ends_with":
        needle = _needle(want)
        if not needle:
            return _TEXTUAL, []
        return f"{_TEXTUAL} AND substr({_TEXT_OF}, -length(?)) = ?", [needle, needle]
    return None


def _member_of(members: Iterable[Any]) -> tuple[str, list[Any]]:
    values = [_scalar(m) for m in members if m is not None]
    return "f.value IN (SELECT value FROM json_each(?))", [json.dumps(values)]


def _members(condition: Condition) -> list[Any]:
    want = condition.value
    return list(want) if isinstance(want, str) else list(condition.members)


_NEGATED = {"empty": "not_empty", "ne": "eq", "not_in": "in", "not_contains": "contains"}


def _predicate(condition: Condition) -> tuple[str, list[Any]]:
    """The condition as a predicate on the document `d`."""
    sql = _Sql(condition.field)
    positive = _positive(condition)
    if positive is not None:
        return sql.has(*positive)
    op = condition.op
    if op in _NEGATED:
        inner, params = _predicate(condition.model_copy(update={"op": _NEGATED[op]}))
        return f"NOT {inner}", params
    if op in ("eq", "in"):
        # `eq None`, or `in` with None a member: Python's `None in [None]` holds where the
        # field is missing or one of its values is null; `in` also where another member
        # is among the values.
        missing, params = sql.has("1", [])
        null, more = sql.has("f.kind = 0", [])
        either = f"(NOT {missing} OR {null}"
        if op == "in":
            found, extra = sql.has(*_member_of(_members(condition)))
            return f"{either} OR {found})", params + more + extra
        return either + ")", params + more
    raise _Untranslatable


def _translate(conn: sqlite3.Connection, spec: Filter) -> tuple[str, list[Any]]:
    """SQL of the rowids of the documents `spec`'s document-level conditions allow (all
    of them, under `or`, which the caller checks has no chunk-level one)."""
    conditions = [c for c in spec.conditions if c.field not in CHUNK_KEYS]
    if not conditions:
        return "SELECT id FROM documents", []
    positives = [(i, _positive(c)) for i, c in enumerate(conditions)]
    drivers = {
        i: _Sql(conditions[i].field).docs(*positive)
        for i, positive in positives
        if positive is not None
    }
    driver: tuple[str, list[Any]] | None = None
    if spec.logic == "and" and drivers:
        # The positive condition holding for the fewest documents drives: SQLite walks
        # its index entries and checks the others document by document.
        chosen = min(drivers, key=lambda i: _estimate(conn, drivers[i]))
        driver = drivers[chosen]
        conditions.pop(chosen)  # what drives holds already
    elif spec.logic == "or" and len(drivers) == len(conditions):
        pieces = list(drivers.values())
        driver = " UNION ".join(d for d, _ in pieces), [v for _, vs in pieces for v in vs]
    parts = [_predicate(c) for c in conditions]
    joiner = " AND " if spec.logic == "and" else " OR "
    where = joiner.join(f"({p})" for p, _ in parts) or "1"
    params = [v for _, values in parts for v in values]
    if driver is None:
        return f"SELECT d.id FROM documents d WHERE {where}", params
    return (
        f"SELECT d.id FROM documents d WHERE d.id IN ({driver[0]}) AND ({where})",
        driver[1] + params,
    )


def _estimate(conn: sqlite3.Connection, driver: tuple[str, list[Any]]) -> int:
    """How many rows a driver reads, counted up to a bound (its index entries)."""
    sql, params = driver
    (count,) = conn.execute(f"SELECT count(*) FROM ({sql} LIMIT 4096)", params).fetchone()
    return int(count)


# The BM25 index keeps each document's text values of at most this length as terms
# (`_lexical`'s `meta`: `meta_term`): a filter's text equalities are said to tantivy as
# those terms.
META_VALUE_MAX_CHARS = 256
_META_SEPARATOR = "\x1f"


def meta_term(name: str, value: Any) -> str | None:
    """The BM25 index's term for a metadata text value (name, unit separator, value), or
    None for a value it keeps no term of (not text, too long, or holding the separator
    where it would be ambiguous)."""
    if (
        not isinstance(value, str)
        or len(value) > META_VALUE_MAX_CHARS
        or _META_SEPARATOR in name
        or _META_SEPARATOR in value
    ):
        return None
    return f"{name}{_META_SEPARATOR}{value}"


def _metadata_conditions(spec: Filter) -> list[Condition]:
    """`spec`'s conditions on document metadata (not a chunk's own fields or a column),
    when every condition must hold; none under `or`, where no one condition narrows."""
    if spec.logic == "or" and len(spec.conditions) > 1:
        return []
    return [
        c
        for c in spec.conditions
        if c.field not in CHUNK_KEYS and c.field not in _COLUMNS and c.field not in LOCATION_KEYS
    ]


def _text_terms(spec: Filter) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The (name, values) of `spec`'s text equalities that the BM25 index can say as
    terms (`eq` a text, `in` a list of texts, on a metadata name), when every
    condition must hold: a chunk passes the filter only if it has one of each."""
    out = []
    for c in _metadata_conditions(spec):
        if c.op == "eq" and isinstance(c.value, str):
            values: tuple[Any, ...] = (c.value,)
        elif c.op == "in" and isinstance(c.value, list | tuple) and c.value:
            values = tuple(c.value)
        else:
            continue
        if all(meta_term(c.field, v) is not None for v in values):
            out.append((c.field, values))
    return tuple(out)


class Allowed:
    """The chunks a filter allows, as sorted rowids, with what each index derives from
    them kept beside (`memo`, keyed by the index's own identity)."""

    def __init__(
        self, rowids: np.ndarray, terms: tuple[tuple[str, tuple[str, ...]], ...] = ()
    ) -> None:
        self.rowids = rowids
        # Text values one of which each allowed chunk's document holds, per field: the
        # filter's text equalities (`_text_terms`) or a text range's values among the
        # allowed documents (`_range_terms`), for the BM25 index to say as terms.
        self.terms = terms
        self.memo: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.rowids)

    def keep(self, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """The (rowid, score) of `ranked` whose chunk is allowed, in order."""
        keys = np.fromiter((key for key, _ in ranked), dtype=np.int64, count=len(ranked))
        return [r for r, ok in zip(ranked, self.contains(keys).tolist(), strict=True) if ok]

    def contains(self, rowids: np.ndarray) -> np.ndarray:
        """A mask: which of `rowids` are allowed."""
        if not len(self.rowids) or not len(rowids):
            return np.zeros(len(rowids), dtype=bool)
        pos = np.searchsorted(self.rowids, rowids)
        pos[pos >= len(self.rowids)] = 0
        return np.asarray(self.rowids[pos] == rowids)

    def remembered(
        self, key: Any, make: Callable[[], T], fresh: Callable[[T], bool] = lambda _: True
    ) -> T:
        """`make()` kept per `key` (what an index derives from the allowed chunks for
        every search), made again when `fresh` says what is kept no longer serves."""
        with self._lock:
            if key not in self.memo or not fresh(self.memo[key]):
                if len(self.memo) > 8:
                    self.memo.clear()
                self.memo[key] = make()
            held: T = self.memo[key]
            return held


def first_passing(
    fetch: Callable[[int], list[tuple[K, float]]],
    need: int,
    keep: Callable[[list[tuple[K, float]]], list[tuple[K, float]]],
    depth: int,
) -> list[tuple[K, float]]:
    """The first `need` of an index's ranking (`fetch(n)`: its best n) that `keep`
    keeps, asking `depth` deep first and four times deeper while too few pass (until
    the ranking runs out)."""
    limit = depth
    while True:
        results = fetch(limit)
        kept = keep(results)
        if len(kept) >= need or len(results) < limit:
            return kept[:need]
        limit *= 4


def deepen(
    fetch: Callable[[int], list[tuple[int, float]]],
    need: int,
    allowed: Allowed,
    total: int,
) -> list[tuple[int, float]]:
    """The first `need` of an index's ranking that `allowed` holds, asked first deep
    enough for the filter's share of the `total` chunks. For wide filters, where that
    depth is a few times `need`: cheaper than handing the index every allowed chunk."""
    if not len(allowed):
        return []
    return first_passing(fetch, need, allowed.keep, depth_for(need, allowed, total))


def depth_for(need: int, allowed: Allowed, total: int) -> int:
    """How deep `deepen` first asks an index of `total` chunks for `need` of `allowed`."""
    share = len(allowed) / max(total, len(allowed), 1)
    return int(need / share * 1.25) + 16


class FilterCache:
    """The `Allowed` of recent filters, for the change sequence they were worked out at
    (a write anywhere, by any process, makes a new one)."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, int], Allowed | None] = OrderedDict()

    def allowed(self, conn: sqlite3.Connection, spec: Filter, seq: int) -> Allowed | None:
        """The chunks `spec` allows at change sequence `seq`, or None when the filter
        cannot be said in SQL (or the store keeps no `fields`: an older one opened
        read-only), for the caller to filter after ranking."""
        key = (spec.model_dump_json(), seq)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        found = _allowed(conn, spec)
        with self._lock:
            self._entries[key] = found
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return found


def _has_fields(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fields'"
    ).fetchone()
    return row is not None


def _allowed(conn: sqlite3.Connection, spec: Filter) -> Allowed | None:
    per_chunk = [c for c in spec.conditions if c.field in CHUNK_KEYS]
    if per_chunk and (spec.logic == "or" or len(per_chunk) == len(spec.conditions)):
        return None  # every chunk would be judged in Python: no gain over ranking first
    if not _has_fields(conn):
        return None
    try:
        sql, params = _translate(conn, spec)
    except _Untranslatable:
        return None
    odd = _python_rows(conn, spec)
    if not per_chunk and not odd:
        # The common case in one statement: the allowed documents' chunks.
        found = conn.execute(f"SELECT c.id FROM ({sql}) m JOIN chunks c ON c.doc = m.id", params)
        rowids = [row[0] for row in found]
    else:
        docs = {row[0] for row in conn.execute(sql, params)}
        _judge_python_rows(spec, odd, docs)
        rowids = _chunks_judged(conn, spec, docs) if per_chunk else _chunks_of(conn, docs)
    ordered = np.sort(np.fromiter(rowids, dtype=np.int64, count=len(rowids)))
    terms = _text_terms(spec)
    if not terms and not per_chunk and not odd:
        terms = _range_terms(conn, spec, sql, params)
    return Allowed(ordered, terms)


# A text range is said to the BM25 index as the allowed documents' values on its field
# when they are at most this many (a year of ISO days: 366): tantivy-py ranges only
# numbers, dates and addresses, not the terms of a text field. Without terms, a filter
# allowing 5 % of 100k chunks is asked 271 deep at k 10 and 2,516 deep for a hybrid
# search's 100; the index says the terms only where they cost less (`_lexical`).
_RANGE_TERMS_MAX = 1024


def _range_terms(
    conn: sqlite3.Connection, spec: Filter, sql: str, params: list[Any]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """For a filter whose conditions must all hold and include a range on a metadata
    text field: that field's text values among the allowed documents, as terms the BM25
    index keeps (`meta_term`), or none when one has no term or they are too many. Each
    allowed document meets the range, which only a text value can (a range compares like
    types only, in SQL by storage class as `matches` does in Python), so it holds one of
    those values and a term of it: the documents holding a term are a superset of the
    allowed, which is what the index needs (it keeps the allowed ones after). A list's
    other items only widen it."""
    fields = [
        c.field for c in _metadata_conditions(spec) if c.op in _RANGE and isinstance(c.value, str)
    ]
    if not fields:
        return ()
    name = fields[0]
    values = [
        row[0]
        for row in conn.execute(
            f"SELECT DISTINCT f.value FROM ({sql}) m JOIN fields f ON f.doc = m.id "
            f"WHERE f.name = ? AND f.kind = {_TEXT} LIMIT {_RANGE_TERMS_MAX + 1}",
            [*params, name],
        )
    ]
    if not values or len(values) > _RANGE_TERMS_MAX:
        return ()
    if any(meta_term(name, v) is None for v in values):
        return ()
    return ((name, tuple(values)),)


def _python_rows(conn: sqlite3.Connection, spec: Filter) -> list[tuple[Any, ...]]:
    """The documents holding a value SQL cannot judge on a field of the filter."""
    names = sorted({c.field for c in spec.conditions if c.field not in CHUNK_KEYS})
    return conn.execute(
        "SELECT DISTINCT d.id, d.doc_id, d.title, d.metadata FROM fields f "
        "JOIN documents d ON d.id = f.doc "
        "WHERE f.kind = 3 AND f.name IN (SELECT value FROM json_each(?))",
        (json.dumps(names),),
    ).fetchall()


def _judge_python_rows(spec: Filter, rows: list[tuple[Any, ...]], docs: set[int]) -> None:
    """The documents of `_python_rows` are judged by `matches`, the semantics of
    record."""
    if not rows:
        return
    part = spec.model_copy(
        update={"conditions": tuple(c for c in spec.conditions if c.field not in CHUNK_KEYS)}
    )
    for doc, doc_id, title, metadata in rows:
        meta = {k: v for k, v in json.loads(metadata).items() if k not in LOCATION_KEYS}
        if matches(part, {**meta, "doc_id": doc_id, "title": title}):
            docs.add(doc)
        else:
            docs.discard(doc)


def _chunks_of(conn: sqlite3.Connection, docs: Iterable[int]) -> list[int]:
    ordered = sorted(docs)
    out: list[int] = []
    for start in range(0, len(ordered), 50_000):
        part = ordered[start : start + 50_000]
        out += [
            row[0]
            for row in conn.execute(
                "SELECT c.id FROM json_each(?) j JOIN chunks c ON c.doc = j.value",
                (json.dumps(part),),
            )
        ]
    return out


def _chunks_judged(conn: sqlite3.Connection, spec: Filter, docs: Iterable[int]) -> list[int]:
    """The chunks of `docs` (which pass the document-level conditions) that pass the
    whole filter on their own record (`page`, `pages`, `section`)."""
    out: list[int] = []
    ordered = sorted(docs)
    for start in range(0, len(ordered), 2_000):
        part = ordered[start : start + 2_000]
        rows = conn.execute(
            "SELECT c.id, c.start, c.end, d.id, d.doc_id, d.title, d.metadata "
            "FROM json_each(?) j JOIN documents d ON d.id = j.value "
            "JOIN chunks c ON c.doc = d.id",
            (json.dumps(part),),
        )
        out += [rowid for rowid, ok in chunk_verdicts(spec, rows) if ok]
    return out


def chunk_verdicts(
    spec: Filter | None, rows: Iterable[tuple[Any, ...]]
) -> Iterator[tuple[int, bool]]:
    """(rowid, whether `spec` allows it) of chunk rows (rowid, start, end, document
    rowid, doc id, title, metadata JSON), judged by `matches` on the record a search
    result carries (`chunk_metadata`: `page`, `pages`, `section` of its own). A
    document's metadata is parsed once: a PDF's page table can be long."""
    parsed: dict[int, dict[str, Any]] = {}
    for rowid, start, end, doc, doc_id, title, metadata in rows:
        meta = parsed.get(doc)
        if meta is None:
            meta = parsed[doc] = json.loads(metadata)
        record = {**chunk_metadata(meta, start, end), "doc_id": doc_id, "title": title}
        yield rowid, matches(spec, record)
