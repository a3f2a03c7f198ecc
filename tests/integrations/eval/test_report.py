"""Scoring, summarising and writing reports from hand-built results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sift.integrations.eval import (
    DatasetInfo,
    EvalReport,
    Question,
    headline_markdown,
    score,
    summarize,
    write_report,
)
from sift.types import Evidence, SearchResult, ToolCallTrace, TurnTrace, Usage

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

Q = Question(
    id="q1",
    question="Who directed the film?",
    answers=["Jane Doe"],
    type="bridge",
    supporting_doc_ids=["g1", "g2"],
    gold_near_duplicate_doc_ids={"g2": ["g2b"]},
)


def _ev(doc_id: str, text: str = "") -> Evidence:
    return Evidence(doc_id=doc_id, chunk_id=f"{doc_id}_0", title=doc_id, text=text, score=1)


def _single_shot() -> SearchResult:
    return SearchResult(
        question=Q.question,
        mode="single_shot",
        evidence=[_ev("x"), _ev("g1", "directed by jane doe."), _ev("y")],
        usage=Usage(turns=1, tool_calls=1, calls_per_turn=1.0),
    )


def _agentic() -> SearchResult:
    return SearchResult(
        question=Q.question,
        evidence=[_ev("g2b"), _ev("g1")],
        trace=[
            TurnTrace(
                turn=1,
                calls=[ToolCallTrace(tool="search_corpus", added=["g1_0", "x_0", "g2b_0"])],
                tokens_after=1000,
            ),
            TurnTrace(
                turn=2, calls=[ToolCallTrace(tool="prune_chunks", pruned=["x_0"])], tokens_after=700
            ),
        ],
        usage=Usage(
            turns=2,
            tool_calls=2,
            calls_per_turn=1.0,
            peak_context_tokens=1000,
            final_evidence_tokens=40,
        ),
    )


def test_score_one_question() -> None:
    shot = score(Q, "bm25", _single_shot(), latency_s=0.01, ks=(1, 2, 3))
    assert shot.ranked == ["x", "g1", "y"]
    assert shot.found == ["g1"] and shot.missed == ["g2"]
    assert shot.recall_at == {1: 0.0, 2: 0.5, 3: 0.5}
    assert shot.all_gold_at == {1: 0.0, 2: 0.0, 3: 0.0}
    assert shot.precision == pytest.approx(1 / 3)
    assert shot.answer_found is True
    assert shot.prune_accuracy is None
    # Unreported final evidence tokens are estimated from the evidence text.
    assert shot.final_evidence_tokens > 0

    agent = score(Q, "agentic", _agentic(), latency_s=0.2, ks=(1, 2, 3))
    assert agent.found == ["g1", "g2"]  # g2 through its near-duplicate g2b
    assert agent.all_gold_at[2] == 1.0
    assert (agent.precision, agent.recall, agent.f1) == (1.0, 1.0, 1.0)
    assert agent.answer_found is False
    assert agent.prune_accuracy == 1.0
    assert agent.tokens_per_turn == [1000, 700]
    assert agent.peak_context_tokens == 1000


def test_summary_averages_and_leaves_prune_accuracy_undefined_without_pruning() -> None:
    outcomes = [
        score(Q, "bm25", _single_shot(), 0.01, ks=(2,)),
        score(
            Q,
            "bm25",
            SearchResult(question="q", stopped_because="error", error="boom"),
            0.03,
            ks=(2,),
        ),
    ]
    summary = summarize("bm25", outcomes, ks=(2,))
    assert summary.questions == 2
    assert summary.recall_at == {2: 0.25}
    assert summary.answer_found_rate == 0.5
    assert summary.prune_accuracy is None and summary.questions_with_pruning == 0
    assert summary.errors == 1
    assert summary.stopped_because == {"final": 1, "error": 1}
    assert summary.latency_p50_s == pytest.approx(0.02)
    with pytest.raises(ValueError, match="no outcomes"):
        summarize("bm25", [], ks=(2,))


def _report(outcomes: dict, ks: tuple[int, ...], **config: object) -> EvalReport:
    return EvalReport(
        dataset=DatasetInfo(
            name="tiny",
            path="/x",
            corpus_sha256="ab" * 32,
            passages=5,
            questions=1,
            questions_with_absent_gold=0,
            absent_gold_ids=0,
        ),
        config=config,
        command="sift eval --dataset /x",
        machine={"usable_cpus": 2},
        started_at="2026-12-02T00:00:00Z",
        index_s=0.5,
        index_rebuilt=True,
        total_s=1.0,
        summaries=[summarize(mode, items, ks) for mode, items in outcomes.items()],
    )


def test_write_report_produces_every_file(tmp_path: Path) -> None:
    ks = (1, 2, 3)
    outcomes = {
        "bm25": [score(Q, "bm25", _single_shot(), 0.01, ks)],
        "agentic": [score(Q, "agentic", _agentic(), 0.2, ks)],
    }
    report = _report(
        outcomes,
        ks,
        top_k=30,
        embedder="hash",
        policy="heuristic",
        rollouts=1,
        concurrency=1,
        threshold=16384,
    )
    files = write_report(report, outcomes, tmp_path / "out")
    assert set(files) == {
        "recall_plot",
        "tokens_plot",
        "json",
        "markdown",
        "per_question",
        "traces",  # the agentic mode found every gold passage: an index with no rows
    }
    assert "0 of 1 agentic episodes" in files["traces"].read_text(encoding="utf-8")
    for kind in ("recall_plot", "tokens_plot"):
        assert files[kind].read_bytes()[:8] == PNG_MAGIC

    data = json.loads(files["json"].read_text())
    assert data["config"]["embedder"] == "hash"
    assert data["summaries"][1]["mode"] == "agentic"
    assert data["summaries"][1]["all_gold_at"]["2"] == 1.0

    lines = [json.loads(x) for x in files["per_question"].read_text().splitlines()]
    assert [(r["id"], r["mode"]) for r in lines] == [("q1", "bm25"), ("q1", "agentic")]
    assert lines[0]["missed"] == ["g2"] and lines[0]["type"] == "bridge"

    md = files["markdown"].read_text()
    assert "| bm25 | 0.000 | 0.500 | 0.500 |" in md
    assert "| agentic | 0.500 | 1.000 | 1.000 |" in md
    assert "sift eval --dataset /x" in md
    assert "![recall_at_k](recall_at_k.png)" in md


def test_no_token_plot_when_no_mode_has_several_turns(tmp_path: Path) -> None:
    outcomes = {"bm25": [score(Q, "bm25", _single_shot(), 0.01)]}
    files = write_report(_report(outcomes, (2, 5, 10, 20, 30)), outcomes, tmp_path)
    assert "tokens_plot" not in files
    assert not (tmp_path / "context_tokens_per_turn.png").exists()


def test_headline_table_has_a_row_per_dataset_and_mode() -> None:
    ks = (2, 5, 10, 20, 30)
    outcomes = {
        "bm25": [score(Q, "bm25", _single_shot(), 0.01, ks)],
        "agentic": [score(Q, "agentic", _agentic(), 0.2, ks)],
    }
    table = headline_markdown([_report(outcomes, ks)])
    rows = [line for line in table.splitlines() if line.startswith("| tiny |")]
    assert len(rows) == 2
    assert rows[0].startswith("| tiny | bm25 | 0.500 | 0.500 | 0.500 | 0.000 | 0.000 |")
    assert rows[1].startswith("| tiny | agentic | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 |")


def test_figures_per_question_type(tmp_path: Path) -> None:
    ks = (2, 10, 30)
    other = Q.model_copy(update={"id": "q2", "type": None, "supporting_doc_ids": ["zz"]})
    outcomes = {
        "bm25": [
            score(Q, "bm25", _single_shot(), 0.01, ks),
            score(other, "bm25", _single_shot(), 0.01, ks),
        ]
    }
    summary = summarize("bm25", outcomes["bm25"], ks)
    assert set(summary.by_type) == {"bridge", "untyped"}
    assert summary.by_type["bridge"].recall_at[2] == 0.5
    assert summary.by_type["untyped"].recall_at[2] == 0.0
    assert summary.by_type["untyped"].questions == 1
    md = write_report(_report(outcomes, ks), outcomes, tmp_path)["markdown"].read_text()
    assert "## By question type" in md
    assert "| bridge | 1 | 0.500 / 0.000 / 0.000 |" in md
