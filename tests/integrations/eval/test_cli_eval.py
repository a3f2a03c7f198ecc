"""`sift eval` end to end on a tiny two-hop dataset built here: real store, real harness."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sift.integrations.cli import app, main
from sift.integrations.eval import EvalConfig, run_eval
from sift.integrations.ollama.testing import (
    FakeOllama,
    Reply,
    final_answer,
    refused_host,
    reply,
    tool_call,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# Two-hop chains: the question names the first passage; its text names the second.
CORPUS = [
    {
        "id": "t-film",
        "title": "The Glass Orchard",
        "text": "The Glass Orchard is a 1987 drama film directed by Miriam Okonkwo-Hale.",
    },
    {
        "id": "t-director",
        "title": "Miriam Okonkwo-Hale",
        "text": "Miriam Okonkwo-Hale is a director born in Tallinn, Estonia, in 1951.",
    },
    {
        "id": "t-river",
        "title": "Vesterbrook River",
        "text": "The Vesterbrook River flows through the town of Quillmoor in Norland.",
    },
    {
        "id": "t-town",
        "title": "Quillmoor",
        "text": "Quillmoor is a market town whose mayor is Ansel Tiberg since 2004.",
    },
    {
        "id": "t-band",
        "title": "Copper Lanterns",
        "text": "Copper Lanterns is a folk band founded by the fiddler Oona Brask.",
    },
    {
        "id": "t-fiddler",
        "title": "Oona Brask",
        "text": "Oona Brask is a fiddler who studied music at the Harrowgate Conservatory.",
    },
    {
        "id": "t-noise1",
        "title": "Tallinn",
        "text": "Tallinn is the capital of Estonia on the Baltic coast.",
    },
    {
        "id": "t-noise2",
        "title": "Folk music",
        "text": "Folk music includes traditional songs passed down orally.",
    },
    {
        "id": "t-noise3",
        "title": "Drama film",
        "text": "A drama film is a genre that relies on the emotional development of characters.",
    },
    {
        "id": "t-noise4",
        "title": "Market town",
        "text": "A market town holds the right to host markets, distinct from a village.",
    },
]
QUESTIONS = [
    {
        "id": "q1",
        "question": "Where was the director of The Glass Orchard born?",
        "answers": ["Tallinn"],
        "type": "bridge",
        "supporting_doc_ids": ["t-film", "t-director"],
    },
    {
        "id": "q2",
        "question": "Who is the mayor of the town the Vesterbrook River flows through?",
        "answers": ["Ansel Tiberg"],
        "type": "bridge",
        "supporting_doc_ids": ["t-river", "t-town"],
    },
    {
        "id": "q3",
        "question": "Where did the founder of Copper Lanterns study music?",
        "answers": ["Harrowgate Conservatory"],
        "type": "bridge",
        "supporting_doc_ids": ["t-band", "t-fiddler", "t-missing"],
    },
]


def _eval(tmp_path: Path, dataset: Path, *extra: str) -> tuple[int, str, Path]:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--dataset",
            str(dataset),
            "--out",
            str(out),
            "--store-cache",
            str(tmp_path / "cache"),
            "--embedder",
            "hash",
            "--quiet",
            *extra,
        ],
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output, out


def test_eval_runs_every_mode_and_writes_every_report(tmp_path: Path, write_dataset) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    code, output, out = _eval(tmp_path, dataset)
    assert code == 0, output
    for name in ("report.md", "report.json", "per_question.jsonl", "recall_at_k.png"):
        assert (out / name).is_file(), name
    assert (out / "recall_at_k.png").read_bytes()[:8] == PNG_MAGIC

    report = json.loads((out / "report.json").read_text())
    summaries = {s["mode"]: s for s in report["summaries"]}
    assert list(summaries) == ["bm25", "dense", "hybrid", "agentic"]
    assert report["dataset"]["absent_gold"] == {"q3": ["t-missing"]}
    assert report["config"]["embedder"] == "hash"
    assert report["index_rebuilt"] is True
    # With 10 passages and k = 30 a single shot finds every gold that exists; the absent
    # one keeps q3 at 2/3.
    for mode in ("bm25", "dense", "hybrid"):
        assert summaries[mode]["recall_at"]["30"] == pytest.approx((1 + 1 + 2 / 3) / 3)
        assert summaries[mode]["all_gold_at"]["30"] == pytest.approx(2 / 3)
    # BM25 ranks the passage named in each question first.
    assert summaries["bm25"]["recall_at"]["2"] >= 0.5
    agentic = summaries["agentic"]
    assert agentic["questions"] == 3 and agentic["turns"] >= 1
    assert agentic["errors"] == 0

    rows = [json.loads(x) for x in (out / "per_question.jsonl").read_text().splitlines()]
    assert len(rows) == 4 * 3
    q3 = next(r for r in rows if r["id"] == "q3" and r["mode"] == "bm25")
    assert "t-missing" in q3["missed"] and q3["type"] == "bridge"
    assert {"t-band", "t-fiddler"} <= set(q3["ranked"])
    assert q3["found"] == ["t-band", "t-fiddler"]

    markdown = (out / "report.md").read_text()
    assert "| agentic |" in markdown and "sift eval" in markdown
    assert "1 ids in 1 questions" in markdown
    assert "bm25" in output  # the headline table is printed


def test_store_cache_is_reused_and_rebuilt_when_the_corpus_changes(
    tmp_path: Path, write_dataset
) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    code, output, out = _eval(tmp_path, dataset, "--modes", "bm25", "--limit", "1")
    assert code == 0, output
    code, output, out = _eval(tmp_path, dataset, "--modes", "bm25", "--limit", "1")
    assert code == 0, output
    assert json.loads((out / "report.json").read_text())["index_rebuilt"] is False

    extra = {
        "id": "t-missing",
        "title": "Harrowgate Conservatory",
        "text": "The Harrowgate Conservatory trained Copper Lanterns founder Oona Brask.",
    }
    write_dataset(dataset, [*CORPUS, extra], QUESTIONS)
    code, output, out = _eval(tmp_path, dataset, "--modes", "bm25,dense")
    assert code == 0, output
    report = json.loads((out / "report.json").read_text())
    assert report["index_rebuilt"] is True
    assert report["dataset"]["absent_gold"] == {}
    bm25 = report["summaries"][0]
    assert [s["mode"] for s in report["summaries"]] == ["bm25", "dense"]
    # The passage that was absent is now indexed and found.
    assert bm25["all_gold_at"]["30"] == 1.0


def test_rollouts_are_evaluated_as_their_own_mode(tmp_path: Path, write_dataset) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    code, output, out = _eval(tmp_path, dataset, "--modes", "agentic", "--rollouts", "2")
    assert code == 0, output
    report = json.loads((out / "report.json").read_text())
    assert [s["mode"] for s in report["summaries"]] == ["agentic-x2"]
    assert report["config"]["rollouts"] == 2
    assert report["summaries"][0]["errors"] == 0
    assert report["summaries"][0]["recall_at"]["30"] > 0


def _ollama_turn(body: dict) -> Reply:
    """A model at the wire: search the question once, then return what it saw."""
    tool_text = "\n".join(m.get("content", "") for m in body["messages"] if m["role"] == "tool")
    if tool_text:
        ids = re.findall(r"# DOCUMENT ID: (\S+)", tool_text)
        return final_answer([(cid, "named in the question") for cid in ids[:3]])
    question = body["messages"][-1]["content"].rsplit("Question: ", 1)[1]
    return reply(tool_calls=[tool_call("search_corpus", query=question)])


def test_ollama_policy_at_the_wire(tmp_path: Path, write_dataset) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    with FakeOllama(models=("fake-searcher:1b",), responder=_ollama_turn) as server:
        code, output, out = _eval(
            tmp_path,
            dataset,
            "--modes",
            "agentic",
            "--policy",
            "ollama",
            "--model",
            "fake-searcher:1b",
            "--ollama-host",
            server.host,
        )
        chats = server.chat_requests()
    assert code == 0, output
    assert {c["model"] for c in chats} == {"fake-searcher:1b"}
    assert len(chats) == 2 * len(QUESTIONS)  # one search turn, one final turn each
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["policy"] == "ollama"
    assert report["config"]["model"] == "fake-searcher:1b"
    agentic = report["summaries"][0]
    assert agentic["errors"] == 0 and agentic["turns"] == 2
    rows = [json.loads(x) for x in (out / "per_question.jsonl").read_text().splitlines()]
    q1 = next(r for r in rows if r["id"] == "q1")
    assert q1["ranked"][0] == "t-film"  # the model's first pick leads the evidence


def _fails(tmp_path: Path, dataset: Path, capsys, *extra: str) -> str:
    """Runs `sift eval` as the console script does; returns its stderr after exit 2."""
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "eval",
                "--dataset",
                str(dataset),
                "--store-cache",
                str(tmp_path / "c"),
                "--out",
                str(tmp_path / "o"),
                "--embedder",
                "hash",
                "--quiet",
                *extra,
            ]
        )
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("sift: error: ") and err.count("\n") == 1, err
    return err


def test_unknown_mode_lists_the_valid_ones(tmp_path: Path, write_dataset, capsys) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    err = _fails(tmp_path, dataset, capsys, "--modes", "bm25,telepathy")
    assert "unknown mode 'telepathy'" in err
    assert "bm25, dense, hybrid, agentic" in err


def test_unknown_policy_lists_the_valid_ones(tmp_path: Path, write_dataset, capsys) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    err = _fails(tmp_path, dataset, capsys, "--policy", "oracle")
    assert "valid policies: heuristic, ollama" in err


def test_bad_dataset_is_one_line_error_naming_the_problem(
    tmp_path: Path, write_dataset, capsys
) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    (dataset / "questions.jsonl").unlink()
    err = _fails(tmp_path, dataset, capsys)
    assert "has no questions.jsonl" in err
    assert not (tmp_path / "o").exists()


def test_unknown_embedder_is_one_line_error(tmp_path: Path, write_dataset, capsys) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    err = _fails(tmp_path, dataset, capsys, "--embedder", "nonesuch")
    assert "unknown embedder 'nonesuch'" in err
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").iterdir())


def _ollama_fails(tmp_path: Path, dataset: Path, capsys, host: str, *extra: str) -> str:
    return _fails(
        tmp_path, dataset, capsys, "--modes", "agentic", "--policy", "ollama",
        "--ollama-host", host, *extra,
    )  # fmt: skip


def test_unreachable_model_server_stops_the_run_with_one_error(
    tmp_path: Path, write_dataset, capsys, monkeypatch, leaked_transports
) -> None:
    monkeypatch.setenv("SIFT_OLLAMA_RETRIES", "0")
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    err = _ollama_fails(tmp_path, dataset, capsys, refused_host())
    assert "the agentic policy cannot run" in err and "cannot reach Ollama" in err
    assert not (tmp_path / "o").exists()
    assert leaked_transports() == []


def test_the_model_client_is_closed_when_the_first_check_fails(
    tmp_path: Path, write_dataset, capsys, monkeypatch, leaked_transports
) -> None:
    monkeypatch.setenv("SIFT_OLLAMA_RETRIES", "0")
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    with FakeOllama(models=("another-model:1b",)) as server:
        err = _ollama_fails(tmp_path, dataset, capsys, server.host, "--model", "absent-model:1b")
        assert server.paths() == ["/api/show"]  # the model check, on one connection
    assert "the agentic policy cannot run" in err and "ollama pull absent-model:1b" in err
    assert leaked_transports() == []


def test_settings_reach_the_harness_and_the_planner_and_the_report(
    tmp_path: Path, write_dataset
) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    code, output, out = _eval(
        tmp_path,
        dataset,
        "--modes",
        "agentic",
        "--set",
        "max_turns=1",
        "--set",
        "planner.max_calls_per_turn=1",
        "--top-k",
        "3",
    )
    assert code == 0, output
    report = json.loads((out / "report.json").read_text())
    config = report["config"]
    assert config["harness"]["max_turns"] == 1 and config["harness"]["top_k"] == 3
    assert config["planner"]["max_calls_per_turn"] == 1
    assert config["top_k"] == 3
    (agentic,) = report["summaries"]
    assert agentic["turns"] == 1 and agentic["errors"] == 0
    rows = [json.loads(x) for x in (out / "per_question.jsonl").read_text().splitlines()]
    assert all(len(row["ranked"]) <= 3 for row in rows)


def test_a_bad_setting_is_one_line_error_before_any_work(
    tmp_path: Path, write_dataset, capsys
) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    err = _fails(tmp_path, dataset, capsys, "--set", "planner.max_anchors=0")
    assert "--set planner.max_anchors='0': Input should be greater than or equal to 1" in err
    err = _fails(tmp_path, dataset, capsys, "--policy", "ollama", "--set", "planner.seed=3")
    assert "planner settings apply to --policy heuristic, not ollama" in err
    assert not (tmp_path / "c").exists() and not (tmp_path / "o").exists()


def test_the_python_api_takes_settings_and_records_the_command(
    tmp_path: Path, write_dataset
) -> None:
    dataset = write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS)
    config = EvalConfig(
        dataset=dataset,
        modes=["agentic"],
        limit=1,
        harness={"max_turns": 2, "deadline_s": None},
        planner={"max_anchors": 1},
        embedder="hash",
        store_cache=tmp_path / "cache",
        out=tmp_path / "out",
    )
    run = run_eval(config, progress=False)
    assert run.report.command.endswith(
        "--set max_turns=2 --set deadline_s=none --set planner.max_anchors=1 "
        f"--embedder hash --concurrency 4 --out {tmp_path / 'out'}"
    )
    assert run.report.config["planner"]["max_anchors"] == 1
    with pytest.raises(ValueError, match="planner settings apply to the heuristic policy"):
        EvalConfig(dataset=dataset, policy="ollama", planner={"max_anchors": 1})
