"""The planner's ranking on Japanese text (cue positions, mentions, bridge names, sentence
ends, identifiers, same-article paragraphs) and its numbers, every one a setting."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sift.graphs.policies._plan_rank import _cue_positions, bridge_spans, proximity, score_chunks
from sift.graphs.policies._plan_text import plan_question
from sift.graphs.policies._planner_config import HeuristicPlannerConfig
from sift.graphs.policies.heuristic import _looks_partial, identifiers
from sift.text import find_mention
from sift.types import Chunk, FoundBy, SeenChunk

POLICIES = Path(__file__).resolve().parents[3] / "graphs" / "policies"


def seen_chunk(
    doc_id: str, title: str, text: str, *, query: str, rank: int, turn: int = 1
) -> tuple[str, SeenChunk]:
    chunk = Chunk(
        chunk_id=f"{doc_id}_0", doc_id=doc_id, index=0, title=title, text=text, start=0,
        end=len(text),
    )  # fmt: skip
    found = [FoundBy(tool="search_corpus", argument=query, turn=turn)]
    return chunk.chunk_id, SeenChunk(chunk=chunk, tokens=len(text), found_by=found, first_rank=rank)


def test_mentions_in_japanese_text_need_no_spaces() -> None:
    assert find_mention("東京", "本社は東京都にある") == 3
    assert find_mention("debian", "「debianはlinuxの」") == 1
    # A Latin edge must not touch a letter or digit, as before.
    assert find_mention("kemp", "taylor kempton") is None
    assert find_mention("kemp", "taylor kemp, the") == 7
    assert find_mention("kemp", "kemp_x kemp") == 7


def test_japanese_text_has_cue_positions() -> None:
    question = "国際連合平和維持軍の略称は"
    limits = HeuristicPlannerConfig().text_limits()
    text = "各国軍部隊を国際連合平和維持軍という。日本ではpkfとも略される。"
    positions = _cue_positions(plan_question(question, limits), text, limits)
    assert positions and text.index("国際連合平和維持軍") in positions


def test_two_kanji_bridge_names_are_kept() -> None:
    plan = plan_question("本社がある都市の人口は？")
    spans = [
        s for s, _ in bridge_spans(plan, "会社", "本社は東京にあり、支社は京都にある。", limit=5)
    ]
    assert "東京" in spans and "京都" in spans


def test_a_chunk_ending_a_japanese_sentence_is_not_cut_off() -> None:
    text = "梅雨は東アジアの雨季である。" * 20
    _, whole = seen_chunk("d", "梅雨", text, query="q", rank=0)
    _, cut = seen_chunk("e", "梅雨", text + "北海道には", query="q", rank=0)
    seen = {"d_0": whole, "e_0": cut}
    assert not _looks_partial(whole, seen, 200)
    assert _looks_partial(cut, seen, 200)


def test_identifiers_beyond_ascii() -> None:
    assert identifiers("GTX1080を搭載した機種は？") == ["GTX1080"]
    assert identifiers("ＧＴＸ１０８０の性能") == ["GTX1080"]
    assert identifiers("What is the B-52 and the Su-27?") == ["B-52", "Su-27"]
    assert identifiers("2020年の東京") == []
    assert identifiers("Škoda 105L") == ["105L"]


def test_paragraphs_of_one_article_do_not_link_to_each_other_in_japanese() -> None:
    """JSQuAD: an article is a score of paragraphs, each a document of one title. The
    question's own search put the gold paragraph first; the other paragraphs, which
    name the article, must not be lifted past it as pages linked from it."""
    question = "国際連合平和維持軍の略称は"
    title = "国際連合平和維持活動"
    gold = "国際連合平和維持活動は国連の活動である。派遣される各国軍部隊を国際連合平和維持軍という。日本ではPKFとも略される。"  # noqa: E501
    others = [
        seen_chunk(
            f"p{i}", title, f"{title}の任務{i}は停戦監視である。", query="平和維持軍", rank=i
        )
        for i in range(6)
    ]
    seen = dict([seen_chunk("gold", title, gold, query=question, rank=0), *others])
    ranked = score_chunks(plan_question(question), seen, HeuristicPlannerConfig().weights())
    assert ranked[0].chunk_id == "gold_0"
    assert all(s.linked_from is None for s in ranked)


def test_english_pages_of_one_title_still_link(tmp_path: Path) -> None:
    """MuSiQue's articles have a few paragraphs; a later one is often the next hop."""
    question = "Where was the director of The Quiet Harbor born?"
    seen = dict(
        [
            seen_chunk("a", "The Quiet Harbor", "The Quiet Harbor was directed by Elena Marsh.",
                       query=question, rank=0),
            seen_chunk("b", "Elena Marsh", "Elena Marsh was born in Tallinn.", query="Elena Marsh",
                       rank=0, turn=2),
        ]
    )  # fmt: skip
    ranked = score_chunks(plan_question(question), seen, HeuristicPlannerConfig().weights())
    assert {s.chunk_id: s.linked_from for s in ranked}["b_0"] == "a_0"


# --------------------------------------------------------------------------- numbers


def _numbers(path: Path) -> list[tuple[int, object]]:
    """Numeric literals outside decorators (cache sizes), other than 0, 1 and 2 (pairs:
    bigrams, the two options of a comparison)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_decorators = {
        id(node)
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef)
        for deco in fn.decorator_list
        for node in ast.walk(deco)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
        and node.value not in (0, 1, 2)
        and id(node) not in in_decorators
    ]


@pytest.mark.parametrize("module", ["_plan_text.py", "_plan_rank.py"])
def test_every_number_of_the_planner_is_a_setting(module: str) -> None:
    # BM25's IDF smoothing (0.5) is part of the formula, not a knob.
    assert [value for _, value in _numbers(POLICIES / module)] in ([], [0.5])


def test_settings_come_from_the_environment(monkeypatch) -> None:
    question = 'Who sang "A Song Much Longer Than Five Letters" in 1999?'
    default = HeuristicPlannerConfig()
    assert "A Song Much Longer Than Five Letters" in plan_question(question).quoted
    monkeypatch.setenv("SIFT_PLANNER_QUOTE_MAX_CHARS", "5")
    monkeypatch.setenv("SIFT_PLANNER_PROXIMITY_DISTANCE_SCALE", "400")
    monkeypatch.setenv("SIFT_PLANNER_NUMBER_MIN_DIGITS", "5")
    with pytest.raises(ValueError, match=r"number_min_digits \(5\) is above number_max_digits"):
        HeuristicPlannerConfig()
    monkeypatch.setenv("SIFT_PLANNER_NUMBER_MAX_DIGITS", "6")
    config = HeuristicPlannerConfig()
    plan = plan_question(question, config.text_limits())
    assert plan.quoted == [] and plan.numbers == []
    # A wider scale: the same distance counts as nearer.
    assert proximity([100], 140, config.weights()) > proximity([100], 140, default.weights())
