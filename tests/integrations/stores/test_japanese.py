"""Japanese beside English in both stores: analysis, mixed corpora, query syntax that
must never reach an engine, grep, and the dense side of hybrid search."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from sift.graphs import search as agentic_search
from sift.integrations.embedders import HashEmbedder
from sift.protocols import Corpus
from sift.text import default_analyzer
from sift.types import SearchMode

MODES: tuple[SearchMode, ...] = ("bm25", "dense", "hybrid")

# Questions a query parser would choke on or misread, in every form a user may type.
SYNTAX_QUESTIONS = [
    '- + " : ( ) ^ ~ * ? \\ / AND OR NOT',
    "-梅雨",
    "NOT 梅雨",
    "梅雨 AND OR NOT 北海道",
    '"梅雨" AND (北海道) -沖縄 +日本^2 ~3 *? \\/',
    "title:梅雨 text:北海道",
    "梅雨～北海道＾２（沖縄）＋日本－九州：＂梅雨前線＂＊？／＼",
    "ＡＮＤ　ＯＲ　ＮＯＴ　（）",
    "国際連合平和維持活動において常に最低限、統制的に実施しなければならないのは？",
    "日本で梅雨がないのは北海道とどこか。" * 60,
    "?",
    "*",
    "（）",
    "。",
]


class EnglishOnly(HashEmbedder):
    """The hash embedder declaring English only, as the shipped static model does."""

    @property
    def languages(self) -> frozenset[str]:
        return frozenset({"en"})


def ids(hits: Sequence[object]) -> list[str]:
    return [h.chunk.doc_id for h in hits]  # type: ignore[attr-defined]


@pytest.fixture
def mixed(corpus_factory, japanese_sample) -> Corpus:
    # The shipped default embedder: what a user who just indexes Japanese files gets.
    corpus = corpus_factory(embedder="static")
    report = corpus.upsert(japanese_sample.documents)
    assert not report.failed
    return corpus


def test_the_store_records_its_analyzer(mixed: Corpus) -> None:
    assert mixed.stats().extra["analyzer"] == default_analyzer().spec


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_japanese_questions_find_their_gold_paragraph(mixed, japanese_sample, mode) -> None:
    """Whole articles are indexed, so the gold paragraph must beat its own article's
    other paragraphs: the word tokenizers made each sentence one token and found none."""
    ranks = []
    for question, gold in japanese_sample.questions:
        found = ids(mixed.search(question, k=10, mode=mode))
        ranks.append(found.index(gold) if gold in found else None)
    assert None not in ranks
    assert sum(1 for r in ranks if r == 0) >= 0.8 * len(ranks)
    # The example: one token for the word tokenizer, which found nothing.
    top = ids(mixed.search("日本で梅雨がないのは北海道とどこか。", k=3, mode=mode))
    assert japanese_sample.gold("日本で梅雨がないのは北海道とどこか。") in top


def test_a_japanese_question_with_a_latin_name_in_a_mixed_store(mixed: Corpus) -> None:
    for mode in ("bm25", "hybrid"):
        assert ids(mixed.search("iPodを製作している企業", k=3, mode=mode))[0] == "ja-apple"
    # English questions keep finding the English page (stemmed: "players" ~ "player").
    assert ids(mixed.search("portable media players", k=3, mode="bm25"))[0] == "en-ipod"
    assert ids(mixed.search("IPOD", k=5, mode="bm25"))[:2] in (
        ["en-ipod", "ja-apple"],
        ["ja-apple", "en-ipod"],
    )


@pytest.mark.parametrize("mode", MODES)
def test_query_syntax_is_never_parsed(mixed: Corpus, mode: SearchMode) -> None:
    for question in SYNTAX_QUESTIONS:
        hits = mixed.search(question[:2000], k=5, mode=mode)
        assert isinstance(hits, list)
    if mode != "dense":
        # Operators are ignored, the words are searched.
        found = ids(mixed.search('"梅雨" AND (北海道) -沖縄 +日本^2 ~3 *? \\/', k=10, mode=mode))
        assert any(doc_id.startswith("jsquad-") for doc_id in found)
        assert mixed.search("-梅雨", k=10, mode=mode)  # not an "excluding" query
        assert mixed.search(" - + ( ) ^ ~ * ? ", k=10, mode="bm25") == []


def test_agentic_search_survives_query_syntax(mixed: Corpus) -> None:
    for question in SYNTAX_QUESTIONS[:9]:
        result = agentic_search(question, mixed, top_k=10)
        assert result.error is None and result.stopped_because != "error", question
    result = agentic_search("日本で梅雨がないのは北海道とどこか。", mixed, top_k=10)
    assert "jsquad-5bfff7b8c2fa" in [e.doc_id for e in result.evidence]


def test_japanese_grep_matches_whole_characters(mixed, japanese_sample) -> None:
    pattern = "東京都[^。]*区"
    expected = {d.id for d in japanese_sample.documents if re.search(pattern, d.text)}
    result = mixed.grep(pattern, k=50)
    assert {h.chunk.doc_id for h in result.hits} == expected
    for hit in result.hits:
        assert re.search(pattern, hit.chunk.text)
    assert result.note is None


def test_hybrid_gives_an_english_embedder_no_say_on_japanese(corpus_factory, japanese_sample):
    corpus = corpus_factory("en", embedder=EnglishOnly())
    corpus.upsert(japanese_sample.documents)
    for question, _ in japanese_sample.questions[:8]:
        lexical = corpus.search(question, k=10, mode="bm25")
        hybrid = corpus.search(question, k=10, mode="hybrid", alpha=0.5)
        assert ids(hybrid) == ids(lexical)
    # An English question still fuses both sides: the hybrid list is not the BM25 one.
    question = "rainy season of the year"
    lexical = ids(corpus.search(question, k=10, mode="bm25"))
    hybrid = corpus.search(question, k=10, mode="hybrid", alpha=0.9)
    dense = ids(corpus.search(question, k=10, mode="dense"))
    assert ids(hybrid) != lexical and set(ids(hybrid)) & set(dense) - set(lexical)


def test_hybrid_uses_a_multilingual_embedder_on_japanese(corpus_factory, japanese_sample):
    corpus = corpus_factory("multi")  # the hash embedder reads any script
    corpus.upsert(japanese_sample.documents)
    question = japanese_sample.questions[0][0]
    lexical = corpus.search(question, k=10, mode="bm25")
    hybrid = corpus.search(question, k=10, mode="hybrid", alpha=0.5)
    assert [h.score for h in hybrid] != pytest.approx([h.score for h in lexical])
    assert np.isfinite([h.score for h in hybrid]).all()
