"""A few runs of `sift` as real processes: the installed console script and `python -m
sift` start, read their arguments and environment, and exit with the right code. The
commands' behaviour is tested in process (test_cli.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "SIFT_HOME": str(home), "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("SIFT_STORE", None)
    return env


def test_the_console_script_lists_every_command(tmp_path: Path) -> None:
    script = shutil.which("sift", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.fail("the `sift` console script is not installed next to this Python")
    run = subprocess.run(
        [script, "--help"], capture_output=True, text=True, env=_env(tmp_path), timeout=300
    )
    assert run.returncode == 0, run.stderr
    for command in ("index", "search", "grep", "serve", "eval", "demo"):
        assert command in run.stdout


def test_python_m_sift_indexes_then_searches_the_default_store(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bridge.md").write_text(
        "# Basalt Bridge\n\nThe Basalt Bridge was designed by Ilse Varga.", encoding="utf-8"
    )
    (docs / "橋.txt").write_text("玄武岩橋はイルゼ・ヴァルガが設計した。", encoding="utf-8")
    env = _env(tmp_path / "home")

    def sift(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sift", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    index = sift("index", "--embedder", "hash", "-q", str(docs))
    assert index.returncode == 0, index.stderr
    assert "2 added" in index.stderr
    search = sift("search", "--json", "-q", "--top-k", "5", "Who designed the Basalt Bridge?")
    assert search.returncode == 0, search.stderr
    result = json.loads(search.stdout)
    assert result["mode"] == "agentic" and result["evidence"][0]["doc_id"] == "docs/bridge.md"
    assert (tmp_path / "home" / "store" / "sift.db").is_file()
