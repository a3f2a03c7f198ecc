"""Dify's `metadata_condition` mapped onto sift filters.

Conditions sift's stores can evaluate natively (one field, not a date comparison) are
pushed down to the store when the logic allows it; the rest (dates, several names per
condition, `or` mixing both kinds) are evaluated here, on the search's results, with the
exact semantics below. The service then asks the engine for more results than `top_k`
so that post-filtering still fills the answer.

- `before` / `after` compare instants: ISO 8601 dates or timestamps (a date alone is its
  midnight UTC, a time without offset is UTC) and Unix timestamps (seconds, or
  milliseconds above 10^11), on both sides. A record value that is not a date never matches.
- `=`, `≠`, `>`, `<`, `≥`, `≤` compare numbers; a numeric string value is read as a number.
- `in` / `not in` take a list, or a comma-separated string.
- `name` may be a list: a positive operator holds when it holds for any of the names, a
  negative one (`not contains`, `is not`, `not in`, `≠`, `empty`) when it holds for all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from sift.filters import Condition, Filter, FilterOp, matches

__all__ = ["DIFY_OPERATORS", "DifyCondition", "MetadataCondition", "Plan", "plan_filter"]

# Dify's operator -> (sift op, kind). "kind" says how the value is read.
DIFY_OPERATORS: dict[str, tuple[FilterOp, str]] = {
    "contains": ("contains", "text"),
    "not contains": ("not_contains", "text"),
    "start with": ("starts_with", "text"),
    "end with": ("ends_with", "text"),
    "is": ("eq", "scalar"),
    "is not": ("ne", "scalar"),
    "in": ("in", "list"),
    "not in": ("not_in", "list"),
    "empty": ("empty", "none"),
    "not empty": ("not_empty", "none"),
    "=": ("eq", "number"),
    "≠": ("ne", "number"),
    ">": ("gt", "number"),
    "<": ("lt", "number"),
    "≥": ("gte", "number"),
    "≤": ("lte", "number"),
    "before": ("lt", "date"),
    "after": ("gt", "date"),
}
# Spellings seen in older Dify documents and ASCII clients.
_ALIASES = {
    "null": "empty",
    "not null": "not empty",
    "!=": "≠",
    ">=": "≥",
    "<=": "≤",
    "starts with": "start with",
    "ends with": "end with",
}
_NEGATIVE: set[FilterOp] = {"not_contains", "ne", "not_in", "empty"}

Scalar = str | int | float | bool | None
FieldName = Annotated[str, StringConstraints(min_length=1, max_length=256)]


_INSTANT_SCHEMA: list[dict[str, Any]] = [
    {"type": "number"},
    {"type": "string", "format": "date"},
    {"type": "string", "format": "date-time"},
]


def _condition_schema(schema: dict[str, Any]) -> None:
    """The OpenAPI schema states what the service checks: the operator is one of Dify's
    (or an alias), and `before` / `after` take an instant (ISO 8601 or Unix time)."""
    dates = [op for op, (_, kind) in DIFY_OPERATORS.items() if kind == "date"]
    others = [op for op in [*DIFY_OPERATORS, *_ALIASES] if op not in dates]
    schema["properties"]["comparison_operator"]["enum"] = [*others, *dates]
    schema["oneOf"] = [
        {"properties": {"comparison_operator": {"enum": others}}},
        {
            "properties": {
                "comparison_operator": {"enum": dates},
                "value": {
                    "anyOf": [
                        *_INSTANT_SCHEMA,
                        {
                            "type": "array",
                            "items": {"anyOf": _INSTANT_SCHEMA},
                            "minItems": 1,
                            "maxItems": 1,
                        },
                    ]
                },
            },
            "required": ["value"],
        },
    ]


class DifyCondition(BaseModel):
    model_config = ConfigDict(extra="ignore", json_schema_extra=_condition_schema)

    name: FieldName | Annotated[list[FieldName], Field(min_length=1)] = Field(
        description="Metadata field, or several."
    )
    comparison_operator: str = Field(description="One of Dify's comparison operators.")
    value: Scalar | list[Scalar] = None

    @field_validator("name")
    @classmethod
    def _names(cls, value: str | list[str]) -> str | list[str]:
        names = [value] if isinstance(value, str) else value
        if not names or any(not n or len(n) > 256 for n in names):
            raise ValueError("name must be a non-empty field name (or list of them)")
        return value

    @field_validator("comparison_operator")
    @classmethod
    def _operator(cls, value: str) -> str:
        op = _ALIASES.get(value.strip().lower(), value.strip().lower())
        if op not in DIFY_OPERATORS:
            raise ValueError(
                f"unknown comparison_operator {value!r}; valid: {', '.join(DIFY_OPERATORS)}"
            )
        return op

    @property
    def names(self) -> list[str]:
        return [self.name] if isinstance(self.name, str) else list(self.name)


class MetadataCondition(BaseModel):
    model_config = ConfigDict(extra="ignore")

    logical_operator: Literal["and", "or"] | None = "and"
    conditions: list[DifyCondition] | None = Field(default=None, max_length=64)


# --------------------------------------------------------------------------- values


def to_instant(value: Any) -> float | None:
    """Seconds since the epoch for ISO dates/timestamps and Unix times; None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) / 1000.0 if abs(value) > 1e11 else float(value)
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        try:
            return to_instant(float(text))
        except ValueError:
            pass
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _number(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                return value
    return value


class ConditionValueError(ValueError):
    pass


def _value(condition: DifyCondition, op: FilterOp, kind: str) -> Any:
    value = condition.value
    if kind == "none":
        return None
    if kind == "list":
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if value is None:
            return []
        return value if isinstance(value, list) else [value]
    if isinstance(value, list):
        if len(value) != 1:
            raise ConditionValueError(
                f"{condition.comparison_operator!r} on {condition.names} takes one value, "
                f"not a list of {len(value)}"
            )
        value = value[0]
    if kind == "number":
        return _number(value)
    if kind == "date":
        instant = to_instant(value)
        if instant is None:
            raise ConditionValueError(
                f"{condition.comparison_operator!r} on {condition.names} needs an ISO 8601 "
                f"date or a Unix timestamp, not {value!r}"
            )
        return instant
    if kind == "text" and value is not None:
        return str(value)
    return value


# --------------------------------------------------------------------------- plan


Record = Mapping[str, Any]


@dataclass(frozen=True)
class Plan:
    """What to push down to the store and what to check on the results."""

    pushdown: Filter | None = None
    post: Callable[[Record], bool] | None = None


def _date_test(field: str, op: FilterOp, instant: float) -> Callable[[Record], bool]:
    def test(record: Record) -> bool:
        have = record.get(field)
        values = have if isinstance(have, list) else [have]
        for item in values:
            moment = to_instant(item)
            if moment is not None and (moment < instant if op == "lt" else moment > instant):
                return True
        return False

    return test


def _native_test(condition: Condition) -> Callable[[Record], bool]:
    single = Filter(conditions=(condition,))
    return lambda record: matches(single, record)


def _predicate(condition: DifyCondition) -> tuple[Callable[[Record], bool], Condition | None]:
    """A test of one condition, and its sift Condition when the store can run it."""
    op, kind = DIFY_OPERATORS[condition.comparison_operator]
    value = _value(condition, op, kind)
    names = condition.names
    tests: list[Callable[[Record], bool]]
    if kind == "date":
        tests = [_date_test(n, op, value) for n in names]
        native = None
    else:
        conditions = [Condition(field=n, op=op, value=value) for n in names]
        tests = [_native_test(c) for c in conditions]
        native = conditions[0] if len(conditions) == 1 else None
    if op in _NEGATIVE:
        return (lambda r: all(t(r) for t in tests)), native
    return (lambda r: any(t(r) for t in tests)), native


def plan_filter(spec: MetadataCondition | None) -> Plan:
    """Splits Dify's condition into a store filter and a post-filter (either may be None).

    Raises `ConditionValueError` for values that cannot be compared as asked.
    """
    if spec is None or not spec.conditions:
        return Plan()
    logic = spec.logical_operator or "and"
    parts = [_predicate(c) for c in spec.conditions]
    natives = [native for _, native in parts if native is not None]
    if logic == "and":
        rest = [test for test, native in parts if native is None]
        pushdown = Filter(logic="and", conditions=tuple(natives)) if natives else None
        post = (lambda r: all(t(r) for t in rest)) if rest else None
        return Plan(pushdown=pushdown, post=post)
    if len(natives) == len(parts):
        return Plan(pushdown=Filter(logic="or", conditions=tuple(natives)))
    tests: Sequence[Callable[[Record], bool]] = [test for test, _ in parts]
    return Plan(post=lambda r: any(t(r) for t in tests))
