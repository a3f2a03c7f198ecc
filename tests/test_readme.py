"""Every code block of the README runs as written: its shell blocks in order, inside a
copy of this repository's files (where a reader runs them: the walk-through's folders
must not be the project's own), as a new user with an empty home (`~/.sift` is theirs),
then its Python blocks in order in one interpreter (a later block uses the `corpus` of an
earlier one), with the installed `sift`. The HTTP section's `sift index ... && sift
serve` is run too: the server is started on loopback, asked, and stopped.

A block that is not safe or fast to run says why in a comment right above it
(`<!-- not run by tests/test_readme.py: <reason> -->`); blocks in other languages (JSON
configuration, the folder layout, the graph diagram) are not commands. The Japanese
section's block runs in tests/test_readme_japanese.py, which checks what it finds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from .integrations.http.conftest import wait_until

ROOT = Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
_NOT_RUN = re.compile(r"<!-- not run by tests/test_readme\.py: (.+?) -->\s*\Z")
RUN_ELSEWHERE = ("### Japanese (日本語)",)  # sections whose blocks another test runs


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    line: int
    skipped_because: str | None


def readme_blocks() -> list[Block]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(readme):
        before = readme[: match.start()]
        reason = _NOT_RUN.search(before)
        heading = before.rfind("\n#")
        section = before[heading + 1 :].splitlines()[0] if heading >= 0 else ""
        if section in RUN_ELSEWHERE:
            reason_text: str | None = "run by tests/test_readme_japanese.py"
        else:
            reason_text = reason.group(1) if reason else None
        blocks.append(Block(match.group(1), match.group(2), before.count("\n") + 1, reason_text))
    return blocks


def readme_env(home: Path) -> dict[str, str]:
    """The environment the README's commands run in: this venv's sift first, an empty
    home, no sift settings of the machine's."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }
    for name in ("SIFT_HOME", "SIFT_STORE"):
        env.pop(name, None)
    return env


