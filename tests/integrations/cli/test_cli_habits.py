"""What any command line owes its user: --version, -h, completion, one-line errors for a
bad setting or a missing extra, a non-zero exit when a model server failed, progress and
an honest Ctrl-C for batches, and tables that fit 80 columns."""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sift import __version__
from sift.integrations.ollama.testing import refused_host


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, sift_code: Callable[..., int]) -> Path:
    folder = tmp_path_factory.mktemp("habits") / "docs"
    folder.mkdir()
    (folder / "bridge.md").write_text(
        "# Basalt Bridge\n\nThe Basalt Bridge was designed by Ilse Varga.", encoding="utf-8"
    )
    (folder / "川.txt").write_text("ティサ川はドナウ川に注ぐ。", encoding="utf-8")
    path = folder.parent / "store"
    assert sift_code("index", "--store", str(path), "--embedder", "hash", "-q", str(folder)) == 0
    return path


def test_version_help_and_completion(sift) -> None:
    assert sift("--version").stdout.strip() == f"sift {__version__}"
    assert sift("-V").returncode == 0
    top = sift("-h")
    assert top.returncode == 0
    for command in ("index", "search", "stats", "ls", "show", "delete", "serve", "eval"):
        assert command in top.stdout
    assert "--install-completion" in top.stdout and "--show-completion" in top.stdout
    index_help = sift("index", "-h")
    assert "--sync" in index_help.stdout and "Exit code" in index_help.stdout


@pytest.mark.parametrize(
    ("variable", "value", "command"),
    [
        ("SIFT_MAX_TURNS", "many", ("search", "-q", "Who designed the Basalt Bridge?")),
        ("SIFT_PLANNER_MAX_ANCHORS", "-3", ("search", "-q", "Who designed it?")),
        ("SIFT_SERVER_PORT", "eighty", ("serve", "--allow-anonymous")),
        ("SIFT_OLLAMA_TIMEOUT", "soon", ("search", "--policy", "ollama", "-q", "Who?")),
    ],
)
def test_a_bad_setting_in_the_environment_is_one_line(
    sift,
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    command: tuple[str, ...],
) -> None:
    monkeypatch.setenv(variable, value)
    run = sift(*command, "--store", str(store))
    assert run.returncode == 2
    assert run.stderr.startswith("sift: error:") and variable in run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_a_missing_extra_is_one_line_naming_it(
    sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def without_uvicorn(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "uvicorn" or name.startswith("uvicorn."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_uvicorn)
    run = sift("serve", "--store", str(tmp_path), "--allow-anonymous")
    assert run.returncode == 2
    assert run.stderr == (
        "sift: error: this needs the `server` extra (uvicorn is not installed): "
        "pip install 'sift-harness[server]'\n"
    )


def test_an_episode_stopped_by_its_model_server_exits_non_zero(
    sift, store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIFT_OLLAMA_RETRIES", "0")
    host = refused_host()
    args = ("--store", str(store), "-q", "--policy", "ollama", "--model", "m:1b")
    one = sift("search", *args, "--ollama-host", host, "--json", "Who designed it?")
    assert one.returncode == 1
    assert json.loads(one.stdout)["stopped_because"] == "error"
    assert "the search stopped on an error" in one.stderr and "cannot reach Ollama" in one.stderr
    batch = tmp_path / "q.jsonl"
    batch.write_text(json.dumps({"id": "a", "question": "Who designed it?"}) + "\n")
    many = sift("search", *args, "--ollama-host", host, "--questions", str(batch))
    assert many.returncode == 1 and json.loads(many.stdout)["stopped_because"] == "error"
    assert f"{batch}:1" in many.stderr


def test_a_batch_interrupted_says_what_was_kept(
    sift, store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sift.integrations.cli import _search

    batch = tmp_path / "q.jsonl"
    questions = ["Who designed the Basalt Bridge?", "ティサ川はどこに注ぐ?", "third?", "fourth?"]
    batch.write_text(
        "".join(json.dumps({"id": str(i), "question": q}) + "\n" for i, q in enumerate(questions))
    )
    real = _search._run_one
    asked: list[str] = []

    async def interrupted(question: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(question)
        if len(asked) == 3:
            raise KeyboardInterrupt
        return await real(question, *args, **kwargs)

    monkeypatch.setattr(_search, "_run_one", interrupted)
    pages = tmp_path / "pages"
    run = sift(
        "search", "--store", str(store), "--single-shot", "--questions", str(batch),
        "--html", str(pages),
    )  # fmt: skip
    assert run.returncode == 130
    assert len(run.stdout.splitlines()) == 2  # the two answered before Ctrl-C
    assert "interrupted: 2 of 4 questions answered" in run.stderr
    assert (pages / "index.html").is_file() and "Traceback" not in run.stderr


def test_batch_progress_counts_questions(
    sift, store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rich.progress import Progress

    from sift.integrations.cli import _search

    advanced: list[int] = []
    real_advance = Progress.advance

    def advance(self: Progress, task: Any, amount: float = 1) -> None:
        advanced.append(int(amount))
        real_advance(self, task, amount)

    monkeypatch.setattr(Progress, "advance", advance)
    batch = tmp_path / "q.jsonl"
    batch.write_text("".join(json.dumps({"question": f"river {n}?"}) + "\n" for n in range(3)))
    run = sift("search", "--store", str(store), "--single-shot", "--questions", str(batch))
    assert run.returncode == 0 and len(run.stdout.splitlines()) == 3
    assert advanced == [1, 1, 1]
    assert _search.EXIT_PARTIAL == 1


def test_the_eval_table_reads_at_80_columns(sift, tmp_path: Path) -> None:
    dataset = tmp_path / "tiny"
    dataset.mkdir()
    corpus = [
        {"id": "t-film", "title": "The Glass Orchard", "text": "A 1987 film by Miriam Okonkwo."},
        {"id": "t-dir", "title": "Miriam Okonkwo", "text": "Miriam Okonkwo was born in Tallinn."},
        {"id": "t-x", "title": "Tallinn", "text": "Tallinn is the capital of Estonia."},
    ]
    question = {
        "id": "q1",
        "question": "Where was the director of The Glass Orchard born?",
        "answers": ["Tallinn"],
        "supporting_doc_ids": ["t-film", "t-dir"],
    }
    (dataset / "corpus.jsonl").write_text("".join(json.dumps(c) + "\n" for c in corpus))
    (dataset / "questions.jsonl").write_text(json.dumps(question) + "\n")
    run = sift(
        "eval", "--dataset", str(dataset), "--out", str(tmp_path / "out"), "--store-cache",
        str(tmp_path / "cache"), "--embedder", "hash", "-q", "--modes", "bm25,agentic",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.split("recall_plot:")[0].splitlines()  # the tables; then file paths
    assert max(len(line) for line in lines) <= 80
    header = next(line for line in lines if "R@10" in line)
    assert "all-gold@10" in header and "answer found" in header
    assert any("trajectory R" in line and "peak tokens" in line for line in lines)
    rows = [line for line in lines if line.strip().startswith(("bm25", "agentic"))]
    assert len(rows) == 4  # each mode once in each table, one line each


def test_the_command_line_starts_without_the_document_readers() -> None:
    """PDFium, python-docx and python-pptx load only when a file needs them, so `sift -h`
    and every command that reads no PDF or Office file start without them."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from sift.integrations.cli import app\n"
        "heavy = {'pypdfium2', 'docx', 'pptx', 'lxml', 'reportlab'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
