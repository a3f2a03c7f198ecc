"""`sift search --html` as users run it: a real process, a real store."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

from sift.types import SearchResult


def sift(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIFT_HOME": str(home), "COLUMNS": "120", "NO_COLOR": "1"}
    env.pop("SIFT_STORE", None)
    return subprocess.run(
        [sys.executable, "-m", "sift", *args], capture_output=True, text=True, env=env, timeout=120
    )


def flat(text: str) -> str:
    """An error as one line (rich draws it in a box, wrapped)."""
    return " ".join(text.replace("│", " ").split())


def page_data(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="sift-trace-data">(.*?)</script>', text)
    assert found is not None
    return json.loads(found.group(1))


def test_one_question_writes_one_page_beside_the_usual_output(tmp_path, cli_store, question_ja):
    page = tmp_path / "out" / "trace.html"
    done = sift(
        "search",
        "--store",
        str(cli_store),
        "--json",
        "--html",
        str(page),
        question_ja,
        home=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    printed = SearchResult.model_validate_json(done.stdout)
    data = page_data(page)
    assert SearchResult.model_validate(data["result"]) == printed
    assert data["rollouts"] == []
    assert f"trace page: {page}" in done.stderr


def test_rollouts_are_written_beside_their_fusion(tmp_path, cli_store, question_ja):
    page = tmp_path / "rollouts.html"
    args = ["search", "--store", str(cli_store), "--json", "--rollouts", "2", "--html", str(page)]
    done = sift(*args, question_ja, home=tmp_path)
    assert done.returncode == 0, done.stderr
    data = page_data(page)
    assert len(data["rollouts"]) == 2
    assert SearchResult.model_validate(data["result"]) == SearchResult.model_validate_json(
        done.stdout
    )
    assert "rollouts:2" in data["result"]["flags"]


def test_a_batch_writes_a_folder_of_pages_and_an_index(tmp_path, cli_store, question_ja):
    questions = tmp_path / "questions.jsonl"
    lines = [
        json.dumps({"id": "金閣寺-1", "question": question_ja}, ensure_ascii=False),
        "{broken",
        json.dumps(
            {"id": "eiffel", "question": "Where was the engineer of the Eiffel Tower born?"}
        ),
        json.dumps({"id": "blank", "question": "   "}),
    ]
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    folder = tmp_path / "pages"
    args = ["search", "--store", str(cli_store), "--questions", str(questions)]
    done = sift(*args, "--html", str(folder), home=tmp_path)
    assert done.returncode == 2  # two lines could not be answered
    lines_out = [json.loads(line) for line in done.stdout.splitlines()]
    # Every input line has an output line; the two failed ones carry {"id", "error"}.
    assert [a["id"] for a in lines_out] == ["金閣寺-1", None, "eiffel", "blank"]
    assert set(lines_out[1]) == set(lines_out[3]) == {"id", "error"}
    assert "question is empty" in lines_out[3]["error"]
    answered = [a for a in lines_out if "evidence" in a]
    index = (folder / "index.html").read_text(encoding="utf-8")
    links = [unquote(link) for link in re.findall(r'href="([^"]+)"', index)]
    assert links == ["0001-金閣寺-1.html", "0003-eiffel.html"]
    for link, record in zip(links, answered, strict=True):
        data = page_data(folder / link)
        assert data["result"]["question"] == record["question"]
        assert data["result"]["evidence"] == record["evidence"]
        assert data["back_link"] == "index.html"
    assert "line 2" in index and "question is empty" in index.lower()


def test_html_targets_that_cannot_work_are_refused_before_searching(tmp_path, cli_store):
    (tmp_path / "taken").write_text("x")
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "a", "question": "Eiffel"}\n')
    args = ["search", "--store", str(cli_store)]
    done = sift(*args, "--html", str(tmp_path), "Eiffel", home=tmp_path)
    assert done.returncode == 2 and "is a folder" in flat(done.stderr)
    done = sift(
        *args, "--questions", str(questions), "--html", str(tmp_path / "taken"), home=tmp_path
    )
    assert done.returncode == 2 and "exists and is not a folder" in flat(done.stderr)
    assert done.stdout == ""
