"""The C part's table of stems (`_stems.c`): the terms it gives are exactly the
analyzer's, for ASCII text and for the ASCII pieces of any other text; a store whose
BM25 index was fed by it ranks exactly as one fed by tantivy's own analyzer, and each
extends an index the other wrote."""

from __future__ import annotations

import os
import random
import sys
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from sift.analysis import Analyzer, default_analyzer
from sift.integrations.stores.sqlite import SqliteCorpus, _analysis
from sift.integrations.stores.sqlite._analysis import TantivyAnalysis
from sift.types import Document

from .test_analysis import EDGE_CASES, corpus_texts

SOURCE = Path(__file__).resolve().parents[4] / "integrations" / "stores" / "sqlite" / "_stems.c"

native_only = pytest.mark.skipif(
    _analysis._stems is None and os.environ.get("SIFT_REQUIRE_NATIVE") != "1",
    reason="sift was installed without its C part (no C compiler): the tantivy path is tested",
)
pytestmark = native_only


def _table(analyzer: Analyzer | None = None, max_entries: int = 1_000_000) -> object:
    assert _analysis._stems is not None, "the C part was not built"
    return _analysis._stems.StemTable((analyzer or default_analyzer()).max_word_chars, max_entries)


def _learn(table: object, texts: list[str], analyzer: Analyzer) -> None:
    _, _, missing = table.join(texts)  # type: ignore[attr-defined]
    words = sorted(missing)
    table.add(words, analyzer.terms(" ".join(words)))  # type: ignore[attr-defined]


def _random_ascii(rng: random.Random, n: int) -> list[str]:
    """Texts over every ASCII character, letters, digits and spaces the likeliest, with
    words of every length around the analyzer's limit of 40."""
    pool = [chr(c) for c in range(128)]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(0, 30)):
            kind = rng.random()
            if kind < 0.6:
                word = "".join(
                    rng.choice("abcdefgHIJKLMnoprstuvwxyzING0123456789")
                    for _ in range(rng.randint(1, 45))
                )
                parts.append(word)
            else:
                parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 4))))
        out.append(rng.choice(["", " ", "\t", "-"]).join(parts) if parts else "")
    return out


def test_ascii_texts_get_exactly_the_analyzers_terms_in_order() -> None:
    analyzer = default_analyzer()
    table = _table()
    texts = _random_ascii(random.Random(3), 400) + [t for t in corpus_texts(80) if t.isascii()]
    joined, others, missing = table.join(texts)  # type: ignore[attr-defined]
    # Nothing is remembered yet: every text with a word comes back None, naming its words
    # lower-cased, and only words the analyzer keeps (40 characters at most).
    assert all(got is None for got, text in zip(joined, texts, strict=True) if analyzer.terms(text))
    assert others == [""] * len(texts)
    assert missing == {w for t in texts for w in analyzer.terms(t, stem=False)}
    _learn(table, texts, analyzer)
    joined, others, missing = table.join(texts)  # type: ignore[attr-defined]
    assert not missing
    for text, got in zip(texts, joined, strict=True):
        assert got == " ".join(analyzer.terms(text)), text


def test_the_pieces_past_ascii_are_handed_back_and_the_rest_is_exact() -> None:
    analyzer = default_analyzer()
    table = _table()
    texts = [
        unicodedata.normalize("NFKC", t).lower()
        for t in EDGE_CASES + [t for t in corpus_texts(80) if not t.isascii()]
    ]
    _learn(table, texts, analyzer)
    joined, others, missing = table.join(texts)  # type: ignore[attr-defined]
    assert not missing
    for text, got, other in zip(texts, joined, others, strict=True):
        pieces = text.split()
        assert other == " ".join(p for p in pieces if not p.isascii()), text
        ascii_part = " ".join(p for p in pieces if p.isascii())
        assert got == " ".join(analyzer.terms(ascii_part)), text
        # Together with the analyzer's terms of the other pieces: the whole text's.
        assert Counter(got.split() + analyzer.terms(other)) == Counter(analyzer.terms(text))


