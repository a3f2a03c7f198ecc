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
# Text without CJK (most English) takes the original pieces and no CJK check per piece.
_PLAIN_PIECE = re.compile(r"[^\W\d_]+|\d+|\n+|[^\w\s]|_", re.UNICODE)
# ASCII text, counted by the regex engine alone: a run of n letters is ceil(n / 4) matches
# of [A-Za-z]{1,4}, a run of n digits ceil(n / 3) of [0-9]{1,3}; the rest as above.
# (The same trick on other text is slower than the loop: Unicode classes cost more per
# match than per piece.)
_ASCII_TOKENS = re.compile(r"[A-Za-z]{1,4}|[0-9]{1,3}|\n+|[^\w\s]|_")
# A character past ASCII: a text's ASCII pass must leave out the word around it.
_PAST_ASCII = re.compile(r"[^\x00-\x7f]")


@cache
def _cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(one CJK character, the pieces of text holding CJK): compiled on first use, as
    their large character classes take a while to compile."""
    return (
        re.compile(f"[{_CJK}]"),
        re.compile(rf"[{_CJK}]+|[^\W\d_{_CJK}]+|\d+|\n+|[^\w\s]|_", re.UNICODE),
    )


@cache
def _weights() -> np.ndarray:
    """The tokens each character adds to its run of CJK, by code point (uint8): 1, 2 or 3
    from the cost table (a cost of 0 or 1 counts 1, of 3 or more 3), 2 past it, and 2
    more for a character of 4 UTF-8 bytes (beyond the BMP); 0 for every character that
    is not CJK, and in the last entry, which stands for every code point past it. A run
    costs the sum of its characters and 1 (the space or punctuation token beside it)."""
    import numpy as np

    weights = np.zeros(_PAST_TABLE[1] + 2, dtype=np.uint8)
    for first, last, blob in COSTS:
        costs = np.frombuffer(zlib.decompress(base64.b64decode(blob)), dtype=np.uint8)
        if len(costs) != last - first + 1:
            raise RuntimeError(f"_token_costs: U+{first:04X}-U+{last:04X} is not a cost each")
        weights[first : last + 1] = 2 - (costs <= 1) + (costs >= 3)
    weights[_PAST_TABLE[0] : _PAST_TABLE[1] + 1] = 2
    beyond = weights[0x10000:]
    beyond[beyond > 0] += 2
    return weights


def _char_weights(text: str) -> np.ndarray:
    """`_weights` of each character of `text` (a lone surrogate is no CJK)."""
    import numpy as np

    weights = _weights()
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return weights[np.minimum(codes, len(weights) - 1)]


def _has_cjk(text: str) -> bool:
    """Whether `text` holds a CJK character (a regex search: most text past ASCII that
    holds none, English with a dash or an accent, is done without numpy)."""
    return _cjk_patterns()[0].search(text) is not None


def _charged(text: str, weights: np.ndarray) -> bool:
    """`charged_as_cjk` given the text's `_char_weights` (nonzero: a CJK character)."""
    cjk = int(weights.astype(bool).sum())
    return cjk > 0 and cjk * LATIN_PER_CJK >= len(_LATIN.findall(text))


def charged_as_cjk(text: str) -> bool:
    """Whether `estimate_tokens` charges `text` as CJK text: it holds CJK characters (Han,
    kana, Hangul, CJK punctuation, full-width forms), at least one for every
    `LATIN_PER_CJK` Latin letters: a Japanese text with English names, or a short piece
    of one, but not an English page that quotes a name in Chinese."""
    if text.isascii() or not _has_cjk(text):
        return False
    return _charged(text, _char_weights(text))


def estimate_tokens(text: str, *, cjk_context: bool = False) -> int:
    """The estimated tokens of `text`. In text holding CJK (and, with `cjk_context`, in
    any piece of such a document: a chunker estimating the pieces of one document says
    so), words in Latin letters and numbers are charged more, as
    they are mostly names, acronyms and figures there, which cost more tokens than
    English prose: a word one token per two letters, a number one more for its space,
    a letter of a three-byte script (Greek extended, Bengali, ...) two."""
    if not text:
        return 0
    if text.isascii():
        # No CJK run: the CJK rules only charge Latin words and numbers more.
        return _cjk_pieces_tokens(text, None) if cjk_context else _plain_tokens(text)
    if not _has_cjk(text):
        return _cjk_pieces_tokens(text, None) if cjk_context else _plain_tokens(text)
    weights = _char_weights(text)
    if not cjk_context and not _charged(text, weights):
        return _plain_tokens(text)
    return _cjk_pieces_tokens(text, weights)


def _cjk_pieces_tokens(text: str, weights: np.ndarray | None) -> int:
    """The estimate of `text` under the CJK rules, given its `_char_weights` (None when
    it holds no CJK). A run of CJK costs its characters' weights and 1, summed from running
    totals over the whole text (one numpy pass, not a lookup per character)."""
    running: list[int] = []
    if weights is not None:
        import numpy as np

        running = [0, *np.cumsum(weights, dtype=np.int64).tolist()]
    return _cjk_pieces_from(text, running, 0)


