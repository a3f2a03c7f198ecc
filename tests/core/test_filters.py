from __future__ import annotations

import pytest
from pydantic import ValidationError

from sift.errors import InvalidFilterError
from sift.filters import Condition, Filter, matches, parse_filter

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


# A chunk's record: its document's metadata, and where it sits (stores.locations).
PDF_CHUNK = {"doc_id": "決算.pdf", "title": "決算説明資料", "lang": "ja", "format": "pdf"}


@pytest.mark.parametrize(
    ("spec", "page", "expected"),
    [
        ({"page": {"gte": 3, "lte": 5}}, 4, True),
        ({"page": {"gte": 3, "lte": 5}}, 3, True),
        ({"page": {"gte": 3, "lte": 5}}, 6, False),
        ({"page": 2}, 2, True),
        ({"page": [1, 2]}, 3, False),
        ({"pages": 4}, 3, False),  # `pages` is [first, last]: 3 here
    ],
)
def test_page_is_a_number_with_ranges(spec: dict[str, object], page: int, expected: bool) -> None:
    record = {**PDF_CHUNK, "page": page, "pages": [page, page]}
    assert matches(Filter.of(spec), record) is expected


def test_section_equality_and_membership_english_and_japanese() -> None:
    record = {**PDF_CHUNK, "page": 2, "section": "Results > 売上高"}
    assert matches(Filter.of({"section": "Results > 売上高"}), record)
    assert matches(Filter.of({"section": ["Outlook", "Results > 売上高"]}), record)
    assert not matches(Filter.of({"section": "Results"}), record)  # the whole path
    # A passage outside any section (a JSONL line) has none: equality never holds.
    assert not matches(Filter.of({"section": "Results > 売上高"}), {"doc_id": "x"})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"year": {"gt_e": 2000}},
            "year: unknown operator 'gt_e'; the operators are eq, ne, gt, gte, lt, lte",
        ),
        (
            {"ページ": {"以上": 3}},
            "ページ: unknown operator '以上'; the operators are eq, ne, gt, gte, lt, lte",
        ),
        (
            {"conditions": [{"field": "lang", "op": "like", "value": "e"}]},
            "conditions[0].op: unknown operator 'like'; the operators are eq, ne, in, "
            "not_in, gt, gte, lt, lte, contains, not_contains, starts_with, ends_with, "
            "empty, not_empty",
        ),
        ({"lang": {}}, "lang: an empty object; give one of eq, ne, gt, gte, lt, lte"),
        ({"lang": {"eq": ["en"]}}, "lang.eq: a value is a string, number, boolean or null"),
        ("lang=en", "a filter is an object, not str"),
    ],
)
def test_a_bad_filter_is_one_line_naming_the_problem(spec: object, message: str) -> None:
    """`parse_filter` is what every face checks with; `Filter.of` (the Python API) too,
    so an unknown operator is never read as a value that matches nothing."""
    for parse in (parse_filter, Filter.of):
        with pytest.raises(InvalidFilterError) as caught:
            parse(spec)  # type: ignore[arg-type]
        assert str(caught.value).startswith(message)
        assert "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)  # what callers caught before


def test_tuples_and_sets_are_lists_of_values() -> None:
    assert Filter.of({"lang": ("ja", "en")}) == Filter.of({"lang": ["ja", "en"]})
    assert matches(Filter.of({"lang": {"ja"}}), PDF_CHUNK)
