"""A conservative token estimate for when no model server reports exact counts.

Modern BPE vocabularies (gpt-oss's o200k among them) spend about one token per common
English word and one per punctuation mark. The estimate charges every word by length
(one token per four characters), every digit group of three, and every punctuation or
symbol character on its own, so it overcounts prose by roughly a third and never
undercounts JSON, code or tables, which are mostly punctuation.

CJK text (Han, kana, Hangul, CJK punctuation, full-width forms) is charged per character
from a table of what each character costs alone under the tokenizers of gpt-oss
(o200k_harmony), GPT-4 (cl100k_base), Qwen2.5 and Qwen3.5/3.6, whichever is most, plus one
token per run of CJK characters (the space or punctuation token beside it). So the
estimate never undercounts Japanese against o200k_harmony or cl100k_base (Qwen counts a
token per digit: figures can go under); benchmarks/token_estimate.py checks it on every
chunk of the JSQuAD, English and mixed corpora
(benchmarks/results/token_estimate.md). Text that is not CJK text (`charged_as_cjk`:
English, and English quoting a Chinese name) is estimated exactly as before; in CJK text
Latin words and numbers are charged more (names, acronyms and figures there cost more
than English prose).
"""

from __future__ import annotations

import base64
import re
import zlib
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from sift._token_costs import COSTS

if TYPE_CHECKING:
    import numpy as np

__all__ = ["charged_as_cjk", "estimate_tokens", "estimate_tokens_many"]

# CJK past the cost table (extension B and later): charged 2, and 2 more for 4 UTF-8 bytes.
_PAST_TABLE = (0x20000, 0x3134F)
_CJK = "".join(f"{chr(first)}-{chr(last)}" for first, last, _ in COSTS)
_CJK += f"{chr(_PAST_TABLE[0])}-{chr(_PAST_TABLE[1])}"
# See charged_as_cjk: above this many Latin letters per CJK character, English rules.
LATIN_PER_CJK = 16
_LATIN = re.compile("[A-Za-z]")
_BEYOND_BMP = re.compile("[\U00010000-\U0010ffff]")
# Text without CJK (most English) takes the original pieces and no CJK check per piece.
_PLAIN_PIECE = re.compile(r"[^\W\d_]+|\d+|\n+|[^\w\s]|_", re.UNICODE)
# ASCII text, counted by the regex engine alone: a run of n letters is ceil(n / 4) matches
# of [A-Za-z]{1,4}, a run of n digits ceil(n / 3) of [0-9]{1,3}; the rest as above.
# (The same trick on other text is slower than the loop: Unicode classes cost more per
# match than per piece.)
_ASCII_TOKENS = re.compile(r"[A-Za-z]{1,4}|[0-9]{1,3}|\n+|[^\w\s]|_")
_NEWLINES = re.compile(r"\n+")


