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

from sift.text._token_costs import COSTS

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
    _, cjk_pieces = _cjk_patterns()
    total = 0
    for match in cjk_pieces.finditer(text):
        start, end = match.span()
        if running and running[start + 1] > running[start]:  # CJK first
            total += running[end] - running[start] + 1
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


def estimate_tokens_many(texts: Sequence[str], *, cjk_context: bool = False) -> list[int]:
    """`estimate_tokens` of each text (with `cjk_context`, as it gives them), the same
    numbers, counted together in a few numpy passes over the texts joined: the regex a
    text was most of chunking a batch, and chunking as much CPU as embedding it.

    Each character has a class by table, one for each alternative of the pieces'
    patterns: a letter, a digit, a newline, a character that is a piece on its own,
    white space, and in text under the CJK rules a CJK character. A run of one class is
    one piece (a run of characters that are pieces on their own, one each), and costs
    what the rules charge such a piece. The runs holding a character past ASCII (few,
    in English) are then charged by their own rules. A text holding a character past
    the basic plane, or a digit run that the pattern's greedy `\\d+` carries on into a CJK
    digit ("1２"), is estimated by `estimate_tokens` itself."""
    ascii_rows: list[int] = []
    other_rows: list[int] = []
    for row, text in enumerate(texts):
        (ascii_rows if text.isascii() and not cjk_context else other_rows).append(row)
    out = [0] * len(texts)
    # ASCII texts apart: their bytes are a quarter of the memory traffic.
    for rows in _groups(texts, ascii_rows) + _groups(texts, other_rows):
        counts = _counted_together([texts[row] for row in rows], cjk_context)
        for row, count in zip(rows, counts, strict=True):
            if count is None:
                count = estimate_tokens(texts[row], cjk_context=cjk_context)
            out[row] = count
    return out


# Texts are counted together up to about this many characters: the arrays of a larger
# group outgrow the CPU's caches and, fresh each time, cost page faults (2WikiMultihopQA
# 5 us a passage by 64, 11 by 512, 13 by 2,048; measured).
_GROUP_CHARS = 32_768


def _groups(texts: Sequence[str], rows: list[int]) -> list[list[int]]:
    groups: list[list[int]] = []
    size = _GROUP_CHARS
    for row in rows:
        if size >= _GROUP_CHARS:
            groups.append([])
            size = 0
        groups[-1].append(row)
        size += len(texts[row])
    return groups


# The classes of characters the pieces' patterns tell apart, as their alternatives match
# them: a run of letters ([^\W\d_]) is one piece, of digits (\d) one, of newlines one;
# every other character that is neither a word character nor white space, and every
# underscore, is a piece of its own; other white space is none. Under the CJK rules a
# CJK character is of its own class whatever else it is (its alternative comes first).
_NONE, _LETTER, _DIGIT, _NEWLINE, _SINGLE, _CJK_CHAR = range(6)
# What a letter run's first character makes of it (_plain_tokens): a letter, a digit
# that is no decimal digit ("²", "isdigit"), or neither ("Ⅻ").
_ALPHA, _DIGIT_LIKE, _OTHER = range(3)
_BASIC_PLANE = 0x10000
# In `_classes`' table, added to the class of a CJK character (of the basic plane: a text
# holding one past it is estimated by `estimate_tokens`).
_IN_CJK = 8


@cache
def _classes() -> tuple[np.ndarray, np.ndarray]:
    """(class, first-character kind) of every code point of the basic plane, found by
    the patterns themselves over all of them (about 10 ms, once); a CJK character's
    class has `_IN_CJK` added."""
    import numpy as np

    codes = np.arange(_BASIC_PLANE, dtype=np.uint32)
    every = codes.tobytes().decode("utf-32-le", "surrogatepass")
    classes = np.zeros(_BASIC_PLANE, dtype=np.uint8)
    for pattern, kind in ((r"[^\W\d_]", _LETTER), (r"\d", _DIGIT), (r"[^\w\s]|_", _SINGLE)):
        # Each match replaced by NUL in one pass (a match object each cost twice as much).
        marked = re.sub(pattern, "\0", every).encode("utf-32-le", "surrogatepass")
        found = np.frombuffer(marked, dtype=np.uint32) == 0
        found[0] = re.fullmatch(pattern, "\0") is not None
        classes[found] = kind
    classes[ord("\n")] = _NEWLINE
    kinds = np.full(_BASIC_PLANE, _OTHER, dtype=np.uint8)
    letters = codes[classes == _LETTER]
    kinds[letters] = _ALPHA
    named = letters.tobytes().decode("utf-32-le", "surrogatepass")
    # The few letters that are not alphabetic (numerals: "²", "Ⅻ") are found one by one.
    for code, char in zip(letters.tolist(), named, strict=True):
        if not char.isalpha():
            kinds[code] = _DIGIT_LIKE if char.isdigit() else _OTHER
    classes[_weights()[:_BASIC_PLANE] > 0] += _IN_CJK
    return classes, kinds


# Runs are charged by table up to this length (longer ones, rare, by formula).
_TABLED_RUN = 256


@cache
def _run_costs() -> np.ndarray:
    """`_run_cost` by class and length, up to _TABLED_RUN - 1: one gather a run instead of
    integer divisions (which cost more than the rest of the count)."""
    import numpy as np

    kind, n = np.indices((_CJK_CHAR + 1, _TABLED_RUN), dtype=np.int64)
    return _run_cost(kind, n)


