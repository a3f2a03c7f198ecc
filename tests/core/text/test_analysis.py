"""Text analysis: scripts, CJK n-grams, stemming, normalisation, specs, query-syntax text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sift.text import (
    Analyzer,
    default_analyzer,
    has_cjk,
    overlap_terms,
    script_of,
    script_runs,
)

# Samples of the dev sets (tests/data/benchmarks/README.md).
DATA = Path(__file__).resolve().parents[2] / "data" / "benchmarks"


def test_japanese_becomes_bigrams_within_each_script_and_han_unigrams() -> None:
    terms = default_analyzer().terms("日本で梅雨がないのは北海道とどこか。")
    assert terms == [
        "日本", "日", "本",  # a Han run: its bigrams, then each character
        "で",  # a run of one character is kept
        "梅雨", "梅", "雨",
        "がな", "ない", "いの", "のは",  # kana runs: bigrams only
        "北海", "海道", "北", "海", "道",
        "とど", "どこ", "こか",
    ]  # fmt: skip
    # Never a sentence as one token, never a bigram across a change of script.
    assert "本で" not in terms and "道と" not in terms


def test_mixed_japanese_and_latin_gives_both_kinds_of_terms() -> None:
    terms = default_analyzer().terms("「iPodを製作している企業」")
    assert terms[0] == "ipod"
    assert {"製作", "企業", "して", "いる", "を"} <= set(terms)
    assert not any(c in t for t in terms for c in "「」")


def test_english_is_lower_cased_and_stemmed_like_tantivy_en_stem() -> None:
    terms = default_analyzer().terms("The Running Dogs were RUNNING quickly in 1998's races")
    assert terms == ["the", "run", "dog", "were", "run", "quick", "in", "1998", "s", "race"]


def test_ascii_fast_path_gives_the_general_path_terms() -> None:
    analyzer = default_analyzer()
    text = "Chess-playing AI_systems won 3 of 4 games; caf\u00e9 owners disagreed"
    # The accented word sends the text through the general path; the ASCII part must agree.
    general = analyzer.terms(text)
    ascii_part = analyzer.terms(text.replace("caf\u00e9", "cafe"))
    assert general[:-3] == ascii_part[:-3]
    assert general[-3] == "café"


def test_full_width_and_half_width_forms_are_normalised() -> None:
    analyzer = default_analyzer()
    assert analyzer.terms("ＡＢＣ１２３ Ｐｙｔｈｏｎ") == analyzer.terms("ABC123 Python")
    assert analyzer.terms("ｶﾀｶﾅ") == analyzer.terms("カタカナ") == ["カタ", "タカ", "カナ"]
    # Query and document analysed alike: a full-width query finds the half-width text.
    assert set(analyzer.query_terms("ｉＰｏｄ")) <= set(analyzer.terms("iPod の説明"))


def test_korean_chinese_and_thai_are_cut_into_bigrams() -> None:
    analyzer = default_analyzer()
    assert analyzer.terms("한국어 텍스트") == ["한국", "국어", "텍스", "스트"]
    assert "北京" in analyzer.terms("北京是中华人民共和国的首都")
    assert analyzer.terms("ภาษาไทย")[:2] == ["ภา", "าษ"]


def test_other_scripts_keep_words_and_marks() -> None:
    analyzer = default_analyzer()
    assert analyzer.terms("Москва и Ελληνικά") == ["москва", "и", "ελληνικά"]
    # Devanagari vowel signs are combining marks: the word stays whole.
    assert analyzer.terms("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]


def test_configured_stemmers_per_script() -> None:
    analyzer = Analyzer(stemmers={"latin": "french", "cyrillic": "russian"})
    assert analyzer.terms("les chanteuses городов") == ["le", "chanteux", "город"]
    assert Analyzer(stemmers={}).terms("running dogs") == ["running", "dogs"]


def test_bad_configuration_names_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="no Snowball stemmer 'klingon'"):
        Analyzer(stemmers={"latin": "klingon"})
    with pytest.raises(ValueError, match="not an alphabetic script"):
        Analyzer(stemmers={"han": "english"})
    with pytest.raises(ValueError, match="cjk"):
        Analyzer(cjk="trigram")  # type: ignore[arg-type]


def test_long_words_are_dropped() -> None:
    blob = "x" * 41
    assert default_analyzer().terms(f"short {blob} word") == ["short", "word"]


def test_spec_round_trip_and_refusals() -> None:
    analyzer = Analyzer(cjk="bigram", stemmers={"latin": "german"})
    spec = analyzer.spec
    assert json.loads(spec)["name"] == "sift-multilingual" and json.loads(spec)["version"] == 1
    assert Analyzer.from_spec(spec) == analyzer
    assert analyzer.spec != default_analyzer().spec
    other = json.dumps({**json.loads(spec), "version": 999})
    with pytest.raises(ValueError, match="rebuild the index"):
        Analyzer.from_spec(other)
    with pytest.raises(ValueError, match="not an analyzer spec"):
        Analyzer.from_spec("{not json")


QUERY_SYNTAX = [
    '- + " : ( ) ^ ~ * ? \\ / AND OR NOT',
    'title:foo AND (bar OR -baz)^2 ~3 "exact phrase" *wild? a\\b c/d',
    "＋－＂：（）＾～＊？＼／　ＡＮＤ　ＯＲ　ＮＯＴ",
    "国際連合平和維持活動において常に最低限、統制的に実施しなければならないのは？",
    '-東京 +大阪 "京都" NOT 奈良 OR 神戸:兵庫',
    "日本" * 500,
    "",
    "   \n\t ",
    "!!!???---",
]


@pytest.mark.parametrize("text", QUERY_SYNTAX)
def test_query_syntax_text_becomes_plain_terms(text: str) -> None:
    terms = default_analyzer().query_terms(text)
    for term in terms:
        assert term and not re.search(r"[\s\-+\"():^~*?\\/!＋－（）]", term), term
        assert term == term.lower()
    assert len(terms) == len(set(terms))
    weighted = default_analyzer().weighted_query_terms(text)
    assert [t for t, _ in weighted] == terms and all(w >= 1.0 for _, w in weighted)


def test_script_runs_keep_offsets_into_the_raw_text() -> None:
    text = "iPodを製作 ＡＢ、東京都"
    runs = script_runs(text)
    assert [r.script for r in runs] == [
        "latin",
        "hiragana",
        "han",
        "space",
        "latin",
        "punct",
        "han",
    ]
    for run in runs:
        assert text[run.start : run.end] == run.text
    assert "".join(r.text for r in runs) == text


def test_script_of_characters() -> None:
    expected = {
        "漢": "han",
        "々": "han",
        "ひ": "hiragana",
        "カ": "katakana",
        "ー": "katakana",
        "ｶ": "katakana",
        "한": "hangul",
        "a": "latin",
        "Ｚ": "latin",
        "é": "latin",
        "Ж": "cyrillic",
        "λ": "greek",
        "7": "digit",
        "７": "digit",
        "。": "punct",
        "・": "punct",
        " ": "space",
        "\u3000": "space",
        "\U00020bb7": "han",
    }
    assert {c: script_of(c) for c in expected} == expected


def test_has_cjk() -> None:
    assert has_cjk("The iPod is made by アップル")
    assert not has_cjk("Plain English, naïve café, Москва")


def test_overlap_terms_unchanged_without_cjk_and_cut_with_it() -> None:
    english = "The Quick-brown fox_trot 1998 café"
    assert overlap_terms(english) == re.findall(r"\w+", english.lower())
    assert overlap_terms("北海道とどこか") == ["北海", "海道", "とど", "どこ", "こか"]
    assert overlap_terms("iPodを製作") == ["ipod", "を", "製作"]


def test_a_real_jsquad_question_meets_its_gold_paragraph() -> None:
    questions = DATA / "jsquad" / "questions.jsonl"
    corpus = DATA / "jsquad" / "corpus.jsonl"
    with open(questions, encoding="utf-8") as handle:
        question = json.loads(handle.readline())
    with open(corpus, encoding="utf-8") as handle:
        gold = next(
            row for row in map(json.loads, handle) if row["id"] == question["supporting_doc_ids"][0]
        )
    analyzer = default_analyzer()
    wanted = set(analyzer.query_terms(question["question"]))
    found = set(analyzer.terms(gold["title"] + " " + gold["text"]))
    assert {"梅雨", "北海", "海道"} <= wanted & found


def test_the_examples_of_docs_languages_md_hold() -> None:
    analyzer = default_analyzer()
    assert analyzer.terms("「iPodを製作している企業」") == [
        "ipod", "を", "製作", "製", "作", "して", "てい", "いる", "企業", "企", "業",
    ]  # fmt: skip
    assert analyzer.terms("The Running Dogs") == ["the", "run", "dog"]
    assert analyzer.query_terms("ＡＮＤ (東京) -大阪") == [
        "and",
        "東京",
        "東",
        "京",
        "大阪",
        "大",
        "阪",
    ]
    assert analyzer.weighted_query_terms("NHKの番組")[:3] == [
        ("nhk", 2.0),
        ("の", 1.0),
        ("番組", 1.0),
    ]
    assert analyzer.spec.startswith('{"cjk":"bigram+han","max_word_chars":40,')


def test_weighted_query_terms_lift_words_and_numbers_in_cjk_queries() -> None:
    analyzer = default_analyzer()
    weights = dict(analyzer.weighted_query_terms("1955年頃の日本共産党のNHKは"))
    assert weights["1955"] == 2.0 and weights["nhk"] == 2.0
    assert weights["日本"] == 1.0 and weights["共"] == 1.0
    assert weights["の"] == 2.0  # two occurrences
    assert [t for t, _ in analyzer.weighted_query_terms("日本の日本")] == analyzer.query_terms(
        "日本の日本"
    )
    # Without CJK a term weighs the number of distinct words giving it, as the query
    # parser of the stores did before: English queries are searched as before.
    assert analyzer.weighted_query_terms("the dogs and the dog") == [
        ("the", 1.0),
        ("dog", 2.0),
        ("and", 1.0),
    ]
    assert analyzer.terms("The Dogs ran", stem=False) == ["the", "dogs", "ran"]
    assert analyzer.weighted_query_terms("") == []


def test_new_stores_take_their_analyzer_from_the_environment(monkeypatch) -> None:
    from sift.errors import CorpusError
    from sift.text import AnalyzerSettings

    monkeypatch.setenv("SIFT_ANALYZER_STEMMERS", "latin=french, cyrillic=russian")
    monkeypatch.setenv("SIFT_ANALYZER_CJK", "bigram")
    analyzer = AnalyzerSettings().analyzer()
    assert analyzer.stemmers == {"cyrillic": "russian", "latin": "french"}
    assert analyzer.cjk == "bigram" and analyzer.terms("chanteuses") == ["chanteux"]
    monkeypatch.setenv("SIFT_ANALYZER_STEMMERS", "none")
    assert AnalyzerSettings().analyzer().terms("running") == ["running"]
    default_analyzer.cache_clear()
    try:
        monkeypatch.setenv("SIFT_ANALYZER_STEMMERS", "latin")
        with pytest.raises(CorpusError, match=r"'latin' is not SCRIPT=LANGUAGE"):
            default_analyzer()
        monkeypatch.setenv("SIFT_ANALYZER_STEMMERS", "latin=klingon")
        with pytest.raises(CorpusError, match="no Snowball stemmer 'klingon'"):
            default_analyzer()
    finally:
        default_analyzer.cache_clear()