@cache
def _cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(one CJK character, the pieces of text holding CJK): compiled on first use, as
    their large character classes take a while to compile."""
    return (
        re.compile(f"[{_CJK}]"),
        re.compile(rf"[{_CJK}]+|[^\W\d_{_CJK}]+|\d+|\n+|[^\w\s]|_", re.UNICODE),
    )


@cache
def _costs() -> dict[int, str]:
    """str.translate table: every CJK character costing 1 or 3 tokens to "1" or "3"
    (the rest cost 2, characters outside the table their UTF-8 length)."""
    table: dict[int, str] = {}
    for first, _last, blob in COSTS:
        for offset, cost in enumerate(zlib.decompress(base64.b64decode(blob))):
            if cost != 2:
                table[first + offset] = "1" if cost <= 1 else "3"
    return table


def _cjk_tokens(run: str) -> int:
    marked = run.translate(_costs())
    total = 2 * len(run) - marked.count("1") + marked.count("3") + 1
    if _BEYOND_BMP.search(run):
        # Characters beyond the table (CJK extension B and later) take 4 bytes: up to 4.
        total += 2 * sum(1 for c in run if ord(c) > 0xFFFF)
    return total


def charged_as_cjk(text: str) -> bool:
    """Whether `estimate_tokens` charges `text` as CJK text: it holds CJK characters (Han,
    kana, Hangul, CJK punctuation, full-width forms), at least one for every
    `LATIN_PER_CJK` Latin letters: a Japanese text with English names, or a short piece
    of one, but not an English page that quotes a name in Chinese."""
    if text.isascii():
        return False
    one_cjk, _ = _cjk_patterns()
    cjk = len(one_cjk.findall(text))
    return cjk > 0 and cjk * LATIN_PER_CJK >= len(_LATIN.findall(text))


def estimate_tokens(text: str, *, cjk_context: bool = False) -> int:
    """The estimated tokens of `text`. In text holding CJK (and, with `cjk_context`, in
    any piece of such a document: a chunker estimating the pieces of one document says
    so), words in Latin letters and numbers are charged more, as
    they are mostly names, acronyms and figures there, which cost more tokens than
    English prose: a word one token per two letters, a number one more for its space,
    a letter of a three-byte script (Greek extended, Bengali, ...) two."""
    if not text:
        return 0
    if not cjk_context and not charged_as_cjk(text):
        return _plain_tokens(text)
    one_cjk, cjk_pieces = _cjk_patterns()
    total = 0
    for piece in cjk_pieces.findall(text):
        first = piece[0]
        if not first.isascii() and one_cjk.match(first):
            total += _cjk_tokens(piece)
            continue
        total += _plain_tokens(piece)
        if first.isdigit():
            total += 1  # the space before a number is a token of its own
        elif first.isalpha():
            if piece.isascii():
                total += -(-len(piece) // 2) - -(-len(piece) // 4)
            else:
                total += sum(1 for c in piece if c >= "\u0800")
    return total


def estimate_tokens_many(texts: Sequence[str]) -> list[int]:
    """`estimate_tokens` of each text, the same numbers, with the ASCII texts counted
    together in one pass of numpy (3-4x faster than the regex per text; the estimate was
    a fifth of an ingest's chunk-and-embed CPU).

    A text past ASCII that is not charged as CJK (English with a dash or an accent, a
    third of HotpotQA's passages) is cut at white space: its ASCII pieces join the numpy
    pass, the others go through the regex, and each run of newlines is one token. The
    pieces' pattern never matches white space but newlines, so the counts add up. (The
    regex's Unicode classes cost about 85 ns a character: 60-75 us for such a passage
    alone, against about 20 this way.)"""
    out = [0] * len(texts)
    ascii_rows: list[int] = []
    ascii_parts: list[str] = []
    for row, text in enumerate(texts):
        if text.isascii():
            ascii_rows.append(row)
            ascii_parts.append(text)
        elif charged_as_cjk(text):
            # cjk_context: the same number for a text charged as CJK, without checking again.
            out[row] = estimate_tokens(text, cjk_context=True)
        else:
            pieces = text.split()
            ascii_rows.append(row)
            ascii_parts.append(" ".join([piece for piece in pieces if piece.isascii()]))
            others = " ".join([piece for piece in pieces if not piece.isascii()])
            out[row] = _plain_tokens(others) + len(_NEWLINES.findall(text))
    if ascii_rows:
        counts = _ascii_tokens_many(ascii_parts)
        for row, count in zip(ascii_rows, counts, strict=True):
            out[row] += count
    return out


# The classes of ASCII characters `_ASCII_TOKENS` tells apart, as its alternatives match
# them: a run of letters is ceil(n / 4) tokens, of digits ceil(n / 3), of newlines one;
# every other character that is neither a word character nor white space, and every
# underscore, one each; other white space none.
_NONE, _LETTER, _DIGIT, _NEWLINE, _SINGLE = range(5)


@cache
def _ascii_classes() -> np.ndarray:
    import numpy as np

    table = np.zeros(128, dtype=np.uint8)
    for code in range(128):
        char = chr(code)
        if re.fullmatch("[A-Za-z]", char):
            table[code] = _LETTER
        elif re.fullmatch("[0-9]", char):
            table[code] = _DIGIT
        elif char == "\n":
            table[code] = _NEWLINE
        elif re.fullmatch(r"[^\w\s]|_", char):
            table[code] = _SINGLE
    return table


def _ascii_tokens_many(texts: list[str]) -> list[int]:
    """len(_ASCII_TOKENS.findall(text)) of each ASCII text: the texts joined by spaces
    (white space ends every run and costs nothing), cut into runs of one class, each run
    charged as the regex would match it and credited to the text it starts in."""
    import numpy as np

    joined = " ".join(texts)
    if not joined:
        return [0] * len(texts)
    classes = _ascii_classes()[np.frombuffer(joined.encode("ascii"), dtype=np.uint8)]
    changes = np.empty(len(classes), dtype=bool)
    changes[0] = True
    np.not_equal(classes[1:], classes[:-1], out=changes[1:])
    starts = np.flatnonzero(changes)
    lengths = np.diff(starts, append=len(classes))
    kinds = classes[starts]
    tokens = np.zeros(len(starts), dtype=np.int64)
    tokens[kinds == _LETTER] = (lengths[kinds == _LETTER] + 3) // 4
    tokens[kinds == _DIGIT] = (lengths[kinds == _DIGIT] + 2) // 3
    tokens[kinds == _NEWLINE] = 1
    tokens[kinds == _SINGLE] = lengths[kinds == _SINGLE]
    offsets = np.zeros(len(texts), dtype=np.int64)
    np.cumsum([len(text) + 1 for text in texts[:-1]], out=offsets[1:])
    owner = np.searchsorted(offsets, starts, side="right") - 1
    counts = np.bincount(owner, weights=tokens, minlength=len(texts))
    return [int(count) for count in counts]


def _plain_tokens(text: str) -> int:
    """The estimate of text without CJK (and of one non-CJK piece of CJK text)."""
    if text.isascii():
        return len(_ASCII_TOKENS.findall(text))
    total = 0
    for piece in _PLAIN_PIECE.findall(text):
        first = piece[0]
        if first == "\n":
            total += 1
        elif first.isdigit():
            total += -(-len(piece) // 3)
        elif first.isalpha():
            if piece.isascii():
                total += -(-len(piece) // 4)
            else:
                # Non-Latin scripts tokenise near one token per character.
                total += len(piece)
        else:
            total += 1
    return total