def _run_cost(kind: np.ndarray, n: np.ndarray) -> np.ndarray:
    """What runs of these classes and lengths cost were they ASCII: letters ceil(n / 4)
    (a Latin word), digits ceil(n / 3), newlines 1, the others one a character, white
    space none (CJK runs are charged apart)."""
    import numpy as np

    return np.select(
        [kind == _LETTER, kind == _DIGIT, kind == _NEWLINE, kind == _NONE],
        [-(-n // 4), -(-n // 3), np.ones_like(n), np.zeros_like(n)],
        n,
    )


def _counted_together(texts: list[str], cjk_context: bool) -> list[int | None]:
    """The estimates of `texts`, None for one the tables cannot count (see
    estimate_tokens_many)."""
    import numpy as np

    # A space after each text: white space ends every run but a run of white space
    # (which costs nothing), so no run that costs crosses into the next text.
    joined = " ".join(texts) + " "
    sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1
    edges = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=edges[1:])
    unsure = np.zeros(len(texts), dtype=bool)
    rules = np.full(len(texts), cjk_context)
    past_ascii = not joined.isascii()
    if past_ascii:
        codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    else:
        codes = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    classes = np.take(_classes()[0], codes, mode="clip")
    if past_ascii:
        is_cjk = classes >= _IN_CJK
        np.bitwise_and(classes, _IN_CJK - 1, out=classes)
        astral = np.flatnonzero(codes >= _BASIC_PLANE)
        if len(astral):
            unsure[np.searchsorted(edges, astral, side="right") - 1] = True
        if not cjk_context and is_cjk.any():  # charged_as_cjk
            cjk = np.add.reduceat(is_cjk, edges[:-1], dtype=np.int64)
            latin = np.add.reduceat((codes | 0x20) - 97 < 26, edges[:-1], dtype=np.int64)
            rules = (cjk > 0) & (cjk * LATIN_PER_CJK >= latin)
    under_rules = rules.any()
    if under_rules and past_ascii:
        # Under the CJK rules a CJK character is a class of its own, but \d+ goes on
        # through a CJK digit after a digit of another script.
        is_cjk &= np.repeat(rules, sizes)
        swallowed = np.flatnonzero((classes[:-1] == _DIGIT) & is_cjk[1:] & (classes[1:] == _DIGIT))
        if len(swallowed):
            unsure[np.searchsorted(edges, swallowed, side="right") - 1] = True
        classes[is_cjk] = _CJK_CHAR
    # Runs of one class: where each starts, its length and class, and its cost were it
    # ASCII (an ASCII letter run is a Latin word).
    change = np.empty(len(classes), dtype=bool)
    change[0] = True
    np.not_equal(classes[1:], classes[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    lengths = np.empty_like(starts)
    np.subtract(starts[1:], starts[:-1], out=lengths[:-1])
    lengths[-1] = len(classes) - starts[-1]
    kind = classes[starts]
    tokens = _run_costs()[kind, np.minimum(lengths, _TABLED_RUN - 1)]
    long = np.flatnonzero(lengths >= _TABLED_RUN - 1)
    if len(long):
        tokens[long] = _run_cost(kind[long], lengths[long])
    if past_ascii:
        # Letter runs holding a character past ASCII: by their first character, a word
        # (one token a letter), a number (one per three), or one token.
        runs_past = np.logical_or.reduceat(codes >= 128, starts)
        letters = np.flatnonzero(runs_past & (kind == _LETTER))
        first = np.take(_classes()[1], codes[starts[letters]], mode="clip")
        size = lengths[letters]
        tokens[letters] = np.where(
            first == _ALPHA, size, np.where(first == _DIGIT_LIKE, -(-size // 3), 1)
        )
    if under_rules:
        under = np.repeat(rules, sizes)[starts]
        cjk_weights = np.take(_weights(), codes, mode="clip") * is_cjk if past_ascii else None
        _charge_cjk_rules(tokens, codes, starts, lengths, kind, under, cjk_weights)
    running = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(tokens, out=running[1:])
    bounds = np.searchsorted(starts, edges)
    counts = (running[bounds[1:]] - running[bounds[:-1]]).tolist()
    return [None if bad else count for count, bad in zip(counts, unsure.tolist(), strict=True)]


def _charge_cjk_rules(
    tokens: np.ndarray,
    codes: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    kind: np.ndarray,
    under: np.ndarray,
    cjk_weights: np.ndarray | None,
) -> None:
    """Recharges, in place, the runs `under` the CJK rules: a run of CJK costs its
    characters' weights (`cjk_weights`, each character's; None: no CJK) and 1; a number
    one more (its space); a Latin word a token per two letters; a word past ASCII one
    more a letter of three UTF-8 bytes."""
    import numpy as np

    if cjk_weights is not None:
        cjk_runs = np.flatnonzero(kind == _CJK_CHAR)
        running = np.zeros(len(codes) + 1, dtype=np.int64)
        np.cumsum(cjk_weights, out=running[1:])
        ends = starts[cjk_runs] + lengths[cjk_runs]
        tokens[cjk_runs] = running[ends] - running[starts[cjk_runs]] + 1
    past_ascii = np.logical_or.reduceat(codes >= 128, starts)
    first = np.take(_classes()[1], codes[starts], mode="clip")
    letter = under & (kind == _LETTER)
    tokens[under & (kind == _DIGIT)] += 1
    tokens[letter & past_ascii & (first == _DIGIT_LIKE)] += 1
    latin_word = letter & ~past_ascii
    tokens[latin_word] = -(-lengths[latin_word] // 2)
    word = np.flatnonzero(letter & past_ascii & (first == _ALPHA))
    if len(word):
        three_bytes = np.add.reduceat(codes >= 0x800, starts, dtype=np.int64)
        tokens[word] += three_bytes[word]


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
