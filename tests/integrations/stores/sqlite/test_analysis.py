"""The embedded store's analysis: what tantivy indexes is exactly `Analyzer.terms`,
whichever of tantivy's native analyzer or Python computed it; the store records its
analyzer, rebuilds its BM25 index when it changes, and upgrades stores made before."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
import Stemmer
import tantivy

from sift.integrations.stores._literals import literal_fragments
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.integrations.stores.sqlite._analysis import TantivyAnalysis
from sift.integrations.stores.sqlite._trigrams import trigram_bits
from sift.text import Analyzer, default_analyzer
from sift.types import Document

ROOT = Path(__file__).resolve().parents[4]
# Samples of the dev sets (tests/data/benchmarks/README.md).
DATA = ROOT / "tests" / "data" / "benchmarks"

EDGE_CASES = [
    "",
    "The Running Dogs ran RUNNING",
    "ＡＢＣ１２３ ｶﾀｶﾅ full-width",
    "café naïve résumé Straße Ærøskøbing",
    "cafe\u0301 decomposed and i\u0307 İstanbul",
    "ΟΔΟΣ ΣΟΦΟΣ Ελληνικά",
    "Москва — столица России",
    "हिन्दी भाषा and Deutsch",
    "ภาษาไทย ไม่มีช่องว่าง",
    "한국어 텍스트와 English",
    "「iPodを製作している企業」はアップル",
    "Tokyo(東京)とKyoto(京都)",
    "emoji 🎉 party and 𠮷野家",
    "ﬁnance ﬂow ligatures",
    "x" * 40 + " " + "y" * 41,
    "é" * 20 + " " + "é" * 21 + " " + "ab" + "é" * 19,
    "hyphen-ated under_score o'clock U.S.A. 3.14 1990s",
    "ʻOkina ˈstress ɪpa ə",
    "ＡＮＤ　（東京）　－大阪",
]


def corpus_texts(limit_per_set: int) -> list[str]:
    rng = random.Random(7)
    out: list[str] = []
    for name in ("hotpotqa", "musique", "2wikimultihopqa", "jsquad"):
        rows = [json.loads(line) for line in (DATA / name / "corpus.jsonl").open()]
        for row in rng.sample(rows, min(limit_per_set, len(rows))):
            out += [row["title"], row["text"]]
    return out


@pytest.mark.parametrize(
    "analyzer",
    [
        default_analyzer(),
        Analyzer(max_word_chars=12),
        Analyzer(stemmers={"latin": "french"}),
        Analyzer(stemmers={"latin": "english", "cyrillic": "russian"}),
        Analyzer(stemmers={}),
        Analyzer(stemmers={"latin": "catalan"}),  # tantivy has none: all in Python
        Analyzer(cjk="unigram+bigram"),
    ],
    ids=lambda a: a.spec,
)
def test_the_index_holds_exactly_the_analyzers_terms(analyzer: Analyzer) -> None:
    analysis = TantivyAnalysis(analyzer)
    for text in EDGE_CASES + corpus_texts(150):
        assert Counter(analysis.terms(text)) == Counter(analyzer.terms(text)), text[:120]


def test_terms_tantivy_gives_back_unchanged_join_its_text_and_the_rest_stay_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Japanese bigrams come back from tantivy's analyzer as themselves, so they are handed
    # over as text; a word with a combining mark does not (tantivy splits at the mark),
    # so it stays pre-tokenized. With nothing remembered (the cap at 0) every text asks
    # again and the terms are the same.
    analyzer = default_analyzer()
    mixed = "東京タワーは高い。Алекса́ндров went to Tōkyō."
    for cap in (200_000, 0):
        monkeypatch.setattr("sift.integrations.stores.sqlite._analysis._MAX_STABLE", cap)
        analysis = TantivyAnalysis(analyzer)
        for _ in range(2):  # the second time from what the first remembered
            native, rest = analysis._parts(mixed)
            assert "東京" in native.split() and rest is not None
            assert [t for t in rest.split() if "\u0301" in t], rest
            assert Counter(analysis.terms(mixed)) == Counter(analyzer.terms(mixed))
        assert bool(analysis._stable) == bool(cap)


def test_english_text_is_left_to_tantivy_and_japanese_to_python() -> None:
    analysis = TantivyAnalysis(default_analyzer())
    assert analysis._split("The Running Dogs") == ("The Running Dogs", "")
    native, python = analysis._split("Tokyo – the capital – is 東京 in Japanese.")
    assert "東京" not in native and "capital" in native and python == "東京"
    assert analysis._split("日本で梅雨がないのは北海道") == ("", "日本で梅雨がないのは北海道")


def test_tantivys_stemmers_agree_with_pystemmer() -> None:
    words: set[str] = set()
    for text in corpus_texts(150):
        words.update(re.findall(r"[^\W_]+", text.lower()))
    vocabulary = sorted(words)
    checked = 0
    for language in Stemmer.algorithms():
        try:
            native = (
                tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
                .filter(tantivy.Filter.stemmer(language))
                .build()
            )
            stems = native.analyze(" ".join(vocabulary))
        except ValueError:
            continue  # tantivy lacks it: the store analyses in Python
        assert stems == Stemmer.Stemmer(language).stemWords(vocabulary), language
        checked += 1
    assert checked >= 15


def test_no_query_parser_anywhere() -> None:
    for path in (ROOT / "integrations").rglob("*.py"):
        assert "parse_query" not in path.read_text(encoding="utf-8"), path


def test_japanese_grep_uses_the_trigram_prefilter() -> None:
    # The pattern's required literal 東京都 is one trigram, which selects candidates; 区
    # alone is shorter than a trigram and selects nothing.
    fragments = literal_fragments("東京都[^。]*区")
    assert fragments == ["東京都", "区"]
    assert len(trigram_bits(fragments)) == 1
    assert trigram_bits(fragments).tolist() == trigram_bits(["東京都"]).tolist()


DOCS = [
    Document(id="run", title="Runner", text="She was running every morning."),
    Document(id="ja", title="梅雨", text="日本で梅雨がないのは北海道と小笠原諸島である。"),
]


def meta(path: Path) -> dict[str, str]:
    with sqlite3.connect(path / "sift.db") as conn:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def test_changing_the_analyzer_rebuilds_the_bm25_index(tmp_path: Path) -> None:
    with SqliteCorpus(tmp_path / "s", embedder="hash") as store:
        store.upsert(DOCS)
        assert [h.chunk.doc_id for h in store.search("runs", mode="bm25")] == ["run"]
    assert meta(tmp_path / "s")["analyzer"] == default_analyzer().spec
    unstemmed = Analyzer(stemmers={})
    with SqliteCorpus(tmp_path / "s", analyzer=unstemmed) as store:
        assert store.analyzer == unstemmed
        assert store.search("runs", mode="bm25") == []  # no stemming any more
        assert [h.chunk.doc_id for h in store.search("running", mode="bm25")] == ["run"]
        assert store.stats().extra["lexical_chunks"] == 2
    # Reopened without an analyzer: the recorded one.
    with SqliteCorpus(tmp_path / "s") as store:
        assert store.analyzer == unstemmed
    assert meta(tmp_path / "s")["analyzer"] == unstemmed.spec


def test_a_store_made_before_analyzers_is_upgraded_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(DOCS)
    # What such a store looks like: no analyzer in meta, a format-1 (en_stem) sidecar.
    with sqlite3.connect(path / "sift.db") as conn:
        conn.execute("DELETE FROM meta WHERE key = 'analyzer'")
    sidecar = path / "lexical.json"
    state = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({"format": 1, "seq": state["seq"]}))
    with SqliteCorpus(path) as store:
        hits = store.search("日本で梅雨がないのは北海道とどこか。", mode="bm25")
        assert [h.chunk.doc_id for h in hits][:1] == ["ja"]
        assert store.stats().extra["analyzer"] == default_analyzer().spec
    assert meta(path)["analyzer"] == default_analyzer().spec
    assert json.loads(sidecar.read_text())["analyzer"] == default_analyzer().spec


def test_an_analyzer_this_sift_cannot_restore_is_replaced_by_the_default(tmp_path: Path) -> None:
    path = tmp_path / "future"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(DOCS)
    future = json.loads(default_analyzer().spec) | {"version": 99}
    with sqlite3.connect(path / "sift.db") as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'analyzer'", (json.dumps(future),))
    with SqliteCorpus(path) as store:
        assert store.analyzer == default_analyzer()
        assert [h.chunk.doc_id for h in store.search("梅雨", mode="bm25")] == ["ja"]


def test_a_wrong_analyzer_type_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"sift\.text\.Analyzer"):
        SqliteCorpus(tmp_path / "x", embedder="hash", analyzer="english")  # type: ignore[arg-type]
    assert not (tmp_path / "x").exists()
