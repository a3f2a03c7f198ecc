"""The shared store helpers: patterns, fragments, fusion, input checks."""

from __future__ import annotations

import pytest

from sift.errors import InvalidPatternError, InvalidQueryError
from sift.integrations.stores._common import (
    compile_pattern,
    content_hash,
    fuse,
    fusion_names,
    literal_fragments,
    relative_score_fusion,
    rrf_fusion,
    validate_query,
)
from sift.types import Document


def test_content_hash_covers_every_stored_field() -> None:
    base = Document(id="a", title="t", text="x", metadata={"k": 1, "j": [1, 2]})
    same = Document(id="a", title="t", text="x", metadata={"j": [1, 2], "k": 1})
    assert content_hash(base) == content_hash(same)
    for other in (
        base.model_copy(update={"title": "u"}),
        base.model_copy(update={"text": "y"}),
        base.model_copy(update={"metadata": {"k": 2, "j": [1, 2]}}),
        base.model_copy(update={"id": "b"}),
    ):
        assert content_hash(other) != content_hash(base)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("hello world", ["hello world"]),
        (r"foo\d+bar", ["bar", "foo"]),
        (r"(?i)Needle", ["Needle"]),
        ("abc(def)+ghi", ["abc", "def", "ghi"]),
        ("abc(def)?ghi", ["abc", "ghi"]),
        ("cat|dog", []),
        ("x*", []),
        (r"[[:alpha:]]+name", []),
        (r"\QA.B\E", []),
        (r"\pLword", []),
        (r"a\.b", ["a.b"]),
        ("", []),
    ],
)
def test_literal_fragments(pattern: str, expected: list[str]) -> None:
    assert literal_fragments(pattern) == expected


@pytest.mark.parametrize(
    "pattern", ["hello world", r"foo\d+bar", "abc(def)+ghi", "abc(def)?ghi", r"a\.b\s*c{2,3}"]
)
def test_fragments_are_in_every_match(pattern: str) -> None:
    texts = ["hello world", "foo12bar", "abcdefdefghi", "abcghi", "a.b  ccc"]
    regex = compile_pattern(pattern)
    for text in texts:
        if regex.search(text):
            assert all(f in text for f in literal_fragments(pattern))


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (r"(\w)\1", "backreferences"),
        (r"a(?!b)", "lookahead"),
        (r"a++", "possessive"),
        ("[", "missing"),
        ("a{1001}", "repetition"),
        ("x" * 501, "limit is 500"),
        ("", "empty"),
    ],
)
def test_compile_pattern_refuses_clearly(pattern: str, message: str) -> None:
    with pytest.raises(InvalidPatternError, match=message):
        compile_pattern(pattern)


def test_compile_pattern_is_linear_time() -> None:
    regex = compile_pattern(r"(a+)+$")
    assert regex.search("a" * 50_000 + "b") is None


def test_validate_query() -> None:
    assert validate_query("  who?  ") == "who?"
    with pytest.raises(InvalidQueryError, match="empty"):
        validate_query(" \n")
    with pytest.raises(InvalidQueryError, match="limit is 10"):
        validate_query("x" * 11, max_chars=10)


DENSE = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
LEXICAL = [("c", 12.0), ("d", 6.0), ("a", 3.0)]


def test_relative_score_fusion_matches_weaviate() -> None:
    fused = dict(relative_score_fusion(DENSE, LEXICAL, 0.5))
    # dense normalised: a 1, b 0.875, c 0; lexical: c 1, d 1/3, a 0
    assert fused["a"] == pytest.approx(0.5)
    assert fused["b"] == pytest.approx(0.4375)
    assert fused["c"] == pytest.approx(0.5)
    assert fused["d"] == pytest.approx(1 / 6)
    order = [key for key, _ in relative_score_fusion(DENSE, LEXICAL, 0.5)]
    assert order == ["c", "a", "b", "d"]  # tie a/c broken by lexical rank


def test_rrf_fusion_is_weighted() -> None:
    fused = dict(rrf_fusion(DENSE, LEXICAL, 0.25))
    assert fused["a"] == pytest.approx(0.25 / 61 + 0.75 / 63)
    assert fused["d"] == pytest.approx(0.75 / 62)


@pytest.mark.parametrize("name", ["relative_score", "rrf"])
def test_alpha_extremes_reproduce_one_list(name: str) -> None:
    assert [k for k, _ in fuse(name, DENSE, LEXICAL, 0.0)][:3] == ["c", "d", "a"]
    assert [k for k, _ in fuse(name, DENSE, LEXICAL, 1.0)][:3] == ["a", "b", "c"]


def test_unknown_fusion_lists_names() -> None:
    assert fusion_names() == ("relative_score", "rrf")
    with pytest.raises(ValueError, match="valid names: relative_score, rrf"):
        fuse("borda", DENSE, LEXICAL, 0.5)