def test_japanese_beside_english_in_one_text() -> None:
    analyzer = default_analyzer()
    table = _table()
    text = "東京 Tokyo is the capital of 日本 (Japan); running 梅雨 rains"
    _learn(table, [text], analyzer)
    (joined,), (other,), missing = table.join([text])  # type: ignore[attr-defined]
    assert joined == "tokyo is the capit of japan run rain" and not missing
    assert other == "東京 日本 梅雨"


@pytest.mark.parametrize(
    "analyzer",
    [Analyzer(max_word_chars=5), Analyzer(stemmers={}), Analyzer(stemmers={"latin": "french"})],
    ids=lambda a: a.spec,
)
def test_other_analyzers(analyzer: Analyzer) -> None:
    table = _table(analyzer)
    texts = [*_random_ascii(random.Random(5), 200), "Les chevaux couraient vite", "abcdef abcde"]
    _learn(table, texts, analyzer)
    joined, _, _ = table.join(texts)  # type: ignore[attr-defined]
    assert joined == [" ".join(analyzer.terms(t)) for t in texts]


def test_bad_words_and_stems_are_refused_and_change_nothing() -> None:
    table = _table(Analyzer(max_word_chars=8))
    assert table.add(["run"], ["run"]) == 1  # type: ignore[attr-defined]
    for words, stems, error in [
        (["Run"], ["run"], ValueError),  # not lower case
        (["café"], ["caf"], ValueError),  # past ASCII
        ([""], [""], ValueError),
        (["a-b"], ["ab"], ValueError),
        (["abcdefghi"], ["abc"], ValueError),  # longer than the analyzer keeps
        (["ok", "fine"], ["ok"], ValueError),  # lengths differ
        (["ok"], [3], TypeError),
        ([3], ["ok"], TypeError),
        (["ok", "Bad"], ["ok", "bad"], ValueError),  # "ok" is not added either
    ]:
        with pytest.raises(error):
            table.add(words, stems)  # type: ignore[attr-defined]
        assert len(table) == 1, words  # type: ignore[arg-type]
        assert table.get("ok") is None  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="text 1"):
        table.join(["fine", b"bytes"])  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        table.join(None)  # type: ignore[attr-defined]
    # An empty stem is not remembered; a word already held keeps its stem.
    assert table.add(["gone", "run"], ["", "other"]) == 0  # type: ignore[attr-defined]
    assert table.get("gone") is None and table.get("run") == "run"  # type: ignore[attr-defined]


def test_a_full_table_stops_remembering_and_the_terms_stay_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = _table(max_entries=3)
    assert table.add(["a", "b", "c", "d"], ["a", "b", "c", "d"]) == 3  # type: ignore[attr-defined]
    assert len(table) == 3 and table.get("d") is None  # type: ignore[arg-type, attr-defined]
    monkeypatch.setattr(_analysis, "_MAX_STEMS", 50)
    analyzer = default_analyzer()
    analysis = TantivyAnalysis(analyzer)
    texts = corpus_texts(40) + EDGE_CASES
    for _ in range(2):
        for text in texts:
            assert Counter(analysis.terms(text)) == Counter(analyzer.terms(text)), text[:80]
    assert analysis._stems is not None and len(analysis._stems) == 50