def _clone_like(folder: Path) -> Path:
    """A copy of the files a clone of this repository holds (those git tracks; without
    git, the top-level files and the folders a walk-through could collide with)."""
    folder.mkdir()
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout.decode()
        files = [name for name in listed.split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        files = []
    if not files:
        files = [str(p.relative_to(ROOT)) for p in ROOT.glob("*") if p.is_file()]
        files += [str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*") if p.is_file()]
    for name in files:
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in this working tree is not there
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    assert (folder / "README.md").is_file() and (folder / "docs").is_dir()
    return folder


def test_every_block_is_run_or_says_why_not() -> None:
    blocks = readme_blocks()
    commands = [b for b in blocks if b.language in ("bash", "python")]
    assert len([b for b in commands if b.skipped_because is None]) >= 5
    for block in commands:
        if block.skipped_because is not None:
            assert len(block.skipped_because) > 20, f"README line {block.line}: say why"
    # The first-hour path is run, not skipped.
    run = "\n".join(b.code for b in commands if b.skipped_because is None)
    assert "sift demo" in run and "sift index ./my-notes" in run and "open_store(" in run


@dataclass(frozen=True)
class FirstHour:
    home: Path
    work: Path  # the copy of the repository the blocks ran in
    project_docs: set[Path]  # the files of its own docs/ before they ran
    outputs: list[str]  # stdout and stderr, block by block


@pytest.fixture(scope="module")
def first_hour(tmp_path_factory: pytest.TempPathFactory) -> FirstHour:
    """Runs the shell blocks as a new user would, in order, inside a copy of the
    repository; what each printed."""
    folder = tmp_path_factory.mktemp("readme")
    home = folder / "home"
    home.mkdir()
    work = _clone_like(folder / "work")
    project_docs = set((work / "docs").rglob("*"))
    errors = []
    for block in readme_blocks():
        if block.language != "bash" or block.skipped_because is not None:
            continue
        run = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block.code],
            cwd=work,
            env=readme_env(home),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert run.returncode == 0, f"README line {block.line}:\n{block.code}\n{run.stderr}"
        errors.append(run.stdout + run.stderr)
    return FirstHour(home, work, project_docs, errors)


def test_the_shell_blocks_run_as_written(first_hour: FirstHour) -> None:
    home, outputs = first_hour.home, first_hour.outputs
    walkthrough = next(o for o in outputs if "kestrel" in o)
    assert "The demo's store is ~/.sift/demo" in walkthrough
    assert "Nájera" in walkthrough  # the demo's first search finds the two-hop answer
    assert "north tower" in walkthrough  # your own document, found in your own store
    assert "nothing found: no passage matches the question with --filter format=pdf" in (
        " ".join(walkthrough.split())
    )
    assert (home / ".sift" / "demo").is_dir() and (home / ".sift" / "store").is_dir()
    # Run inside the project, the walk-through indexed its own note, one document, and
    # wrote nothing into the project's folders.
    assert "1 added" in walkthrough and "skipped" not in walkthrough
    assert (first_hour.work / "my-notes" / "kestrel.md").is_file()
    assert set((first_hour.work / "docs").rglob("*")) == first_hour.project_docs
    assert "my-notes/kestrel.md" in walkthrough  # `sift show` found it under that id


def _serve_line() -> tuple[str, str]:
    """The HTTP section's `sift index ... && sift serve`: its index command and its serve
    command, as written."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### HTTP service for Dify and n8n", 1)[1]
    block = next(b for b in readme_blocks() if b.code in section and "sift serve" in b.code)
    first = block.code.splitlines()[0].split("#", 1)[0]
    index, serve = (part.strip() for part in first.split("&&"))
    assert index.startswith("sift index ") and serve.startswith("sift serve"), first
    return index, serve


def test_the_walkthrough_serves_what_it_indexed(first_hour: FirstHour) -> None:
    """The HTTP section's first line, where the walk-through left the reader: the index
    adds nothing new, the server starts (on a free loopback port, not 8000), answers
    with the reader's note under the key it printed, and stops."""
    index, serve = _serve_line()
    env = readme_env(first_hour.home)
    indexed = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", index],
        cwd=first_hour.work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert indexed.returncode == 0, indexed.stderr
    assert "1 unchanged" in indexed.stderr
    server = subprocess.Popen(
        ["bash", "-c", f"exec {serve} --port 0"],
        cwd=first_hour.work,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        log, url, key = [], None, None
        while url is None:
            line = server.stderr.readline()
            if not line:
                break
            log.append(line)
            generated = re.search(r"accepts the generated key: (\S+)", line)
            key = generated.group(1) if generated else key
            running = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", line)
            url = running.group(1) if running else None
        assert url and key, "".join(log)
        assert "as collection 'store'" in "".join(log)
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
            wait_until(lambda: client.get("/readyz").status_code == 200, "ready", 120)
            answer = client.post(
                "/retrieval",
                json={
                    "knowledge_id": "store",
                    "query": "Where does the kestrel hover?",
                    "retrieval_setting": {"top_k": 3, "score_threshold": 0.0},
                },
            )
            assert answer.status_code == 200, answer.text
            (record,) = answer.json()["records"]
            assert record["metadata"]["doc_id"] == "my-notes/kestrel.md"
            assert "north tower" in record["content"] and record["score"] > 0
            refused = client.post("/retrieval", headers={"Authorization": "Bearer wrong"})
            assert refused.status_code in (401, 403)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert server.returncode is not None  # stopped, not left behind


def test_the_python_blocks_run_as_written(first_hour: FirstHour) -> None:
    home = first_hour.home
    code = "\n\n".join(
        b.code for b in readme_blocks() if b.language == "python" and b.skipped_because is None
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=home,
        env=readme_env(home),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    assert "Yale" in run.stdout or "Shriver" in run.stdout
