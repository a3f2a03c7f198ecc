"""Each metric on hand-built results whose right answer is worked out by hand."""

from __future__ import annotations

import pytest

from sift.integrations.eval import metrics as m
from sift.types import Evidence, SearchResult, ToolCallTrace, TurnTrace, Usage


def _ev(doc_id: str, index: int = 0, text: str = "", title: str = "") -> Evidence:
    return Evidence(doc_id=doc_id, chunk_id=f"{doc_id}_{index}", title=title, text=text, score=1.0)


def _result(
    docs: list[str] | None = None,
    trace: list[TurnTrace] | None = None,
    usage: Usage | None = None,
) -> SearchResult:
    return SearchResult(
        question="q",
        evidence=[_ev(d) for d in docs or []],
        trace=trace or [],
        usage=usage or Usage(),
    )


# ------------------------------------------------------------------ ids and gold sets


def test_chunk_doc_id_strips_only_a_numeric_chunk_index() -> None:
    assert m.chunk_doc_id("hotpotqa-abc_0") == "hotpotqa-abc"
    assert m.chunk_doc_id("my_doc_12") == "my_doc"
    assert m.chunk_doc_id("my_doc") == "my_doc"
    assert m.chunk_doc_id("plain") == "plain"


def test_near_duplicate_stands_for_its_gold_only_when_that_gold_is_asked() -> None:
    gold = m.GoldSet(["g1", "g2"], {"g1": ["twin1"], "other": ["twin_other"]})
    assert gold.matches("twin1") == {"g1"}
    assert gold.matches("twin_other") == frozenset()
    assert gold.is_gold("g2") and not gold.is_gold("x")
    assert len(gold) == 2


def test_ranked_doc_ids_keep_each_document_once_at_its_best_rank() -> None:
    result = SearchResult(
        question="q", evidence=[_ev("a", 0), _ev("b", 0), _ev("a", 1), _ev("c", 2)]
    )
    assert m.ranked_doc_ids(result) == ["a", "b", "c"]


# ------------------------------------------------------------------ ranked metrics


def test_recall_and_all_gold_at_k() -> None:
    gold = m.GoldSet(["g1", "g2"])
    ranked = ["x", "g1", "y", "z", "g2"]
    assert m.recall_at_k(ranked, gold, 1) == 0.0
    assert m.recall_at_k(ranked, gold, 2) == 0.5
    assert m.all_gold_at_k(ranked, gold, 2) == 0.0
    assert m.recall_at_k(ranked, gold, 5) == 1.0
    assert m.all_gold_at_k(ranked, gold, 5) == 1.0
    # k beyond the list is the whole list.
    assert m.recall_at_k(ranked, gold, 30) == 1.0


def test_near_duplicate_counts_as_the_gold_passage_once() -> None:
    gold = m.GoldSet(["g1", "g2", "g3"], {"g2": ["g2-twin"]})
    # The twin and the gold itself both present: still one gold passage, not two.
    ranked = ["g2-twin", "g2", "g1"]
    assert m.recall_at_k(ranked, gold, 1) == pytest.approx(1 / 3)
    assert m.recall_at_k(ranked, gold, 3) == pytest.approx(2 / 3)
    assert m.all_gold_at_k([*ranked, "g3"], gold, 4) == 1.0


def test_empty_evidence_scores_zero_everywhere() -> None:
    gold = m.GoldSet(["g1"])
    assert m.recall_at_k([], gold, 10) == 0.0
    assert m.all_gold_at_k([], gold, 10) == 0.0
    assert m.set_precision_recall_f1([], gold) == (0.0, 0.0, 0.0)
    assert not m.answer_found(["Paris"], [])
    assert m.trajectory_recall(_result([]), gold) == 0.0


def test_k_below_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        m.recall_at_k(["a"], m.GoldSet(["a"]), 0)


# ------------------------------------------------------------------ final set


def test_precision_recall_f1_of_the_final_set() -> None:
    gold = m.GoldSet(["g1", "g2"], {"g1": ["g1-twin"]})
    precision, recall, f1 = m.set_precision_recall_f1(["g1-twin", "x", "y", "z"], gold)
    assert precision == 0.25
    assert recall == 0.5
    assert f1 == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    assert m.set_precision_recall_f1(["x"], gold) == (0.0, 0.0, 0.0)
    assert m.set_precision_recall_f1(["g1", "g2"], gold) == (1.0, 1.0, 1.0)


# ------------------------------------------------------------------ answers


def test_normalize_answer_drops_case_punctuation_and_accents() -> None:
    assert m.normalize_answer("  The  U.S.-based  Café! ") == "the u s based cafe"


