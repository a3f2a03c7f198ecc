"""The C part of the token estimate (`_estimate.c`) against the regexes it replaces."""

from __future__ import annotations

import os
import random
import sys
import threading

import pytest

from sift import tokens

from .test_tokens import _sample, _sample_texts_past_ascii

pytestmark = pytest.mark.skipif(
    tokens._estimate is None and os.environ.get("SIFT_REQUIRE_NATIVE") != "1",
    reason="sift was installed without its C part (no C compiler): the regexes are tested",
)


def _python_rules(text: str) -> int:
    """The reference: `_plain_tokens` of a text not charged as CJK, -1 for one that is,
    both by the regexes."""
    saved, tokens._estimate = tokens._estimate, None
    try:
        return -1 if tokens.charged_as_cjk(text) else tokens._plain_tokens(text)
    finally:
        tokens._estimate = saved


def _c_rules(texts: list[str]) -> list[int]:
    assert tokens._estimate is not None, "the C part was not built"
    return tokens._native_plain(texts)


def test_the_c_part_counts_every_code_point_as_the_regexes_do() -> None:
    # A run of seven of one character tells every rule apart: white space 0, a newline
    # run 1, a letter run 7 (past ASCII) or 2 (ASCII), a digit run 3, a letter run that
    # starts with a digit that is not decimal 3, other word characters 1, punctuation
    # and symbols 7; and CJK (-1, charged as CJK) from the rest.
    texts = [chr(code) * 7 for code in range(0x110000)]
    got = _c_rules(texts)
    wrong = [
        (hex(code), got[code], want)
        for code, text in enumerate(texts)
        if got[code] != (want := _python_rules(text))
    ]
    assert not wrong, wrong[:20]
    assert {0, 1, 2, 3, 7, -1} <= set(got)


def test_the_c_part_counts_random_mixed_text_as_the_regexes_do() -> None:
    # Characters of every class side by side (runs that end where the class changes),
    # CJK beside Latin letters around the charged-as-CJK threshold, and real passages.
    rng = random.Random(5)
    alphabet = [chr(i) for i in range(128)]
    alphabet += list("éüßçøÆŁžİıΣσςДжЖअ्कि٣٤۵১²³½¼Ⅻⅻ℃€—–“”…·\u0301\u0308\u00a0\u2003\u200b")
    alphabet += ["\x1c", "\x85", "\u2028", "\u3000", "\n\n", "\r\n", "_", "__é", "①②"]
    alphabet += ["word", "Zürich", "12345", "١٢٣", "x" * 16, "abcdefghijklmnopq"]
    cjk = ["東", "京タ", "한국", "ｱｲ", "ＡＢ", "１２", "\U00020bb7", "\ud800", "\U0010ffff"]
    texts = [
        "".join(rng.choice(alphabet + cjk * (i % 2)) for _ in range(rng.randint(0, 90)))
        for i in range(6000)
    ]
    texts += _sample_texts_past_ascii() + [r["text"] for r in _sample()]
    texts += ["", "a" * 16 + "東", "a" * 17 + "東", "東" + "a" * 16 + "b"]
    got = _c_rules(texts)
    assert got == [_python_rules(t) for t in texts]
    assert got.count(-1) > 500 and sum(1 for n in got if n > 0) > 3000


def test_the_c_part_refuses_what_is_not_a_list_of_texts() -> None:
    assert tokens._estimate is not None
    ranges = tokens._cjk_ranges()
    with pytest.raises(TypeError, match=r"texts\[1\] is int, not str"):
        tokens._estimate.plain(["a", 1], ranges, 16)
    with pytest.raises(TypeError, match="texts must be a list, not tuple"):
        tokens._estimate.plain(("a",), ranges, 16)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pairs of uint32"):
        tokens._estimate.plain(["a"], ranges[:-1], 16)
    with pytest.raises(ValueError, match="sorted and disjoint"):
        tokens._estimate.plain(["a"], ranges[8:16] + ranges[:8], 16)
    with pytest.raises(ValueError, match="sorted and disjoint"):
        tokens._estimate.plain(["a"], ranges[4:8] + ranges[:4], 16)  # first > last
    assert tokens._estimate.plain([], ranges, 16) == []


def test_the_c_part_holds_its_texts_while_the_gil_is_released_and_lets_them_go() -> None:
    # The GIL is released while it counts: texts whose only reference is the list must
    # stay alive when another thread empties the list meanwhile (it holds its own), and
    # every reference it took is let go, after an error too.
    texts = ["".join(chr(0x100 + (i * 7 + j) % 500) for j in range(50_000)) for i in range(8)]
    want = [_python_rules(t) for t in texts]
    before = [sys.getrefcount(t) for t in texts]
    assert _c_rules(texts) == want
    with pytest.raises(TypeError):
        _c_rules([*texts, 3])  # type: ignore[list-item]
    assert [sys.getrefcount(t) for t in texts] == before
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1.0)  # this thread keeps the GIL until the C part lets it go
    try:
        for _ in range(10):
            batch = ["".join(list(t)) for t in texts]  # held by the list alone
            go = threading.Event()

            def empty(batch: list[str] = batch, go: threading.Event = go) -> None:
                go.wait()
                batch.clear()

            worker = threading.Thread(target=empty)
            worker.start()
            go.set()
            got = _c_rules(batch)
            worker.join()
            assert got in ([], want)  # the list as it was when the call read it
    finally:
        sys.setswitchinterval(switch)