def _cjk_pieces_from(text: str, running: list[int], base: int) -> int:
    """`_cjk_pieces_tokens` given the running totals of the weights: running[base + i]
    is the sum before text[i] (empty: no CJK), so that a batch shares one pass."""
    _, cjk_pieces = _cjk_patterns()
    total = 0
    for match in cjk_pieces.finditer(text):
        start, end = match.span()
        if running and running[base + start + 1] > running[base + start]:  # CJK first
            total += running[base + end] - running[base + start] + 1
            continue
        piece = match.group()
        first = piece[0]
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
    third of HotpotQA's passages) has its words past ASCII taken out
    (`_split_past_ascii`): they go through the regex, and the rest, spaces left in their
    place, joins the numpy pass. The pieces' pattern never matches white space but
    newlines, so the counts add up. (The regex's Unicode classes cost about 85 ns a
    character: 60-75 us for such a passage alone, against about 10 this way.)"""
    out = [0] * len(texts)
    ascii_rows: list[int] = []
    ascii_parts: list[str] = []
    cjk_rows = [row for row, text in enumerate(texts) if not text.isascii() and _has_cjk(text)]
    flags, running, bases = _cjk_batch([texts[row] for row in cjk_rows])
    charged = {row: base for row, flag, base in zip(cjk_rows, flags, bases, strict=True) if flag}
    for row, text in enumerate(texts):
        if text.isascii():
            ascii_rows.append(row)
            ascii_parts.append(text)
        elif row in charged:
            out[row] = _cjk_pieces_from(text, running, charged[row])
        else:
            # The words past ASCII (and any white space past it) go through the regex;
            # the rest, newlines and all, joins the numpy pass in its place.
            ascii_rows.append(row)
            ascii_part, others = _split_past_ascii(text)
            ascii_parts.append(ascii_part)
            out[row] = _plain_tokens(others)
    if ascii_rows:
        counts = _ascii_tokens_many(ascii_parts)
        for row, count in zip(ascii_rows, counts, strict=True):
            out[row] += count
    return out


def _cjk_batch(texts: list[str]) -> tuple[list[bool], list[int], list[int]]:
    """For texts that hold CJK, in one numpy pass over them joined: whether each is
    charged as CJK (`_charged`), the running totals of their `_char_weights`, and where
    each text starts in them (one pass instead of one per text: a Japanese passage is
    short, and per text the arrays' setup cost more than the counting)."""
    if not texts:
        return [], [], []
    import numpy as np

    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    table = _weights()
    weights = table[np.minimum(codes, len(table) - 1)]
    bases = np.zeros(len(texts), dtype=np.int64)
    np.cumsum([len(text) for text in texts[:-1]], out=bases[1:])
    # Every text holds a CJK character, so none is empty and reduceat sums each one.
    cjk = np.add.reduceat((weights > 0).astype(np.int64), bases)
    letters = ((codes >= 65) & (codes <= 90)) | ((codes >= 97) & (codes <= 122))  # _LATIN
    latin = np.add.reduceat(letters.astype(np.int64), bases)
    charged = (cjk > 0) & (cjk * LATIN_PER_CJK >= latin)
    running = [0, *np.cumsum(weights, dtype=np.int64).tolist()]
    return charged.tolist(), running, bases.tolist()


def _split_past_ascii(text: str) -> tuple[str, str]:
    """`text` with every word (cut at white space, as str.split cuts) that holds a
    character past ASCII, and every white space character past ASCII, put in the second
    string (joined by spaces) and a space left in its place in the first. Found from the
    few characters past ASCII, not by a pass over every word: such text is mostly English
    with a name or a dash (a third of HotpotQA's passages)."""
    kept: list[str] = []
    moved: list[str] = []
    cursor = 0
    size = len(text)
    for match in _PAST_ASCII.finditer(text):
        at = match.start()
        if at < cursor:
            continue  # in the word just moved
        start, end = at, at + 1
        if not text[at].isspace():
            while start > cursor and not text[start - 1].isspace():
                start -= 1
            while end < size and not text[end].isspace():
                end += 1
        kept.append(text[cursor:start])
        moved.append(text[start:end])
        cursor = end
    kept.append(text[cursor:])
    return " ".join(kept), " ".join(moved)


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


@cache
def _run_costs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per class: a run of n characters costs min((n + add) // divide, most) tokens."""
    import numpy as np

    add = np.zeros(5, dtype=np.int64)
    divide = np.ones(5, dtype=np.int64)
    most = np.full(5, np.iinfo(np.int64).max, dtype=np.int64)
    add[_LETTER], divide[_LETTER] = 3, 4  # ceil(n / 4)
    add[_DIGIT], divide[_DIGIT] = 2, 3  # ceil(n / 3)
    most[_NEWLINE] = 1
    most[_NONE] = 0
    return add, divide, most


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
    lengths = np.empty_like(starts)
    np.subtract(starts[1:], starts[:-1], out=lengths[:-1])
    lengths[-1] = len(classes) - starts[-1]
    kinds = classes[starts]
    add, divide, most = _run_costs()
    tokens = np.minimum((lengths + add[kinds]) // divide[kinds], most[kinds])
    # Runs never cross from one text into the next (a space joins them), so each text's
    # count is the tokens of the runs from its first to the next text's first.
    edges = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(text) + 1 for text in texts], out=edges[1:])
    bounds = np.searchsorted(starts, edges)
    running = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(tokens, out=running[1:])
    counts = running[bounds[1:]] - running[bounds[:-1]]
    return counts.tolist()


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
