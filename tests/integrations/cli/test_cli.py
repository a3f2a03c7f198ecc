"""The `sift` command as the console script runs it (in this process: `main(argv)`, see
conftest.py), on real stores in temporary folders. test_cli_process.py keeps a few runs in
real processes."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from sift.integrations.ollama.testing import (
    FakeOllama,
    Reply,
    final_answer,
    reply,
    tool_call,
)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inputs") / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text(
        "# Basalt Guide\n\nThe Basalt Bridge was designed by Ilse Varga in 1931.\n\n"
        "Ilse Varga was born in the town of Szeged.",
        encoding="utf-8",
    )
    (folder / "notes.txt").write_text("Szeged lies on the river Tisza.", encoding="utf-8")
    lines = [
        json.dumps(
            {
                "id": "p1",
                "title": "Tisza",
                "text": "The Tisza flows into the Danube.",
                "metadata": {"lang": "en"},
            }
        ),
        "{broken",
        json.dumps(
            {
                "id": "p2",
                "title": "Danube",
                "text": "The Danube reaches the Black Sea.",
                "metadata": {"lang": "de"},
            }
        ),
        json.dumps(
            {
                "id": "p3",
                "title": "ティサ川",
                "text": "ティサ川はセゲドの町を流れ、ドナウ川に注ぐ。",
                "metadata": {"lang": "ja"},
            },
            ensure_ascii=False,
        ),
    ]
    (folder / "more.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def indexed(
    tmp_path_factory: pytest.TempPathFactory, inputs: Path, sift_code: Callable[..., int]
) -> Path:
    """A store built once for the tests that only read it."""
    store = tmp_path_factory.mktemp("home") / "store"
    assert sift_code("index", "--store", str(store), "--embedder", "hash", "-q", str(inputs)) == 1
    return store


def test_index_reports_bad_lines_and_is_idempotent(sift, tmp_path: Path, inputs: Path) -> None:
    store = tmp_path / "store"
    first = sift("index", "--store", str(store), "--embedder", "hash", "-q", str(inputs))
    assert first.returncode == 1, first.stderr
    assert "more.jsonl:2" in first.stderr and "not valid JSON" in first.stderr
    assert "5 added" in first.stderr
    again = sift("index", "--store", str(store), "-q", str(inputs))
    assert "0 added" in again.stderr and "5 unchanged" in again.stderr


def test_search_json_single_shot_agentic_and_filters(sift, indexed: Path) -> None:
    store = str(indexed)
    base = sift(
        "search",
        "--store",
        store,
        "--json",
        "--single-shot",
        "--top-k",
        "2",
        "Who designed the Basalt Bridge?",
    )
    assert base.returncode == 0, base.stderr
    result = json.loads(base.stdout)
    assert result["mode"] == "single_shot" and len(result["evidence"]) == 2
    assert result["evidence"][0]["doc_id"] == "docs/guide.md"
    assert set(result) >= {"evidence", "trace", "usage", "stopped_because"}

    agentic = sift(
        "search",
        "--store",
        store,
        "--json",
        "-q",
        "Where was the designer of the Basalt Bridge born?",
    )
    assert agentic.returncode == 0, agentic.stderr
    episode = json.loads(agentic.stdout)
    assert episode["mode"] == "agentic" and episode["trace"]
    assert episode["stopped_because"] in {"final", "max_turns", "budget"}
    assert "docs/guide.md" in {e["doc_id"] for e in episode["evidence"]}

    german = sift(
        "search", "--store", store, "--json", "--single-shot", "--filter", "lang=de", "river"
    )
    assert {e["doc_id"] for e in json.loads(german.stdout)["evidence"]} == {"p2"}

    japanese = sift(
        "search", "--store", store, "--json", "--single-shot", "--filter", "lang=ja", "ドナウ川"
    )
    assert japanese.returncode == 0, japanese.stderr
    (hit,) = json.loads(japanese.stdout)["evidence"]
    assert hit["doc_id"] == "p3" and hit["title"] == "ティサ川"


def test_search_prints_the_evidence_for_people(sift, indexed: Path) -> None:
    run = sift("search", "--store", str(indexed), "-q", "Who designed the Basalt Bridge?")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "Who designed the Basalt Bridge?"
    assert lines[1].startswith(" 1. Basalt Guide  docs/guide.md_")
    assert "found by search(" in run.stdout and "Ilse Varga" in run.stdout
    assert "agentic:" in lines[-1] and "stopped because final" in lines[-1]


def test_batch_mode_writes_one_line_per_question(sift, tmp_path: Path, indexed: Path) -> None:
    batch = tmp_path / "q.jsonl"
    batch.write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "question": "Where does the Tisza flow?"}),
                "not json",
                json.dumps({"id": "c", "question": "   "}),
                json.dumps({"id": "d", "question": "Which sea does the Danube reach?"}),
                json.dumps({"id": "e", "question": "ティサ川はどこに注ぐ?"}, ensure_ascii=False),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    run = sift(
        "search", "--store", str(indexed), "--questions", str(batch), "--json", "--single-shot"
    )
    assert run.returncode == 2
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    # Every line gets an answer line; a failed one carries its id and the error.
    assert [r["id"] for r in rows] == ["a", None, "c", "d", "e"]
    assert [sorted(r) for r in rows[1:3]] == [["error", "id"], ["error", "id"]]
    assert "question is empty" in rows[2]["error"]
    assert all(r["evidence"] for r in rows if "error" not in r or r["error"] is None)
    assert rows[4]["question"] == "ティサ川はどこに注ぐ?"
    assert "q.jsonl:2" in run.stderr and "q.jsonl:3" in run.stderr


@pytest.mark.parametrize("mode", [("--single-shot", "--mode", "bm25"), ("--single-shot",), ()])
def test_a_batch_answers_every_question_it_can(sift, tmp_path: Path, indexed: Path, mode) -> None:
    """Query syntax is searched as words, a question the store refuses fails alone."""
    questions = [
        ("syntax", '- + " : ( ) ^ ~ * ? \\ / AND OR NOT Tisza'),
        ("long", "Tisza " * 500),
        ("ja", "ティサ川はどこに注ぐ？（ＡＮＤ　ＯＲ）－"),
        ("en", "Where does the Tisza flow?"),
    ]
    batch = tmp_path / "q.jsonl"
    batch.write_text(
        "".join(
            json.dumps({"id": i, "question": q}, ensure_ascii=False) + "\n" for i, q in questions
        ),
        encoding="utf-8",
    )
    run = sift("search", "--store", str(indexed), "--questions", str(batch), "--json", *mode)
    assert run.returncode == 2, run.stderr
    rows = {r["id"]: r for r in map(json.loads, run.stdout.splitlines())}
    assert list(rows) == ["syntax", "long", "ja", "en"]
    assert "the limit is 2,000" in rows["long"]["error"] and "evidence" not in rows["long"]
    for key in ("syntax", "ja", "en"):
        assert rows[key]["error"] is None and rows[key]["evidence"], key
    assert "p3" in {e["doc_id"] for e in rows["ja"]["evidence"]}


def test_default_store_location_serves_search_after_index(sift, home: Path, inputs: Path) -> None:
    assert sift("index", "--embedder", "hash", "-q", str(inputs)).returncode == 1
    assert (home / "store").is_dir()
    run = sift("search", "--single-shot", "--json", "Szeged river")
    assert run.returncode == 0 and json.loads(run.stdout)["evidence"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("search", "--single-shot", "  "), "the question is empty"),
        (("search", "x" * 5000), "the limit is 2,000"),
        (("grep", "(a)\\1"), "invalid grep pattern"),
        (("grep", "a" * 5000), "pattern"),
    ],
)
def test_bad_queries_are_one_line_errors(
    sift, indexed: Path, args: tuple[str, ...], message: str
) -> None:
    run = sift(*args, "--store", str(indexed))
    assert run.returncode == 2
    assert message in run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_grep_finds_english_and_japanese_text(sift, indexed: Path) -> None:
    run = sift("grep", "--store", str(indexed), "--json", "born in the town of [A-Z]\\w+")
    assert run.returncode == 0, run.stderr
    assert [h["chunk"]["doc_id"] for h in json.loads(run.stdout)["hits"]] == ["docs/guide.md"]
    run = sift("grep", "--store", str(indexed), "セゲド")
    assert run.returncode == 0, run.stderr
    assert "p3_0" in run.stdout and "ティサ川はセゲドの町を流れ" in run.stdout


def test_missing_input_is_named_and_nothing_is_created(sift, tmp_path: Path, inputs: Path) -> None:
    store = tmp_path / "store"
    run = sift("index", "--store", str(store), str(inputs), str(tmp_path / "nope.md"))
    assert run.returncode == 2 and "input not found" in run.stderr and "nope.md" in run.stderr
    assert not store.exists()


def test_foreign_folder_and_incompatible_store_are_refused_untouched(
    sift, tmp_path: Path, inputs: Path
) -> None:
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"\xff\xd8")
    run = sift("index", "--store", str(foreign), str(inputs))
    assert run.returncode == 2 and "not a sift store" in run.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["cat.jpg"]

    store = tmp_path / "store"
    sift("index", "--store", str(store), "--embedder", "hash", "-q", str(inputs))
    with sqlite3.connect(store / "sift.db") as conn:
        conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    before = (store / "sift.db").read_bytes()
    run = sift("search", "--store", str(store), "--single-shot", "river")
    assert run.returncode == 2 and "schema" in run.stderr.lower()
    assert (store / "sift.db").read_bytes() == before


def test_unknown_store_scheme_lists_the_registered_ones(sift) -> None:
    run = sift("search", "--store", "elastic://localhost:9200", "--single-shot", "river")
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "registered schemes: file, sqlite, weaviate, weaviates" in run.stderr


def test_demo_answers_its_two_hop_question_offline(sift, home: Path) -> None:
    run = sift("demo", "-q")
    assert run.returncode == 0, run.stderr
    assert "Boden's Boy" in run.stdout and "Henry Edwards" in run.stdout
    assert "gold passages in the top 10: sift 2/2, single-shot hybrid 1/2" in run.stdout
    assert "Weston-super-Mare" in run.stdout
    assert (home / "demo" / "sift.db").is_file()


def _model_turn(body: dict) -> Reply:
    """A model at the wire: search the question once, then return the first block it saw."""
    tool_text = "\n".join(m.get("content", "") for m in body["messages"] if m["role"] == "tool")
    if tool_text:
        first = re.findall(r"# DOCUMENT ID: (\S+)", tool_text)[:1]
        return final_answer([(cid, "names the designer") for cid in first])
    question = body["messages"][-1]["content"].rsplit("Question: ", 1)[1]
    return reply(tool_calls=[tool_call("search_corpus", query=question)])


def test_ollama_policy_searches_and_closes_its_client(
    sift, tmp_path: Path, indexed: Path, leaked_transports
) -> None:
    batch = tmp_path / "q.jsonl"
    questions = ["Who designed the Basalt Bridge?", "ティサ川はどこに注ぐ?"]
    batch.write_text(
        "".join(
            json.dumps({"id": str(i), "question": q}, ensure_ascii=False) + "\n"
            for i, q in enumerate(questions)
        ),
        encoding="utf-8",
    )
    with FakeOllama(models=("fake-searcher:1b",), responder=_model_turn) as server:
        one = sift(
            "search", "--store", str(indexed), "--json", "-q", "--policy", "ollama",
            "--model", "fake-searcher:1b", "--ollama-host", server.host, questions[0],
        )  # fmt: skip
        many = sift(
            "search", "--store", str(indexed), "--questions", str(batch), "--policy",
            "ollama", "--model", "fake-searcher:1b", "--ollama-host", server.host,
        )  # fmt: skip
        chats = server.chat_requests()
    assert one.returncode == 0, one.stderr
    result = json.loads(one.stdout)
    assert result["stopped_because"] == "final"
    assert result["evidence"][0]["doc_id"] == "docs/guide.md"
    assert many.returncode == 0, many.stderr
    rows = [json.loads(line) for line in many.stdout.splitlines()]
    assert [r["question"] for r in rows] == questions
    assert rows[1]["evidence"][0]["doc_id"] == "p3"
    assert len(chats) == 2 * 3 and {c["model"] for c in chats} == {"fake-searcher:1b"}
    assert leaked_transports() == []