@pytest.mark.parametrize(
    ("answers", "texts", "expected"),
    [
        (["Barack Obama"], ["President barack   obama, born 1961."], True),
        (["U.S."], ["moved to the U. S. in 1990"], True),
        (["1961"], ["born in 19612 somewhere"], False),  # whole words only
        (["no"], ["a notable case"], False),
        (["wrong", "Alias"], ["the alias is here"], True),  # any answer counts
        (["!!!"], ["!!!"], False),  # normalises to nothing: never a match
        (["Paris"], ["Lyon", "France, Paris"], True),
        # Japanese has no spaces: a CJK edge needs no word boundary, a digit edge does.
        (["小笠原諸島"], ["日本で梅雨がないのは北海道と小笠原諸島である。"], True),
        (["5月"], ["亜熱帯ジェット気流は5月ごろ北上する"], True),
        (["5月"], ["1945月刊誌"], False),
        (["iPod"], ["アップルはiPodを製作している"], True),
        (["北海道"], ["梅雨は本州で見られる"], False),
    ],
)
def test_answer_found(answers: list[str], texts: list[str], expected: bool) -> None:
    assert m.answer_found(answers, texts) is expected


# ------------------------------------------------------------------ trajectory


def _trace() -> list[TurnTrace]:
    return [
        TurnTrace(
            turn=1,
            calls=[
                ToolCallTrace(tool="search_corpus", added=["g1_0", "x_0", "y_0"], tokens=300),
                ToolCallTrace(tool="grep_corpus", added=["g2-twin_0"], tokens=80),
            ],
            tokens_after=900,
        ),
        TurnTrace(
            turn=2,
            calls=[ToolCallTrace(tool="prune_chunks", pruned=["x_0", "y_0", "g1_0"])],
            tokens_after=600,
        ),
        TurnTrace(turn=3, calls=[ToolCallTrace(tool="search_corpus", added=[])], tokens_after=650),
    ]


def test_trajectory_recall_counts_gold_surfaced_even_if_pruned_later() -> None:
    gold = m.GoldSet(["g1", "g2", "g3"], {"g2": ["g2-twin"]})
    result = _result(["y"], trace=_trace())
    assert m.trajectory_recall(result, gold) == pytest.approx(2 / 3)
    # Evidence with no trace (a single-shot result) still counts as surfaced.
    assert m.trajectory_recall(_result(["g3"]), gold) == pytest.approx(1 / 3)


def test_prune_accuracy_is_share_of_pruned_chunks_that_are_not_gold() -> None:
    gold = m.GoldSet(["g1", "g2"])
    result = _result(trace=_trace())
    assert m.pruned_chunk_ids(result) == ["x_0", "y_0", "g1_0"]
    assert m.prune_accuracy(result, gold) == pytest.approx(2 / 3)


def test_prune_accuracy_is_none_when_nothing_was_pruned() -> None:
    result = _result(["g1"], trace=[TurnTrace(turn=1, calls=[ToolCallTrace(tool="s")])])
    assert m.prune_accuracy(result, m.GoldSet(["g1"])) is None


def test_turn_and_token_figures_fall_back_to_the_trace() -> None:
    result = _result(["a"], trace=_trace())
    assert m.turns(result) == 3
    assert m.calls_per_turn(result) == pytest.approx(4 / 3)
    assert m.context_tokens_per_turn(result) == [900, 600, 650]
    assert m.peak_context_tokens(result) == 900
    reported = _result(
        trace=_trace(),
        usage=Usage(
            turns=5, calls_per_turn=2.5, peak_context_tokens=1200, final_evidence_tokens=77
        ),
    )
    assert m.turns(reported) == 5
    assert m.calls_per_turn(reported) == 2.5
    assert m.peak_context_tokens(reported) == 1200
    assert m.final_evidence_tokens(reported, len) == 77


def test_final_evidence_tokens_counts_evidence_when_unreported() -> None:
    result = SearchResult(question="q", evidence=[_ev("a", text="abcd"), _ev("b", text="xy")])
    assert m.final_evidence_tokens(result) == 0
    assert m.final_evidence_tokens(result, len) == 6


# ------------------------------------------------------------------ latency


def test_percentile_interpolates_linearly() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert m.percentile(values, 50) == 2.5
    assert m.percentile(values, 0) == 1.0
    assert m.percentile(values, 100) == 4.0
    assert m.percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert m.percentile([], 50) is None
    with pytest.raises(ValueError, match="within 0 and 100"):
        m.percentile(values, 101)
