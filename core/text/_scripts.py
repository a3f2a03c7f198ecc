"""The scripts of Unicode text: which script a character is written in, and whether a
text holds one written without spaces (CJK, Thai...). Standard library only: the entity
extraction's worker process (`sift.entities._worker`) imports this and not
`sift.text._analysis`, whose pydantic and stemmer imports were most of its 0.2 s start
(`sift.text` exports what is public here)."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from functools import cache, lru_cache
from typing import Literal

__all__ = [
    "HAN",
    "HANGUL",
    "HIRAGANA",
    "KATAKANA",
    "MARKS",
    "NGRAM",
    "SEA",
    "Script",
    "char_class",
    "cjk_pattern",
    "has_cjk",
    "name_without_suffix",
    "script_of",
]

Script = Literal[
    "han",
    "hiragana",
    "katakana",
    "hangul",
    "thai",
    "lao",
    "khmer",
    "myanmar",
    "latin",
    "cyrillic",
    "greek",
    "armenian",
    "georgian",
    "hebrew",
    "arabic",
    "indic",
    "other_letter",
    "digit",
    "mark",
    "space",
    "punct",
]


# (first, last, script) code point ranges, sorted by first. Letters outside these ranges
# are "other_letter"; everything else is classified by its Unicode category.
RANGES: tuple[tuple[int, int, Script], ...] = (
    (0x0030, 0x0039, "digit"),
    (0x0041, 0x005A, "latin"),
    (0x0061, 0x007A, "latin"),
    (0x00AA, 0x00AA, "latin"),
    (0x00BA, 0x00BA, "latin"),
    (0x00C0, 0x00D6, "latin"),
    (0x00D8, 0x00F6, "latin"),
    (0x00F8, 0x024F, "latin"),
    (0x0250, 0x02AF, "latin"),
    (0x0300, 0x036F, "mark"),
    (0x0370, 0x03FF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x0530, 0x058F, "armenian"),
    (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x06FF, "arabic"),
    (0x0750, 0x077F, "arabic"),
    (0x08A0, 0x08FF, "arabic"),
    (0x0900, 0x0DFF, "indic"),
    (0x0E00, 0x0E7F, "thai"),
    (0x0E80, 0x0EFF, "lao"),
    (0x1000, 0x109F, "myanmar"),
    (0x10A0, 0x10FF, "georgian"),
    (0x1100, 0x11FF, "hangul"),
    (0x1780, 0x17FF, "khmer"),
    (0x1AB0, 0x1AFF, "mark"),
    (0x1C80, 0x1C8F, "cyrillic"),
    (0x1DC0, 0x1DFF, "mark"),
    (0x1E00, 0x1EFF, "latin"),
    (0x1F00, 0x1FFF, "greek"),
    (0x20D0, 0x20FF, "mark"),
    (0x2C60, 0x2C7F, "latin"),
    (0x2DE0, 0x2DFF, "cyrillic"),
    (0x2E80, 0x2FDF, "han"),  # radicals
    (0x3005, 0x3005, "han"),  # 々 iteration mark
    (0x3006, 0x3006, "han"),  # 〆
    (0x3007, 0x3007, "han"),  # 〇
    (0x3021, 0x3029, "han"),  # Suzhou numerals
    (0x303B, 0x303B, "han"),  # 〻
    (0x3041, 0x309F, "hiragana"),
    (0x30A1, 0x30FA, "katakana"),  # without ・ (30FB), a separator inside names
    (0x30FC, 0x30FF, "katakana"),  # ー and the katakana iteration marks
    (0x3131, 0x318E, "hangul"),
    (0x31F0, 0x31FF, "katakana"),
    (0x3400, 0x4DBF, "han"),
    (0x4E00, 0x9FFF, "han"),
    (0xA640, 0xA69F, "cyrillic"),
    (0xA720, 0xA7FF, "latin"),
    (0xA960, 0xA97F, "hangul"),
    (0xAB30, 0xAB6F, "latin"),
    (0xAC00, 0xD7AF, "hangul"),
    (0xD7B0, 0xD7FF, "hangul"),
    (0xF900, 0xFAFF, "han"),
    (0xFB00, 0xFB06, "latin"),
    (0xFB1D, 0xFB4F, "hebrew"),
    (0xFB50, 0xFDFF, "arabic"),
    (0xFE20, 0xFE2F, "mark"),
    (0xFE70, 0xFEFF, "arabic"),
    (0xFF10, 0xFF19, "digit"),  # full-width forms, before NFKC
    (0xFF21, 0xFF3A, "latin"),
    (0xFF41, 0xFF5A, "latin"),
    (0xFF66, 0xFF9F, "katakana"),  # half-width katakana
    (0xFFA0, 0xFFDC, "hangul"),  # half-width hangul
    (0x20000, 0x3134F, "han"),
)
STARTS = [first for first, _, _ in RANGES]


def char_class(scripts: frozenset[str] | set[str]) -> str:
    """The characters of `scripts` as the body of a regular expression's class."""
    parts = []
    for first, last, script in RANGES:
        # Full-width and half-width forms are gone after NFKC.
        if script in scripts and not 0xFF00 <= first <= 0xFFEF:
            parts.append(f"{chr(first)}-{chr(last)}" if last > first else chr(first))
    return "".join(re.escape(p) if len(p) == 1 else p for p in parts)


HAN = char_class({"han"})
HIRAGANA = char_class({"hiragana"})
KATAKANA = char_class({"katakana"})
HANGUL = char_class({"hangul"})
SEA = char_class({"thai", "lao", "khmer", "myanmar"})
NGRAM = HAN + HIRAGANA + KATAKANA + HANGUL + SEA
MARKS = char_class({"mark"}) + "\u0900-\u0dff"  # combining marks stay inside their word


@cache
def cjk_pattern() -> re.Pattern[str]:
    return re.compile(rf"[{NGRAM}]")


@lru_cache(maxsize=8192)
def script_of(char: str) -> Script:
    """The script of one character ("digit", "space", "punct" and "mark" for the rest)."""
    code = ord(char)
    i = bisect_right(STARTS, code) - 1
    if i >= 0 and code <= RANGES[i][1]:
        return RANGES[i][2]
    if char.isspace():
        return "space"
    category = unicodedata.category(char)
    if category.startswith("L"):
        return "other_letter"
    if category.startswith("N"):
        return "digit"
    if category.startswith("M"):
        return "mark"
    return "punct"


def has_cjk(text: str) -> bool:
    """Whether `text` holds a character of a script written without spaces (CJK, Thai...)."""
    return cjk_pattern().search(text) is not None


# "Jr." and "Sr." closing a personal name, with or without the comma before them.
_GENERATION = re.compile(r",?\s+(?:jr|sr)\.?\s*$", re.IGNORECASE)


def name_without_suffix(name: str) -> str:
    """`name` without a closing "Jr." or "Sr." ("George Nicholls Jr." -> "George
    Nicholls"), or `name` itself. A title drops the comma the page's own era wrote
    ("George Nicholls, Jr."), and running text often drops the suffix altogether, so a
    page is linked by its name without it. (Not regnal numbers: "Henry IV" is not
    "Henry".)"""
    return _GENERATION.sub("", name) or name
