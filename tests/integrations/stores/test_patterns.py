"""grep patterns: RE2 compilation with clear refusals, and the literal fragments that
pre-filter grep (sift.integrations.stores.patterns)."""

from __future__ import annotations

import pytest

from sift.errors import InvalidPatternError
from sift.integrations.stores.patterns import compile_pattern, literal_fragments


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("hello world", ["hello world"]),
        (r"foo\d+bar", ["bar", "foo"]),
        (r"(?i)Needle", ["Needle"]),
        # A repeated group: its first copy joins what precedes, its last what follows.
        ("abc(def)+ghi", ["abcdef", "defghi"]),
        ("abc(def)?ghi", ["abc", "ghi"]),
        ("ab*c", ["a", "c"]),
        ("ab{2,5}c", ["ab", "bc"]),
        ("ab{0,5}c", ["a", "c"]),
        ("ab+?c", ["ab", "bc"]),
        ("cat|dog", []),
        ("x(cat|dog)y", ["x", "y"]),
        ("x*", []),
        ("", []),
        # Classes, whatever their syntax, are never a fixed character.
        (r"[[:alpha:]]+name", ["name"]),
        (r"[]a]bc", ["bc"]),
        (r"[^]a]bc", ["bc"]),
        (r"[\]]xyz", ["xyz"]),
        (r"[a-c\d]xyz", ["xyz"]),
        (r"\pLword", ["word"]),
        (r"\p{Greek}word", ["word"]),
        (r"one\btwo\sthree", ["three", "one", "two"]),
        ("a.b^c$d", ["a", "b", "c", "d"]),
        # Escapes that stand for one character are part of the literal.
        (r"a\.b", ["a.b"]),
        (r"\QA.B*\E+x", ["A.B*", "*x"]),
        (r"\x41\x{6771}\101\t", ["A東A\t"]),
        ("a{,3}b", ["a{,3}b"]),
        ("a{b", ["a{b"]),
        # Groups of every kind, and flags that end with their group.
        ("(?P<n>abc)d", ["abcd"]),
        ("(?<n>abc)d", ["abcd"]),
        ("(?:abc)d", ["abcd"]),
        ("((abc))", ["abc"]),
        ("(?i:Ab)cd", ["Abcd"]),
        ("(a(?i)b)Cd", ["abCd"]),
        ("(?i)a(?-i)BC", ["aBC"]),
        # Under (?i) a letter whose case variants reach beyond A-Z (k and the Kelvin sign,
        # s and the long s, Greek, accented letters) ends the fragment.
        ("(?i)kelvin mass", ["elvin ma"]),
        ("(?i)Straße", ["tra", "e"]),
        ("(?i)ΣΊΣ", []),
        ("ΣΊΣ", ["ΣΊΣ"]),
        # Japanese: characters without case are literals with or without (?i).
        ("東京都[^。]*区", ["東京都", "区"]),
        ("(?i)東京都[^。]*区", ["東京都", "区"]),
        ("(東京|大阪)府", ["府"]),
        ("令和\\d+年", ["令和", "年"]),
        # Syntax the parser does not read yields nothing rather than a guess.
        ("abc)", []),
        ("(abc", []),
    ],
)
def test_literal_fragments(pattern: str, expected: list[str]) -> None:
    assert literal_fragments(pattern) == expected


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


def test_compile_pattern_refuses_non_strings() -> None:
    with pytest.raises(InvalidPatternError, match="must be a string, got int"):
        compile_pattern(5)  # type: ignore[arg-type]


def test_compile_pattern_is_linear_time() -> None:
    regex = compile_pattern(r"(a+)+$")
    assert regex.search("a" * 50_000 + "b") is None
