"""RE2 (google-re2, grep's engine) on Japanese patterns and text, on plain strings.

The stores' grep compiles user patterns with RE2 over chunk text; these are the facts it
relies on for Japanese: UTF-8 patterns and character classes match whole characters, and
offsets are character offsets into the Python string. (RE2's \\w and \\b are ASCII-only,
pinned below so that nobody relies on them for Japanese words.)
"""

from __future__ import annotations

import re2

TEXT = (
    "東京都千代田区丸の内一丁目にある東京駅は、JR東日本の駅である。"
    "東京都の区部には23の特別区がある。大阪府大阪市北区梅田。"
)


def _compile(pattern: str) -> re2._Regexp:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


def test_the_issue_pattern_matches_within_one_sentence() -> None:
    found = [m.group() for m in _compile("東京都[^。]*区").finditer(TEXT)]
    # [^。] is one character class over code points: the match never crosses 。
    assert found == ["東京都千代田区", "東京都の区部には23の特別区"]


def test_offsets_are_character_offsets() -> None:
    match = _compile("東京駅").search(TEXT)
    assert match is not None
    assert TEXT[match.start() : match.end()] == "東京駅"
    assert match.span() == (TEXT.index("東京駅"), TEXT.index("東京駅") + 3)


def test_ranges_and_unicode_classes() -> None:
    hiragana = [m.group() for m in _compile("[ぁ-ん]+").finditer("東京駅はJRの駅である")]
    assert hiragana == ["は", "の", "である"]
    assert [m.group() for m in _compile(r"\p{Han}+").finditer("東京駅はJRの駅")] == [
        "東京駅",
        "駅",
    ]
    katakana = _compile(r"\p{Katakana}+").search("ソニー・ピクチャーズ")
    assert katakana is not None and katakana.group() == "ソニ"  # ー is not Katakana here
    assert _compile(r"[\p{Katakana}ー]+").search("ソニーです").group() == "ソニー"


def test_dot_and_counted_repetition_count_characters_not_bytes() -> None:
    assert _compile("^東.{2}区$").search("東京都区") is not None
    assert _compile("^東.{2}区$").search("東京都港区") is None
    assert _compile("梅雨{1,2}").search("梅雨雨") is not None


def test_case_insensitive_full_width_latin() -> None:
    assert _compile("(?i)ｉｐｏｄ").search("ＩＰＯＤを製作") is not None
    assert _compile("(?i)ipod").search("iPodを製作").group() == "iPod"


def test_word_classes_are_ascii_only() -> None:
    # Pinned: \w does not match kanji or kana in RE2, so every kanji or kana is a non-word
    # character to \b: \bJR\b matches inside Japanese text (Python's re would not).
    assert _compile(r"\w+").search("東京") is None
    assert _compile(r"\bJR\b").search("東京駅はJRの駅").group() == "JR"
    assert _compile(r"\b駅\b").search("東京駅は") is None


def test_japanese_literal_escaped_like_the_planner_does() -> None:
    from sift.graphs.policies.heuristic import escape_pattern

    name = "『雨の日（上）』"
    pattern = "(?i)" + escape_pattern(name)
    assert _compile(pattern).search(f"彼は{name}を書いた").group() == name
