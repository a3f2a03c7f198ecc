"""grep's literal pre-filter never hides a matching chunk.

A property check over many random RE2 patterns (classes, alternation, repetition,
escapes, (?i), English beside Japanese): on every backend, grep with the store's
pre-filter returns exactly the chunks that a plain RE2 scan over every stored chunk
matches.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
import re2

from sift.errors import InvalidPatternError
from sift.integrations.stores.patterns import compile_pattern, literal_fragments
from sift.protocols import Corpus
from sift.types import Document

# Letters with awkward case folding sit beside plain ones: k/K and the Kelvin sign, s/S
# and the long s, Greek sigma in its three forms, an accented letter, and Japanese.
ALPHABET = [*"abcekostxyzABCEKOSTXYZ0123", "\u212a", "\u017f", "σ", "Σ", "ς", "é", "É"]
JAPANESE = list("東京都大阪府区市町村の。年月日令和")
SPACE = [" ", ".", "-", "_"]
CLASSES = {
    r"\d": "0123",
    r"\w": "abcxyzK_0",
    r"\s": " ",
    ".": "aZ東 ",
    "[a-c]": "abc",
    "[^。]": "a区東",
    "[東京]": "東京",
    "[[:upper:]]": "ABCKS",
    r"\p{Han}": "東京都",
    "[kK]": "kK",
}
META = set(r"\.^$|?*+()[]{}")


def _literal(rng: random.Random) -> tuple[str, str]:
    char = rng.choice(ALPHABET + JAPANESE + SPACE)
    return (("\\" + char) if char in META else char), char


class _Gen:
    """Random patterns with a sample string each that the pattern (mostly) matches."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.groups = 0

    def node(self, depth: int, fold: bool) -> tuple[str, Callable[[], str]]:
        rng = self.rng
        roll = rng.random()
        if depth <= 0 or roll < 0.45:
            return self.atom(fold)
        if roll < 0.65:
            parts = [self.node(depth - 1, fold) for _ in range(rng.randint(2, 4))]
            return "".join(p for p, _ in parts), lambda: "".join(s() for _, s in parts)
        if roll < 0.75:
            left, right = self.node(depth - 1, fold), self.node(depth - 1, fold)
            return f"(?:{left[0]}|{right[0]})", lambda: rng.choice([left, right])[1]()
        if roll < 0.85:
            inner_fold = fold or rng.random() < 0.5
            inner = self.node(depth - 1, inner_fold)
            self.groups += 1
            head = rng.choice(["(", "(?:", f"(?P<g{self.groups}>", "(?i:" if inner_fold else "(?:"])
            return f"{head}{inner[0]})", inner[1]
        inner = self.node(depth - 1, fold)
        low, high = rng.choice([(0, None), (1, None), (0, 1), (2, 2), (1, 3), (0, 2)])
        op = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
        if op is None:
            op = f"{{{low}}}" if low == high else f"{{{low},{high}}}"
        if rng.random() < 0.2:
            op += "?"
        wrapped = inner[0] if len(inner[0]) == 1 else f"(?:{inner[0]})"
        count = lambda: rng.randint(low, high if high is not None else low + 2)  # noqa: E731
        return wrapped + op, lambda: "".join(inner[1]() for _ in range(count()))

    def atom(self, fold: bool) -> tuple[str, Callable[[], str]]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.2:
            cls = rng.choice(list(CLASSES))
            return cls, lambda: rng.choice(CLASSES[cls])
        if roll < 0.27:
            text = "".join(_literal(rng)[1] for _ in range(rng.randint(1, 3)))
            return f"\\Q{text}\\E", lambda: self.vary(text, fold)
        if roll < 0.32:
            char = rng.choice(ALPHABET + JAPANESE)
            return f"\\x{{{ord(char):x}}}", lambda: self.vary(char, fold)
        run = [_literal(rng) for _ in range(rng.choice([1, 1, 2, 3, 4]))]
        written = "".join(w for w, _ in run)
        text = "".join(c for _, c in run)
        return written, lambda: self.vary(text, fold)

    def vary(self, text: str, fold: bool) -> str:
        if not fold:
            return text
        swaps = {"k": "\u212a", "K": "\u212a", "s": "\u017f", "S": "\u017f", "σ": "ς"}
        out = []
        for char in text:
            pick = self.rng.random()
            if pick < 0.3 and char in swaps:
                out.append(swaps[char])
            elif pick < 0.6:
                out.append(char.swapcase())
            else:
                out.append(char)
        return "".join(out)

    def pattern(self) -> tuple[str, Callable[[], str]]:
        fold = self.rng.random() < 0.3
        body, sample = self.node(3, fold)
        return ("(?i)" + body if fold else body), sample


def _noise(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(ALPHABET + JAPANESE + SPACE) for _ in range(size))


def _cases(seed: int = 20260613, n_patterns: int = 150) -> tuple[list[str], list[Document]]:
    rng = random.Random(seed)
    gen = _Gen(rng)
    patterns: list[str] = []
    texts: list[str] = []
    while len(patterns) < n_patterns:
        pattern, sample = gen.pattern()
        try:
            compile_pattern(pattern)
        except InvalidPatternError:
            continue
        patterns.append(pattern)
        for _ in range(2):
            texts.append(f"{_noise(rng, rng.randint(0, 6))}{sample()}{_noise(rng, 4)}x")
    texts += [_noise(rng, rng.randint(5, 40)) + "x" for _ in range(60)]
    docs = [Document(id=f"t{i}", text=text) for i, text in enumerate(texts) if text.strip()]
    return patterns, docs


PATTERNS, DOCS = _cases()


def test_the_cases_exercise_the_prefilter() -> None:
    with_fragments = [p for p in PATTERNS if any(len(f) >= 3 for f in literal_fragments(p))]
    assert len(with_fragments) > 20
    assert any(p.startswith("(?i)") for p in with_fragments)
    assert any(any(c in p for c in JAPANESE) for p in with_fragments)
    matched = sum(
        1 for p in PATTERNS if any(re2.compile(p).search(d.text) for d in DOCS[: 2 * len(PATTERNS)])
    )
    assert matched > len(PATTERNS) * 0.8


def test_prefiltered_grep_equals_a_full_regex_scan(corpus_factory) -> None:
    corpus: Corpus = corpus_factory()
    report = corpus.upsert(DOCS)
    assert not report.failed
    chunks = corpus.get_chunks([f"{d.id}_{i}" for d in DOCS for i in range(3)])
    assert {c.doc_id for c in chunks} == {d.id for d in DOCS}
    misses = []
    for pattern in PATTERNS:
        regex = compile_pattern(pattern)
        expected = {c.chunk_id for c in chunks if regex.search(c.text)}
        found = {h.chunk.chunk_id for h in corpus.grep(pattern, k=1000).hits}
        if found != expected:
            misses.append((pattern, literal_fragments(pattern), sorted(expected - found)))
    assert misses == []


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("(?i)kelvin", "\u212aelvin"),
        ("(?i)stone", "\u017ftone"),
        ("(?i)ΣΊΣΥΦΟΣ", "σίσυφος"),
        ("東京都[^。]*区", "東京都千代田区"),
    ],
)
def test_case_variants_and_japanese_are_found(corpus_factory, pattern: str, text: str) -> None:
    corpus: Corpus = corpus_factory()
    corpus.upsert([Document(id="a", text=f"before {text} after"), Document(id="b", text="other")])
    assert [h.chunk.doc_id for h in corpus.grep(pattern).hits] == ["a"]