def test_words_whose_hashes_collide_are_told_apart(
    colliding_build: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    colliding = colliding_build("integrations/stores/sqlite/_stems.c")
    monkeypatch.setattr(_analysis, "_stems", colliding)
    analyzer = default_analyzer()
    analysis = TantivyAnalysis(analyzer)
    assert type(analysis._stems) is colliding.StemTable
    texts = _random_ascii(random.Random(9), 100) + corpus_texts(10)
    for text in texts:
        assert Counter(analysis.terms(text)) == Counter(analyzer.terms(text)), text[:80]
    assert len(analysis._stems) > 1000


def test_threads_join_while_another_adds() -> None:
    analyzer = default_analyzer()
    table = _table()
    texts = [t for t in corpus_texts(60) if t.isascii()]
    want = [" ".join(analyzer.terms(t)) for t in texts]
    errors: list[str] = []

    def reader() -> None:
        for _ in range(20):
            joined, _, _ = table.join(texts)  # type: ignore[attr-defined]
            errors.extend(
                t for t, got, w in zip(texts, joined, want, strict=True) if got not in (None, w)
            )

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    for start in range(0, len(texts), 10):
        _learn(table, texts[start : start + 10], analyzer)
    for thread in threads:
        thread.join()
    assert not errors
    assert table.join(texts)[0] == want  # type: ignore[attr-defined]


def test_the_texts_are_held_while_the_gil_is_released_and_let_go() -> None:
    table = _table()
    text = "".join(["Held ", "while ", "joined ", "naïve"])  # a str of its own
    before = sys.getrefcount(text)
    for _ in range(50):
        table.join([text])  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        table.join([text, 3])  # type: ignore[attr-defined]
    assert sys.getrefcount(text) == before


DOCS = [
    Document(id="en1", title="Running Dogs", text="The dogs were running in the park. Dogs run."),
    Document(id="en2", title="Cats", text="A cat sleeps; the cats slept all day long."),
    Document(id="fr", title="Café", text="Le café est très chaud à Paris; naïve résumé."),
    Document(
        id="ja", title="梅雨", text="日本で梅雨がないのは北海道と小笠原諸島である。Tokyo rains."
    ),
    Document(
        id="mix", title="東京 Tokyo", text="Tokyo(東京)とKyoto(京都) — the capitals, running."
    ),
]
MORE = [
    Document(id="en3", title="Dogs", text="Running with dogs and cats in Tokyo."),
    Document(id="ja2", title="北海道", text="北海道は梅雨がない。Dogs and cafés."),
]
QUERIES = ["running dogs", "cats", "café Paris", "梅雨 北海道", "Tokyo", "東京 capitals", "naïve"]


def _ranked(store: SqliteCorpus) -> list[list[tuple[str, float]]]:
    return [
        [(hit.chunk.doc_id, round(hit.score, 5)) for hit in store.search(q, k=10, mode="bm25")]
        for q in QUERIES
    ]


def test_a_store_ranks_the_same_with_either_path_and_each_extends_the_others_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SqliteCorpus(tmp_path / "c", embedder="hash") as store:
        store.upsert(DOCS)
        by_c = _ranked(store)
    monkeypatch.setattr(_analysis, "_stems", None)
    with SqliteCorpus(tmp_path / "tantivy", embedder="hash") as store:
        assert not store._lexical._analysis.pre_analysed
        store.upsert(DOCS)
        assert _ranked(store) == by_c
        store.upsert(MORE)
        both_tantivy = _ranked(store)
    # The index the C path wrote, extended by tantivy's analyzer (a build without the C
    # part opening the store), and the other way round: the same rankings.
    with SqliteCorpus(tmp_path / "c") as store:
        assert store.stats().extra["lexical_sequence"] >= 0
        store.upsert(MORE)
        assert _ranked(store) == both_tantivy
    monkeypatch.undo()
    with SqliteCorpus(tmp_path / "tantivy") as store:
        assert store._lexical._analysis.pre_analysed
        store.upsert([Document(id="en4", title="Late", text="Dogs running late.")])
        mixed = _ranked(store)
    with SqliteCorpus(tmp_path / "c") as store:
        store.upsert([Document(id="en4", title="Late", text="Dogs running late.")])
        assert _ranked(store) == mixed
    assert any(hit[0] == "en4" for hit in mixed[0])
    # And the rankings are the analyzer's: stems ("running dogs" finds "Dogs run"),
    # accented words, Japanese bigrams.
    assert [ranked[0][0] for ranked in by_c] == ["en1", "en2", "fr", "ja", "mix", "mix", "fr"]
