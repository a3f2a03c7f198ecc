"""The heuristic planner on Japanese questions: decomposition, comparison forms, bridge
names in Japanese text, and the first two rounds of calls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sift.graphs.policies import HeuristicPlanner
from sift.graphs.policies._plan_ja import cjk_words, is_mostly_cjk, noun_runs
from sift.graphs.policies._plan_text import (
    candidate_spans,
    content_terms,
    plan_question,
    terms,
)
from sift.types import Chunk, FoundBy, Message, PolicyView, SeenChunk, ToolCall

QUESTIONS = Path(__file__).resolve().parents[2] / ".." / "shared" / "benchmarks" / "jsquad"

# Real JSQuAD dev questions (every 20th) and names their plan must search for.
JSQUAD = [
    ("日本で梅雨がないのは北海道とどこか。", {"北海道", "日本", "梅雨"}),
    ("マーラーは何について考えを持っていたか？", {"マーラー"}),
    ("ノアの箱舟は生命の起源の何章から何章に描かれていますか？", {"ノア", "箱舟", "生命", "起源"}),
    ("コンゴ共和国の正式名称\u3000何回変更しているか", {"コンゴ共和国", "正式名称"}),
    (
        "2016年6月26日のNHKの討論番組においての不適切発言によって辞任したのは？",
        {"NHK", "討論番組", "不適切発言"},
    ),
    ("32年テーゼにおいて、日本の支配構造の主柱とされたのは？", {"32年テーゼ", "支配構造"}),
    ("1955年頃の日本共産党の指導者は?", {"日本共産党", "指導者"}),
    ("共産党員であった野呂栄太郎らの理論活動は", {"野呂栄太郎", "理論活動"}),
    ("インドの自動車人口は何人なのか。", {"インド", "自動車人口"}),
    ("オランダの憲法に「教育の三つの自由」という考え方があるか", {"教育の三つの自由", "オランダ"}),
    ("ILOが扱うものに近いのは労働基本権か教育基本権か", {"ILO", "労働基本権", "教育基本権"}),
    ("完成車メーカーが品質保証体制を要求する対象は。", {"完成車メーカー", "品質保証体制"}),
    ("応力の単位は、何ですか。", {"応力"}),
    (
        "建築家のみに設計業務の独占権を与えることに強い反対があった伝統とは。",
        {"建築家", "設計業務", "独占権"},
    ),
    ("医学では何に利用されているか。", {"医学"}),
    ("パンチ法の銅製の母型による活字製造法は誰の発明とされてきたか。", {"パンチ法", "活字製造法"}),
    ("組み込みシステムが用いられる製品は何?", {"システム", "製品"}),
    ("カタルーニャの反乱（収穫人戦争）はいつおこった", {"カタルーニャ", "収穫人戦争"}),
    ("拍子のないリズムは何と呼ばれるか？", {"リズム", "拍子"}),
    ("地番を定めているのは", {"地番"}),
]
PARTICLES = re.compile(
    r"^(は|が|を|に|で|と|の|へ|から|まで|より|も|や)|(は|が|を|に|で|と|の|へ|も|や)$"
)


def test_the_questions_are_real_jsquad_dev_questions() -> None:
    with open(QUESTIONS / "questions.jsonl", encoding="utf-8") as handle:
        real = {json.loads(line)["question"] for line in handle}
    assert {q for q, _ in JSQUAD} <= real


@pytest.mark.parametrize(("question", "names"), JSQUAD, ids=[q[:12] for q, _ in JSQUAD])
def test_jsquad_questions_decompose_into_their_names(question: str, names: set[str]) -> None:
    plan = plan_question(question)
    assert names <= set(plan.entities), plan.entities
    for entity in plan.entities:
        # Particles are boundaries: no name starts or ends with one; no question word.
        assert not PARTICLES.search(entity) or entity in plan.quoted, entity
        assert not entity.startswith(("何", "誰")), entity
    assert len(plan.entities) == len(set(plan.entities))


def test_years_and_dates_are_numbers_not_names() -> None:
    plan = plan_question("2016年6月26日のNHKの討論番組においての不適切発言によって辞任したのは？")
    assert plan.numbers == ["2016"]
    assert not any(re.fullmatch(r"[0-9年月日]+", e) for e in plan.entities)
    assert plan_question("1955年頃の日本共産党の指導者は?").numbers == ["1955"]


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("東京と大阪、どちらが人口が多いか。", ["東京", "大阪"]),
        (
            "先に設立されたのは早稲田大学と慶應義塾大学のどちらですか",
            ["早稲田大学", "慶應義塾大学"],
        ),
        ("ILOが扱うものに近いのは労働基本権か教育基本権か", ["労働基本権", "教育基本権"]),
        ("「風の谷のナウシカ」と「天空の城ラピュタ」ではどちらが先に公開されたか", None),
        ("iPhoneとAndroid、どっちが先に発売されたか？", ["iPhone", "Android"]),
    ],
)
def test_comparison_forms(question: str, options: list[str] | None) -> None:
    plan = plan_question(question)
    assert plan.comparison and plan.shape == "comparison"
    if options is not None:
        assert plan.alternatives == options
        assert plan.entities[:2] == options
    else:
        # Quoted names come first, whatever the options were found to be.
        assert plan.entities[:2] == ["風の谷のナウシカ", "天空の城ラピュタ"]


def test_which_one_without_options_is_still_a_comparison() -> None:
    plan = plan_question("次のうち、人口が多いのはどちらですか")
    assert plan.comparison and plan.alternatives == []
    assert not plan_question("日本で梅雨がないのは北海道とどこか。").comparison


def test_quoted_names_and_latin_names_in_mixed_questions() -> None:
    plan = plan_question("「iPodを製作している企業」の創業者はSteve Jobsか")
    assert plan.quoted == ["iPodを製作している企業"]
    assert plan.entities[0] == "iPodを製作している企業"
    assert {"iPod", "Steve Jobs", "創業者"} <= set(plan.entities)
    assert plan.relations == ["founder"]


def test_relations_need_the_no_particle_and_a_whole_word() -> None:
    assert plan_question("『雨の日』の著者の父は誰か").relations == ["author", "father"]
    assert plan_question("パンチ法の銅製の母型による活字製造法は誰の発明か").relations == []


def test_noun_runs_join_katakana_names_and_latin_words() -> None:
    text = "グスタフ・マーラーとSteve Wozniakはカリフォルニア州に住んだ"
    assert [r for r, _ in noun_runs(text)] == [
        "グスタフ・マーラー",
        "Steve Wozniak",
        "カリフォルニア州",
        "住",
    ]
    for run, pos in noun_runs(text):
        assert text[pos : pos + len(run)] == run


def test_terms_cut_japanese_into_bigrams_and_keep_english_words() -> None:
    assert content_terms("梅雨の中休みはiPod Running") == [
        "梅雨", "梅", "雨", "中休", "中", "休", "ipod", "run",
    ]  # fmt: skip
    assert terms("梅雨の中休み") == ["梅雨", "の", "中休", "み"]  # no kanji alone here
    # Hiragana (particles, endings) are not content; a one-character run is too short.
    assert "のは" not in content_terms("日本で梅雨がないのは北海道")
    assert cjk_words(["東京都に"]) == ["東京", "京都", "に"]
    assert content_terms("The Running Dogs") == ["run", "dog"]  # English as before


def test_bridge_names_in_japanese_text() -> None:
    text = "『雨の日』は山田太郎が1950年に書いた小説で、スティーブ・ジョブズの愛読書である。"
    spans = candidate_spans(text)
    names = [s for s, _ in spans]
    assert names[:2] == ["雨の日", "山田太郎"]
    assert "スティーブ・ジョブズ" in names
    assert all(text[pos : pos + len(span)] == span for span, pos in spans)


def test_english_text_with_a_chinese_name_keeps_the_english_rules() -> None:
    text = "Hanggin Rear Banner is a banner; its administrative center is Shanba (陕坝镇)."
    assert not is_mostly_cjk(text)
    assert [s for s, _ in candidate_spans(text)] == ["Hanggin Rear Banner", "Shanba"]
    assert is_mostly_cjk("AppleはiPodを製作している企業である。")


# ------------------------------------------------------------------- the planner itself

QUESTION = "『雨の日』の著者の父は誰か"


def _view(seen: dict[str, SeenChunk], turn: int, calls: list[list[ToolCall]]) -> PolicyView:
    messages = [Message(role="user", content=QUESTION)]
    for batch in calls:
        messages.append(Message(role="assistant", tool_calls=batch))
        messages += [Message(role="tool", tool_name=c.name, content="...") for c in batch]
    return PolicyView(
        question=QUESTION,
        turn=turn,
        max_turns=8,
        messages=messages,
        seen=seen,
        tokens_used=0,
        threshold=16384,
        rejection=24576,
        budget=32768,
        top_k=30,
    )


def _seen(doc_id: str, title: str, text: str, query: str, rank: int) -> tuple[str, SeenChunk]:
    chunk = Chunk(chunk_id=f"{doc_id}_0", doc_id=doc_id, index=0, title=title, text=text)
    found = [FoundBy(tool="search_corpus", argument=query, turn=1)]
    return chunk.chunk_id, SeenChunk(chunk=chunk, tokens=40, found_by=found, first_rank=rank)


def test_first_round_searches_the_question_and_names_and_greps_the_quote() -> None:
    decision = HeuristicPlanner().step(_view({}, 1, []))
    calls = [(c.name, next(iter(c.arguments.values()))) for c in decision.tool_calls]
    assert calls[0] == ("search_corpus", QUESTION)
    assert ("search_corpus", "雨の日") in calls and ("search_corpus", "著者") in calls
    assert ("grep_corpus", "(?i)雨の日") in calls


def test_second_round_hops_to_the_bridge_name_found_in_japanese_text() -> None:
    first = HeuristicPlanner().step(_view({}, 1, [])).tool_calls
    seen = dict(
        [
            _seen("ame", "雨の日", "『雨の日』は山田太郎が書いた長編小説である。", "雨の日", 0),
            _seen("kumo", "曇りの日", "『曇りの日』は随筆集である。", QUESTION, 1),
        ]
    )
    decision = HeuristicPlanner().step(_view(seen, 2, [first]))
    queries = [c.arguments.get("query") for c in decision.tool_calls]
    assert "山田太郎" in queries
