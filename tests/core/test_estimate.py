"""The C part of the token estimate (`_estimate.c`) against the regexes it replaces."""

from __future__ import annotations

import json
import os
import random
import sys
import threading
from pathlib import Path

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


def _python_estimate(text: str, cjk_context: bool) -> int:
    """The reference: `estimate_tokens` by the regexes."""
    saved, tokens._estimate = tokens._estimate, None
    try:
        return tokens.estimate_tokens(text, cjk_context=cjk_context)
    finally:
        tokens._estimate = saved


def _mixed_texts(seed: int, count: int) -> list[str]:
    """Characters of every class side by side (runs that end where the class changes),
    with CJK in every other text: kanji, kana, Hangul, full-width forms and digits, the
    ideographic space and punctuation, CJK past U+FFFF, beside Latin words and numbers."""
    rng = random.Random(seed)
    alphabet = [chr(i) for i in range(128)]
    alphabet += list("éüßçøÆŁžİıΣσςДжЖअ्कि٣٤۵১²³½¼Ⅻⅻ℃€—–“”…·\u0301\u0308\u00a0\u2003\u200b")
    alphabet += ["\x1c", "\x85", "\u2028", "\n\n", "\r\n", "_", "__é", "①②", "ῥυθμός"]
    alphabet += ["word", "Zürich", "12345", "١٢٣", "x" * 16, "abcdefghijklmnopq", "JAXA"]
    cjk = ["東", "京タ", "鱚鰤", "한국", "ｱｲ", "ＡＢ", "１２", "\u3000", "。", "」", "\U00020bb7"]
    cjk += ["\U0003134f", "\U00031350", "\ud800", "\U0010ffff", "ㄅ", "\u1100", "\u11ff"]
    return [
        "".join(rng.choice(alphabet + cjk * (i % 2)) for _ in range(rng.randint(0, 90)))
        for i in range(count)
    ]


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
    texts = _mixed_texts(5, 6000)
    texts += _sample_texts_past_ascii() + [r["text"] for r in _sample()]
    texts += ["", "a" * 16 + "東", "a" * 17 + "東", "東" + "a" * 16 + "b"]
    got = _c_rules(texts)
    assert got == [_python_rules(t) for t in texts]
    assert got.count(-1) > 500 and sum(1 for n in got if n > 0) > 3000


def test_the_c_part_refuses_what_is_not_a_list_of_texts() -> None:
    assert tokens._estimate is not None
    ranges = tokens._cjk_table()[0]
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


def test_the_c_part_estimates_every_code_point_as_the_regexes_do() -> None:
    # A run of seven of one character by the CJK rules (every text charged as CJK):
    # each CJK character's cost and the run's one more, the Latin and number extras;
    # the plain rules are the test above. Then characters beside a Latin word and after
    # a digit (a number goes on into full-width digits), both ways.
    texts = [chr(code) * 7 for code in range(0x110000)]
    got = tokens._native_estimate(texts, cjk_context=True)
    wrong = [
        (hex(code), got[code], want)
        for code, text in enumerate(texts)
        if got[code] != (want := _python_estimate(text, True))
    ]
    assert not wrong, wrong[:20]
    rng = random.Random(3)
    codes = rng.sample(range(0x110000), 20_000) + list(range(0xFF00, 0xFFF0))
    sample = [form.format(chr(code)) for code in codes for form in ("ab{0}{0}12", "1{0}{0}")]
    for cjk_context in (False, True):
        got = tokens._native_estimate(sample, cjk_context=cjk_context)
        assert got == [_python_estimate(t, cjk_context) for t in sample], cjk_context


def test_the_c_part_estimates_mixed_and_japanese_text_as_the_regexes_do() -> None:
    texts = _mixed_texts(9, 6000) + [r["text"] for r in _sample()] + _jsquad_texts()
    texts += [
        "",
        "東京タワーは333メートル。",
        "機構 (JAXA)",
        "12１２34",
        "7２",
        "ab１２",
        "東\u3000京",
        "a_東_b",
    ]
    for cjk_context in (False, True):
        got = tokens._native_estimate(texts, cjk_context=cjk_context)
        assert got == [_python_estimate(t, cjk_context) for t in texts], cjk_context
    # Both sides of charged_as_cjk came up, and the public functions give the same.
    assert sum(tokens.charged_as_cjk(t) for t in texts) > 1000
    assert tokens.estimate_tokens_many(texts) == [_python_estimate(t, False) for t in texts]


def _jsquad_texts() -> list[str]:
    path = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "jsquad"
    with (path / "corpus.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line)["text"] for line in handle][:800]


def test_the_c_part_refuses_a_cost_table_that_does_not_fit() -> None:
    assert tokens._estimate is not None
    ranges, costs = tokens._cjk_table()
    with pytest.raises(ValueError, match="not one per code point of the ranges"):
        tokens._estimate.estimate(["東"], ranges, costs[:-1], 16, False)
    with pytest.raises(TypeError, match=r"texts\[0\] is bytes, not str"):
        tokens._estimate.estimate([b"x"], ranges, costs, 16, False)  # type: ignore[list-item]
    assert tokens._estimate.estimate(["東"], ranges, costs, 16, False) == [
        _python_estimate("東", False)
    ]
