"""sift's metadata filters as Weaviate filters.

Weaviate can say most of sift's conditions exactly; what it cannot (negations and ranges
on arrays, word-tokenized titles, `not_contains`) is pushed down as a superset and
re-checked with `sift.filters.matches`, the semantics of record, after the reply. A
chunk's `page` and `section` are properties of its object (`m_page`, a number, and
`m_section`, one token), so a page range or a section is filtered on the server.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from weaviate.classes.query import Filter as WFilter

from sift.filters import Condition, Filter, matches
from sift.integrations.stores.weaviate._schema import PropKind, field_property

__all__ = ["Pushdown", "combine", "exclusion", "pushdown"]


@dataclass(frozen=True)
class Pushdown:
    """A filter as Weaviate can evaluate it.

    `where` None with `nothing` False means "every object"; `nothing` means no object can
    match. `exact` says Weaviate's answer equals sift's semantics; otherwise results are
    a superset, re-checked with `sift.filters.matches` (so the store over-fetches).
    """

    where: Any = None
    nothing: bool = False
    exact: bool = True


_ALL = Pushdown()
_NONE = Pushdown(nothing=True)
_SCALARS: dict[str, type | tuple[type, ...]] = {"text": str, "number": (int, float), "bool": bool}


def _fits(kind: str, value: Any) -> bool:
    base = kind.rstrip("[]")
    if base == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _SCALARS[base])


def _cast(kind: str, value: Any) -> Any:
    return float(value) if kind.startswith("number") else value


def _constant(condition: Condition) -> Pushdown:
    # A field the collection has never seen is absent from every object.
    return _ALL if matches(Filter(conditions=(condition,)), {}) else _NONE


def _like_safe(value: Any) -> bool:
    return isinstance(value, str) and bool(value) and not any(c in value for c in "*?")


def _condition(c: Condition, kinds: Mapping[str, PropKind], modern: bool) -> Pushdown:
    prop = field_property(c.field)
    kind = kinds.get(prop)
    if kind is None:
        return _constant(c)
    p = WFilter.by_property(prop)
    op, v = c.op, c.value
    is_array = kind.endswith("[]")
    inexact = Pushdown(exact=False)
    # Title is word-tokenized: equality there is a superset test, re-checked after.
    exact = prop != "title"
    if op == "empty":
        return Pushdown(p.is_none(True))
    if op == "not_empty":
        return Pushdown(p.is_none(False))
    if op in ("eq", "in"):
        wanted = [v] if op == "eq" else list(v or [])
        wanted = [_cast(kind, w) for w in wanted if _fits(kind, w)]
        if not wanted:
            return _NONE
        if len(wanted) == 1 and not is_array:
            return Pushdown(p.equal(wanted[0]), exact=exact)
        return Pushdown(p.contains_any(wanted), exact=exact)
    if op in ("ne", "not_in"):
        unwanted = [v] if op == "ne" else list(v or [])
        unwanted = [_cast(kind, u) for u in unwanted if _fits(kind, u)]
        if not unwanted:
            return _ALL
        if is_array or not exact:
            return inexact
        if modern:
            where = p.contains_none(unwanted)
        else:
            where = WFilter.all_of([p.not_equal(u) for u in unwanted])
        # A missing value is "not equal" in sift's semantics.
        return Pushdown(WFilter.any_of([where, p.is_none(True)]))
    if op in ("gt", "gte", "lt", "lte"):
        if is_array:
            # sift's range holds when any element passes (a chunk's `pages`, [first,
            # last]); Weaviate does not promise that on an array: a superset, re-checked.
            return inexact if _fits(kind, v) else _NONE
        if kind != "number" or not _fits(kind, v):
            return inexact if kind == "text" and isinstance(v, str) else _NONE
        method = {
            "gt": p.greater_than,
            "gte": p.greater_or_equal,
            "lt": p.less_than,
            "lte": p.less_or_equal,
        }[op]
        return Pushdown(method(float(v)))
    if op in ("contains", "starts_with", "ends_with"):
        if kind != "text" or not _like_safe(v):
            return inexact
        pattern = {"contains": f"*{v}*", "starts_with": f"{v}*", "ends_with": f"*{v}"}[op]
        return Pushdown(p.like(pattern), exact=exact)
    return inexact  # not_contains and anything Weaviate cannot say exactly


def pushdown(spec: Filter | None, kinds: Mapping[str, PropKind], *, modern: bool) -> Pushdown:
    """sift's filter as a Weaviate filter (see Pushdown for the contract)."""
    if spec is None or not spec.conditions:
        return _ALL
    parts = [_condition(c, kinds, modern) for c in spec.conditions]
    exact = all(p.exact for p in parts)
    if spec.logic == "and":
        if any(p.nothing for p in parts):
            return _NONE
        wheres = [p.where for p in parts if p.where is not None]
    else:
        live = [p for p in parts if not p.nothing]
        if not live:
            return _NONE
        if any(p.where is None for p in live):
            return Pushdown(exact=exact)
        wheres = [p.where for p in live]
    if not wheres:
        return Pushdown(exact=exact)
    where = (
        wheres[0]
        if len(wheres) == 1
        else (WFilter.all_of(wheres) if spec.logic == "and" else WFilter.any_of(wheres))
    )
    return Pushdown(where, exact=exact)


def exclusion(chunk_ids: Iterable[str], *, modern: bool) -> Any:
    ids = sorted(set(chunk_ids))
    if not ids:
        return None
    p = WFilter.by_property("chunk_id")
    if modern:
        return p.contains_none(ids)
    return WFilter.all_of([p.not_equal(i) for i in ids]) if len(ids) > 1 else p.not_equal(ids[0])


def combine(*wheres: Any) -> Any:
    live = [w for w in wheres if w is not None]
    if not live:
        return None
    return live[0] if len(live) == 1 else WFilter.all_of(live)
