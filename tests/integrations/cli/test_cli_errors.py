"""Bad settings, names and limits on the command line (issue 31): each is one line on
stderr with exit code 2, never a traceback; with --json the same error is JSON on stdout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sift.config import HarnessConfig


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    docs.joinpath("lighthouse.md").write_text(
        "# Lighthouses\n\nA lighthouse guides ships at night.\n", encoding="utf-8"
    )
    docs.joinpath("灯台.md").write_text("# 灯台\n\n灯台は夜に船を導く。\n", encoding="utf-8")
    return docs


def _one_line(run) -> str:
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stderr.startswith("sift: error: ") and run.stderr.count("\n") == 1, run.stderr
    assert "Traceback" not in run.stderr
    return run.stderr


def test_an_unknown_embedder_is_one_line(sift, folder: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    err = _one_line(sift("index", str(folder), "--store", str(store), "--embedder", "nosuch"))
    assert "unknown embedder 'nosuch'" in err and "static" in err
    err = _one_line(sift("index", str(folder), "--store", str(store), "--embedder", "hash:x"))
    assert "hash:x" in err
    assert not (store / "sift.db").exists()


def test_minilm_without_its_extra_is_one_line(
    sift, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The extra made absent for this test: its import fails as it does without it.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    err = _one_line(
        sift("index", str(folder), "--store", str(tmp_path / "s"), "--embedder", "minilm")
    )
    assert "pip install 'sift-harness[minilm]'" in err


@pytest.mark.parametrize("value", ["10", "335"])
def test_a_threshold_below_one_tool_result_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="below the size of one tool result"):
        HarnessConfig(threshold_tokens=int(value))
    assert HarnessConfig(threshold_tokens=336).threshold_tokens == 336


def test_set_threshold_tokens_10_is_one_line(sift, folder: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert sift("index", str(folder), "--store", str(store), "--embedder", "hash").returncode == 0
    err = _one_line(sift("search", "--store", str(store), "--set", "threshold_tokens=10", "灯台"))
    assert "threshold_tokens" in err and "336" in err


def test_json_errors_are_json_on_stdout_too(sift, folder: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    run = sift("search", "--store", str(missing), "--json", "灯台")
    err = _one_line(run)
    body = json.loads(run.stdout)
    assert body["exit_code"] == 2 and str(missing) in body["error"]
    assert body["error"] in err
    # A usage error too: it is raised, not printed by the parser alone.
    run = sift("search", "--store", str(missing), "--json", "--top-k", "0", "lighthouse")
    _one_line(run)
    assert "--top-k" in json.loads(run.stdout)["error"]
    # And a bad setting.
    run = sift("index", str(folder), "--store", str(tmp_path / "s"), "--json", "--embedder", "x")
    _one_line(run)
    assert "unknown embedder" in json.loads(run.stdout)["error"]


def test_without_json_stdout_stays_empty_on_error(sift, tmp_path: Path) -> None:
    run = sift("search", "--store", str(tmp_path / "nowhere"), "lighthouse")
    _one_line(run)
    assert run.stdout == ""
