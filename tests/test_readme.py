"""Every code block of the README runs as written: its shell blocks in order, in one empty
folder, as a new user with an empty home (`~/.sift` is theirs), then its Python blocks
in order in one interpreter (a later block uses the `corpus` of an earlier one), with
the installed `sift`.

A block that is not safe or fast to run says why in a comment right above it
(`<!-- not run by tests/test_readme.py: <reason> -->`); blocks in other languages (JSON
configuration, the folder layout, the graph diagram) are not commands. The Japanese
section's block runs in tests/test_readme_japanese.py, which checks what it finds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

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


def _env(home: Path) -> dict[str, str]:
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


def test_every_block_is_run_or_says_why_not() -> None:
    blocks = readme_blocks()
    commands = [b for b in blocks if b.language in ("bash", "python")]
    assert len([b for b in commands if b.skipped_because is None]) >= 5
    for block in commands:
        if block.skipped_because is not None:
            assert len(block.skipped_because) > 20, f"README line {block.line}: say why"
    # The first-hour path is run, not skipped.
    run = "\n".join(b.code for b in commands if b.skipped_because is None)
    assert "sift demo" in run and "sift index ./docs" in run and "open_store(" in run


@pytest.fixture(scope="module")
def first_hour(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Runs the shell blocks as a new user would, in order; their stderr, block by block."""
    folder = tmp_path_factory.mktemp("readme")
    home = folder / "home"
    home.mkdir()
    work = folder / "work"
    work.mkdir()
    errors = []
    for block in readme_blocks():
        if block.language != "bash" or block.skipped_because is not None:
            continue
        run = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block.code],
            cwd=work,
            env=_env(home),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert run.returncode == 0, f"README line {block.line}:\n{block.code}\n{run.stderr}"
        errors.append(run.stdout + run.stderr)
    return home, errors


def test_the_shell_blocks_run_as_written(first_hour: tuple[Path, list[str]]) -> None:
    home, outputs = first_hour
    walkthrough = next(o for o in outputs if "kestrel" in o)
    assert "The demo's store is ~/.sift/demo" in walkthrough
    assert "Nájera" in walkthrough  # the demo's first search finds the two-hop answer
    assert "north tower" in walkthrough  # your own document, found in your own store
    assert "nothing found: no passage matches the question with --filter format=pdf" in (
        " ".join(walkthrough.split())
    )
    assert (home / ".sift" / "demo").is_dir() and (home / ".sift" / "store").is_dir()


def test_the_python_blocks_run_as_written(first_hour: tuple[Path, list[str]]) -> None:
    home, _ = first_hour
    code = "\n\n".join(
        b.code for b in readme_blocks() if b.language == "python" and b.skipped_because is None
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=home,
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    assert "Yale" in run.stdout or "Shriver" in run.stdout
