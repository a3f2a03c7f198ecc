from __future__ import annotations

import pytest
from pydantic import ValidationError

from sift.filters import Condition, Filter, matches

RECORD = {
    "doc_id": "d1",
    "title": "Alpha",
    "lang": "en",
    "year": 2001,
    "tags": ["a", "b"],
    "blank": "",
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"lang": "en"}, True),
        ({"lang": "fr"}, False),
        ({"lang": ["fr", "en"]}, True),
        ({"year": {"gte": 2000, "lt": 2010}}, True),
        ({"year": {"gt": 2001}}, False),
        ({"tags": "b"}, True),
        ({"tags": ["c", "a"]}, True),
        ({"doc_id": "d1", "title": "Alpha"}, True),
        ({"missing": "x"}, False),
        ({"year": {"gte": "2000"}}, False),  # a string never compares with a number
    ],
)
def test_short_form(spec: dict[str, object], expected: bool) -> None:
    assert matches(Filter.of(spec), RECORD) is expected


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("contains", "lph", True),
        ("not_contains", "lph", False),
        ("starts_with", "Al", True),
        ("ends_with", "ha", True),
        ("ends_with", "Al", False),
        ("ne", "Alpha", False),
        ("not_in", ["Beta"], True),
        ("empty", None, False),
        ("not_empty", None, True),
    ],
)
def test_operators_on_title(op: str, value: object, expected: bool) -> None:
    spec = Filter(conditions=(Condition(field="title", op=op, value=value),))  # type: ignore[arg-type]
    assert matches(spec, RECORD) is expected


def test_empty_counts_blank_and_absent() -> None:
    blank = Filter(conditions=(Condition(field="blank", op="empty"),))
    absent = Filter(conditions=(Condition(field="nope", op="empty"),))
    assert matches(blank, RECORD) and matches(absent, RECORD)


def test_or_logic_and_empty_filter() -> None:
    either = Filter(
        logic="or",
        conditions=(
            Condition(field="lang", value="fr"),
            Condition(field="year", op="lt", value=2005),
        ),
    )
    assert matches(either, RECORD)
    assert matches(Filter(), RECORD)
    assert matches(None, RECORD)


def test_unknown_operator_is_rejected_by_name() -> None:
    with pytest.raises(ValidationError, match="op"):
        Condition(field="x", op="like", value="y")  # type: ignore[arg-type]
