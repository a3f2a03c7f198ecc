"""A question the corpus does not answer: `sift search` says so in one line on stdout,
after the question and before the passages (then only the nearest text); `--json` keeps
its shape, the flag in `flags`. English beside Japanese, through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PAGES = {
    "tracer-options.md": "# Tracer options\n\n--max-callers=<number> [default: 12]\n"
    "Specifies the maximum number of entries shown in the stack traces that identify "
    "program locations. The maximum value is 500.\n",
    "tracer-output.md": "# Tracer output\n\nThe tracer writes one stack trace per line to "
    "its log file. Each stack trace lists the callers of a function, most recent first.\n",
    "backup-logs.md": "# Backup daemon logs\n\nThe backup daemon rotates its log files every "
    "week. To rotate the log files at once, send it SIGHUP.\n",
    "トレーサのオプション.md": "# トレーサのオプション\n\n--max-callers=<数値> [既定値: 12]\n"
    "プログラムの位置を示すスタックトレースに表示する項目の最大数を指定します。最大値は500です。\n",
    "バックアップ.md": "# バックアップデーモンのログ\n\nバックアップデーモンはログファイルを毎週"
    "ローテートします。すぐにローテートするにはSIGHUPを送ります。\n",
}
NAMED = "'--frobnicate-depth' occurs nowhere in the corpus"
UNMATCHED = "nothing in the corpus matches the question's key terms"
NEAREST = "; the passages below are only the nearest text"


@pytest.fixture
def store(sift, tmp_path: Path) -> str:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in PAGES.items():
        (docs / name).write_text(text, encoding="utf-8")
    store = str(tmp_path / "store")
    assert sift("index", "--store", store, "--embedder", "hash", "-q", str(docs)).returncode == 0
    return store


@pytest.mark.parametrize(
    ("question", "said", "flag"),
    [
        ("What does --frobnicate-depth control?", NAMED, "not_found:--frobnicate-depth"),
        ("--frobnicate-depth は何を制御しますか？", NAMED, "not_found:--frobnicate-depth"),
        ("How do I bake a sourdough loaf with rye flour?", UNMATCHED, "not_found"),
        ("ライ麦粉でサワードウを焼くには？", UNMATCHED, "not_found"),
    ],
)
def test_a_question_the_corpus_does_not_answer_is_said_before_the_passages(
    sift, store: str, question: str, said: str, flag: str
) -> None:
    # `--` before the question: one that starts with `--` is not an option.
    run = sift("search", "--store", store, "-q", "--", question)
    assert run.returncode == 0
    lines = [" ".join(line.split()) for line in run.stdout.splitlines()]
    assert lines[0] == question
    assert lines[1] == f"not found: {said}{NEAREST}"
    assert lines[2].startswith("1. ")  # the nearest passage follows
    assert "not found" not in run.stderr

    as_json = sift("search", "--store", store, "-q", "--json", "--", question)
    result = json.loads(as_json.stdout)
    assert flag in result["flags"] and result["evidence"]
    assert "not_found" not in result  # the JSON output is the SearchResult, as before


@pytest.mark.parametrize(
    "question", ["What is the default of --max-callers?", "--max-callers の既定値は？"]
)
def test_an_answered_question_says_nothing_of_it(sift, store: str, question: str) -> None:
    run = sift("search", "--store", store, "-q", "--", question)
    assert run.returncode == 0 and "not found" not in run.stdout
    assert run.stdout.splitlines()[1].lstrip().startswith("1. ")  # the passages at once
