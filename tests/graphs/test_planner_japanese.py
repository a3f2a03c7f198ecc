"""The heuristic planner on Japanese questions: decomposition, comparison forms, bridge
names in Japanese text, and the first two rounds of calls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sift.graphs.policies import HeuristicPlanner, HeuristicPlannerConfig
from sift.types import Chunk, FoundBy, Message, PolicyView, SeenChunk, ToolCall

# The sample of the JSQuAD dev set (tests/data/benchmarks): every 20th question is in it.
QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "jsquad"

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


def _view(
    question: str,
    seen: dict[str, SeenChunk] | None = None,
    calls: list[list[ToolCall]] | None = None,
    *,
    turn: int = 1,
    max_turns: int = 8,
) -> PolicyView:
    messages = [Message(role="user", content=question)]
    for batch in calls or []:
        messages.append(Message(role="assistant", tool_calls=batch))
        messages += [Message(role="tool", tool_name=c.name, content="...") for c in batch]
    return PolicyView(
        question=question,
        turn=turn,
        max_turns=max_turns,
        messages=messages,
        seen=seen or {},
        tokens_used=0,
        threshold=16384,
        rejection=24576,
        budget=32768,
        top_k=30,
    )


# The decomposition tested here is what the planner searches once the plain search of the
# question is not enough (round 2 by default); with first_round_entities it is round 1.
_PLANNER = HeuristicPlanner(HeuristicPlannerConfig(first_round_entities=True))


def _first_round(question: str) -> tuple[list[str], list[str]]:
    """(the sub-queries searched besides the question, the grep patterns)."""
    calls = _PLANNER.step(_view(question)).tool_calls
    searches = [str(c.arguments["query"]) for c in calls if c.name == "search_corpus"]
    assert searches[0] == question
    # The question again at the sub-queries' dense weight (without its closing
    # punctuation) is not a decomposition.
    stripped = question.strip().rstrip("?？。.!！ ")
    searches = searches[:1] + [s for s in searches[1:] if s != stripped]
    greps = [str(c.arguments["pattern"]) for c in calls if c.name == "grep_corpus"]
    return searches[1:], greps


def _seen(doc_id: str, title: str, text: str, query: str, rank: int) -> tuple[str, SeenChunk]:
    chunk = Chunk(chunk_id=f"{doc_id}_0", doc_id=doc_id, index=0, title=title, text=text)
    found = [FoundBy(tool="search_corpus", argument=query, turn=1)]
    return chunk.chunk_id, SeenChunk(chunk=chunk, tokens=40, found_by=found, first_rank=rank)


def test_the_questions_are_real_jsquad_dev_questions() -> None:
    with open(QUESTIONS / "questions.jsonl", encoding="utf-8") as handle:
        real = {json.loads(line)["question"] for line in handle}
    assert {q for q, _ in JSQUAD} <= real


@pytest.mark.parametrize(("question", "names"), JSQUAD, ids=[q[:12] for q, _ in JSQUAD])
def test_jsquad_questions_are_searched_by_their_names(question: str, names: set[str]) -> None:
    queries, _ = _first_round(question)
    assert names <= set(queries), queries
    for query in queries:
        # Particles are boundaries: no name starts or ends with one; no question word,
        # no date (years are numbers, not names).
        assert not PARTICLES.search(query), query
        assert not query.startswith(("何", "誰")), query
        assert not re.fullmatch(r"[0-9年月日頃]+", query), query
    assert len(queries) == len(set(queries))


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("東京と大阪、どちらが人口が多いか。", ["東京", "大阪"]),
        (
            "先に設立されたのは早稲田大学と慶應義塾大学のどちらですか",
            ["早稲田大学", "慶應義塾大学"],
        ),
        ("ILOが扱うものに近いのは労働基本権か教育基本権か", ["労働基本権", "教育基本権"]),
        ("iPhoneとAndroid、どっちが先に発売されたか？", ["iPhone", "Android"]),
        ("「風の谷のナウシカ」と「天空の城ラピュタ」ではどちらが先に公開されたか", None),
    ],
)
def test_comparison_options_are_searched_first(question: str, options: list[str] | None) -> None:
    queries, greps = _first_round(question)
    if options is not None:
        assert queries[:2] == options
    else:
        # Quoted names come first, and are grepped verbatim.
        assert queries[:2] == ["風の谷のナウシカ", "天空の城ラピュタ"]
        assert greps == ["(?i)風の谷のナウシカ", "(?i)天空の城ラピュタ"]


def test_quoted_and_latin_names_in_a_mixed_question() -> None:
    queries, greps = _first_round("「iPodを製作している企業」の創業者はSteve Jobsか")
    assert queries[0] == "iPodを製作している企業"
    assert {"iPod", "Steve Jobs", "創業者"} <= set(queries)
    assert greps[0] == "(?i)iPodを製作している企業"


def test_katakana_names_keep_their_middle_dot_and_latin_words_their_space() -> None:
    queries, _ = _first_round("グスタフ・マーラーとSteve Wozniakはカリフォルニア州に住んだか")
    assert {"グスタフ・マーラー", "Steve Wozniak", "カリフォルニア州"} <= set(queries)


def test_the_final_ranking_weighs_japanese_content_words() -> None:
    # The answer paragraph was ranked last by the search; the planner's own ranking
    # must see that it covers the question (a Japanese sentence is many terms).
    question = "日本で梅雨がないのは北海道とどこか。"
    seen = dict(
        [
            _seen("taifu", "台風", "台風は北西太平洋で発生する熱帯低気圧である。", question, 0),
            _seen("kion", "気温", "東京の夏の気温は高く、湿度も高い。", question, 1),
            _seen(
                "tsuyu",
                "梅雨",
                "梅雨は北海道と小笠原諸島を除く日本の大部分で見られる。",
                question,
                2,
            ),
        ]
    )
    calls = [[ToolCall(name="search_corpus", arguments={"query": question})]]
    decision = _PLANNER.step(_view(question, seen, calls, turn=2, max_turns=2))
    assert decision.final is not None
    assert decision.final[0].id == "tsuyu_0"


def test_second_round_hops_to_the_bridge_name_found_in_japanese_text() -> None:
    question = "『雨の日』の著者の父は誰か"
    queries, greps = _first_round(question)
    assert queries[:2] == ["雨の日", "著者"] and greps == ["(?i)雨の日"]
    first = _PLANNER.step(_view(question)).tool_calls
    seen = dict(
        [
            _seen("ame", "雨の日", "『雨の日』は山田太郎が書いた長編小説である。", "雨の日", 0),
            _seen("kumo", "曇りの日", "『曇りの日』は随筆集である。", question, 1),
        ]
    )
    decision = _PLANNER.step(_view(question, seen, [first], turn=2))
    queries = [c.arguments.get("query") for c in decision.tool_calls]
    assert "山田太郎" in queries


def test_an_english_page_quoting_a_chinese_name_keeps_the_english_rules() -> None:
    question = "Who directed The Quiet Harbor?"
    first = _PLANNER.step(_view(question)).tool_calls
    text = "The Quiet Harbor (靜かな港) is a 1950 drama film directed by Elena Marsh."
    seen = dict([_seen("harbor", "The Quiet Harbor", text, question, 0)])
    decision = _PLANNER.step(_view(question, seen, [first], turn=2))
    assert "Elena Marsh" in [c.arguments.get("query") for c in decision.tool_calls]
