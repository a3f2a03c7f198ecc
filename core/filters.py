"""Metadata filters shared by every store, with one reference evaluator.

A filter is a list of conditions joined by `and` or `or`. Stores translate it to their
native form where they can (SQL, Weaviate filters) and must agree with `matches`, which is
the semantics of record; the store tests check that agreement.

A condition tests a field of a chunk's record: its document's metadata (files read by
`sift index` carry `lang` and `format`), `doc_id` and `title`, and where the chunk sits,
`page` (a number), `pages` ([first, last]) and `section` (the heading path).

`parse_filter` is the one door: every face (CLI `--filter`, HTTP, MCP, the LangChain
tool, the Python API through `Filter.of`) checks a filter with it, so an unknown operator
is refused everywhere with the same message, never read as a value that matches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sift.errors import InvalidFilterError

__all__ = [
    "MAX_FILTER_CONDITIONS",
    "MAX_FILTER_VALUES",
    "Condition",
    "Filter",
    "FilterOp",
    "matches",
    "parse_filter",
]

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
_OPS: tuple[str, ...] = get_args(FilterOp)
# What the short form's object on a field holds: `{"year": {"gte": 2000, "lt": 2010}}`.
_COMPARISONS: tuple[str, ...] = ("eq", "ne", "gt", "gte", "lt", "lte")

# What one filter may hold, on every face (HTTP, MCP, the LangChain tool): beyond these a
# filter is a mistake or an attack, and a list of 10,000 values cost seconds of CPU.
MAX_FILTER_CONDITIONS = 64
MAX_FILTER_VALUES = 1_000
_MAX_FIELD_CHARS = 256


class Condition(BaseModel):
    """One test on a field of a chunk's record (metadata, `doc_id`, `title`, `page`,
    `section`: see the module's docstring)."""

    model_config = ConfigDict(frozen=True)

    field: str = Field(min_length=1, max_length=256)
    op: FilterOp = "eq"
    value: Any = None

    @cached_property
    def members(self) -> frozenset[Any] | list[Any]:
        """The values of `in` / `not_in` as a set (a list when one is not hashable):
        tested once per record, a list of 10,000 values was 10,000 comparisons each."""
        values = self.value if isinstance(self.value, list | tuple | set | frozenset) else []
        try:
            return frozenset(values)
        except TypeError:
            return list(values)


class Filter(BaseModel):
    """Conditions joined by `logic`. An empty filter matches everything."""

    model_config = ConfigDict(frozen=True)

    logic: Literal["and", "or"] = "and"
    conditions: tuple[Condition, ...] = ()

    @classmethod
    def of(cls, spec: Filter | Mapping[str, Any] | None) -> Filter | None:
        """Builds a filter from the short form used on the CLI and in the Python API,
        checked by `parse_filter` (InvalidFilterError names what is wrong).

        `{"lang": "en"}` is equality, `{"tag": ["a", "b"]}` is membership and
        `{"year": {"gte": 2000, "lt": 2010}}` is a range; several keys are and-ed.
        """
        return parse_filter(spec)


def _compare(left: Any, right: Any, op: str) -> bool:
    try:
        if op == "gt":
            return bool(left > right)
        if op == "gte":
            return bool(left >= right)
        if op == "lt":
            return bool(left < right)
        return bool(left <= right)
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
    if op in ("in", "not_in"):
        # A string's characters, as before; anything else not a list holds no member.
        members = list(want) if isinstance(want, str) else condition.members
        found = any(_member(v, members) for v in values)
        return found if op == "in" else not found
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


def _member(value: Any, members: frozenset[Any] | list[Any]) -> bool:
    try:
        return value in members
    except TypeError:  # an unhashable value (a list inside metadata) is in no set
        return False


def _build(spec: Mapping[str, Any]) -> Filter:
    """The Filter of a checked spec (see `parse_filter`)."""
    if "conditions" in spec:
        return Filter.model_validate(spec)
    conditions: list[Condition] = []
    for name, value in spec.items():
        if isinstance(value, Mapping):
            conditions += [Condition(field=name, op=op, value=v) for op, v in value.items()]
        elif isinstance(value, list | tuple | set | frozenset):
            conditions.append(Condition(field=name, op="in", value=list(value)))
        else:
            conditions.append(Condition(field=name, op="eq", value=value))
    return Filter(conditions=tuple(conditions))


