"""Metadata filters shared by every store, with one reference evaluator.

A filter is a list of conditions joined by `and` or `or`. Stores translate it to their
native form where they can (SQL, Weaviate filters) and must agree with `matches`, which is
the semantics of record; the store tests check that agreement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Condition", "Filter", "FilterOp", "matches"]

FilterOp = Literal[
    "eq",
    "ne",
    "in",
    "not_in",
    "gt",
    "gte",
    "lt",
    "lte",
    "contains",
    "not_contains",
    "starts_with",
    "ends_with",
    "empty",
    "not_empty",
]

_RANGE_KEYS = {"gt", "gte", "lt", "lte"}


class Condition(BaseModel):
    """One test on a metadata field (`doc_id` and `title` are fields too)."""

    model_config = ConfigDict(frozen=True)

    field: str = Field(min_length=1, max_length=256)
    op: FilterOp = "eq"
    value: Any = None


class Filter(BaseModel):
    """Conditions joined by `logic`. An empty filter matches everything."""

    model_config = ConfigDict(frozen=True)

    logic: Literal["and", "or"] = "and"
    conditions: tuple[Condition, ...] = ()

    @classmethod
    def of(cls, spec: Filter | Mapping[str, Any] | None) -> Filter | None:
        """Builds a filter from the short form used on the CLI and in the Python API.

        `{"lang": "en"}` is equality, `{"tag": ["a", "b"]}` is membership and
        `{"year": {"gte": 2000, "lt": 2010}}` is a range; several keys are and-ed.
        """
        if spec is None or isinstance(spec, Filter):
            return spec
        if "conditions" in spec:
            return cls.model_validate(spec)
        conditions: list[Condition] = []
        for name, value in spec.items():
            if isinstance(value, Mapping) and value and set(value) <= _RANGE_KEYS | {"eq", "ne"}:
                conditions += [Condition(field=name, op=op, value=v) for op, v in value.items()]
            elif isinstance(value, list | tuple | set | frozenset):
                conditions.append(Condition(field=name, op="in", value=list(value)))
            else:
                conditions.append(Condition(field=name, op="eq", value=value))
        return cls(conditions=tuple(conditions))


def _compare(left: Any, right: Any, op: str) -> bool:
    try:
        if op == "gt":
            return left > right
        if op == "gte":
            return left >= right
        if op == "lt":
            return left < right
        return left <= right
    except TypeError:
        # Mixed types (a string against a number) never match rather than crash a search.
        return False


def _test(condition: Condition, record: Mapping[str, Any]) -> bool:
    op, want = condition.op, condition.value
    present = condition.field in record and record[condition.field] not in (None, "", [])
    if op == "empty":
        return not present
    if op == "not_empty":
        return present
    have = record.get(condition.field)
    values = have if isinstance(have, list) else [have]
    if op == "eq":
        return want in values
    if op == "ne":
        return want not in values
    if op == "in":
        return any(v in list(want or []) for v in values)
    if op == "not_in":
        return not any(v in list(want or []) for v in values)
    if op in _RANGE_KEYS:
        return have is not None and any(_compare(v, want, op) for v in values)
    text = [str(v) for v in values if v is not None]
    needle = str(want)
    if op == "contains":
        return any(needle in t for t in text)
    if op == "not_contains":
        return not any(needle in t for t in text)
    if op == "starts_with":
        return any(t.startswith(needle) for t in text)
    return any(t.endswith(needle) for t in text)  # ends_with


def matches(spec: Filter | None, record: Mapping[str, Any]) -> bool:
    """True when `record` (a chunk's metadata plus `doc_id` and `title`) passes the filter."""
    if spec is None or not spec.conditions:
        return True
    results = (_test(c, record) for c in spec.conditions)
    return all(results) if spec.logic == "and" else any(results)