def _unknown_op(where: str, op: Any, allowed: tuple[str, ...]) -> InvalidFilterError:
    return InvalidFilterError(
        f"{where}: unknown operator {op!r}; the operators are {', '.join(allowed)}"
    )


def _scalar(value: Any, where: str) -> None:
    if not (value is None or isinstance(value, str | int | float | bool)):
        raise InvalidFilterError(
            f"{where}: a value is a string, number, boolean or null, not {type(value).__name__}"
        )


def _value(value: Any, where: str) -> None:
    if isinstance(value, list | tuple | set | frozenset):
        if len(value) > MAX_FILTER_VALUES:
            raise InvalidFilterError(
                f"{where}: {len(value):,} values; the limit is {MAX_FILTER_VALUES:,} per condition"
            )
        for index, item in enumerate(value):
            _scalar(item, f"{where}[{index}]")
        return
    _scalar(value, where)


def _field(name: Any, where: str) -> None:
    if not isinstance(name, str) or not 1 <= len(name) <= _MAX_FIELD_CHARS:
        raise InvalidFilterError(
            f"{where}: a field name is text of 1 to {_MAX_FIELD_CHARS} characters"
        )


def _many(count: int) -> None:
    if count > MAX_FILTER_CONDITIONS:
        raise InvalidFilterError(
            f"{count} conditions; the limit is {MAX_FILTER_CONDITIONS} per filter"
        )


def _checked_full(spec: Mapping[str, Any]) -> None:
    unknown = set(spec) - {"logic", "conditions"}
    if unknown:
        raise InvalidFilterError(
            f"a full filter has logic and conditions only, not {sorted(map(str, unknown))}"
        )
    if spec.get("logic", "and") not in ("and", "or"):
        raise InvalidFilterError(f"logic is 'and' or 'or', not {spec.get('logic')!r}")
    conditions = spec["conditions"]
    if not isinstance(conditions, list | tuple):
        raise InvalidFilterError("conditions is a list of {field, op, value} objects")
    _many(len(conditions))
    for index, condition in enumerate(conditions):
        where = f"conditions[{index}]"
        if isinstance(condition, Condition):
            condition = condition.model_dump()
        if not isinstance(condition, Mapping):
            raise InvalidFilterError(f"{where}: a condition is a {{field, op, value}} object")
        if set(condition) - {"field", "op", "value"}:
            raise InvalidFilterError(f"{where}: a condition has field, op and value only")
        _field(condition.get("field"), f"{where}.field")
        op = condition.get("op", "eq")
        if op not in _OPS:
            raise _unknown_op(f"{where}.op", op, _OPS)
        _value(condition.get("value"), f"{where}.value")


def _checked_short(spec: Mapping[str, Any]) -> None:
    _many(len(spec))
    for name, value in spec.items():
        _field(name, f"{str(name)[:40]!r}")
        where = str(name)[:80]
        if isinstance(value, Mapping):
            if not value:
                raise InvalidFilterError(
                    f"{where}: an empty object; give one of {', '.join(_COMPARISONS)}"
                )
            for op, bound in value.items():
                if op not in _COMPARISONS:
                    raise _unknown_op(where, op, _COMPARISONS)
                _scalar(bound, f"{where}.{op}")
        else:
            _value(value, where)


def parse_filter(spec: Any) -> Filter | None:
    """A filter as a caller gave it (JSON data: the short form `{"lang": "en", "year":
    {"gte": 2000}}` or `{"logic", "conditions"}`; or a Filter, returned as it is),
    checked by the rules every face shares: known operators, scalar values, at most
    `MAX_FILTER_CONDITIONS` conditions and `MAX_FILTER_VALUES` values in a list.
    InvalidFilterError (a ValueError) names what is wrong, in one line."""
    if spec is None or isinstance(spec, Filter):
        return spec
    if not isinstance(spec, Mapping):
        raise InvalidFilterError(f"a filter is an object, not {type(spec).__name__}")
    if "conditions" in spec:
        _checked_full(spec)
    else:
        _checked_short(spec)
    try:
        return _build(spec)
    except ValidationError as exc:
        raise InvalidFilterError(exc.errors()[0]["msg"]) from None


def matches(spec: Filter | None, record: Mapping[str, Any]) -> bool:
    """True when `record` (a chunk's metadata plus `doc_id` and `title`) passes the filter."""
    if spec is None or not spec.conditions:
        return True
    results = (_test(c, record) for c in spec.conditions)
    return all(results) if spec.logic == "and" else any(results)
