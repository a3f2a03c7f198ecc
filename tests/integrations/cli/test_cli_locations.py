"""`sift search` prints where each passage sits: its page and its section beside its title
(issue 44), as `--json` gives them in its metadata; nothing for a JSONL passage."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ..traceview.conftest import LOCATED_QUESTION, write_located_files
from .conftest import Run, Sift


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, sift_code: Callable[..., int]) -> Path:
    """A PDF of two pages, a Markdown file whose Japanese section sits under an English
    heading, and a JSONL passage (no layout), indexed by `sift index`."""
    root = tmp_path_factory.mktemp("located")
    folder = write_located_files(root / "docs")
    location = root / "store"
    code = sift_code("index", "--store", str(location), "--embedder", "hash", "-q", str(folder))
    assert code == 0
    return location


def _search(sift: Sift, store: Path, *args: str) -> Run:
    run = sift(
        "search", "--store", str(store), "--single-shot", "--mode", "bm25", "--top-k", "10",
        *args, LOCATED_QUESTION,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return run


def test_search_prints_each_passages_page_and_section_beside_its_title(
    sift: Sift, store: Path
) -> None:
    evidence = json.loads(_search(sift, store, "--json").stdout)["evidence"]
    ranked = {e["doc_id"]: (rank, e) for rank, e in enumerate(evidence, start=1)}
    assert {"docs/report.pdf", "docs/guide.md", "memo"} <= ranked.keys()
    lines = _search(sift, store).stdout.splitlines()

    def heading(doc_id: str) -> tuple[str, dict]:
        rank, item = ranked[doc_id]
        line = next(line for line in lines if line.startswith(f"{rank:>2}. "))
        return line.removeprefix(f"{rank:>2}. "), item

    line, pdf = heading("docs/report.pdf")
    assert pdf["metadata"]["pages"] == [2, 2]
    assert line == f"Annual Report  p. 2  {pdf['chunk_id']}"
    line, guide = heading("docs/guide.md")
    assert guide["metadata"]["section"] == "Results > 売上高"
    assert line == f"Results  § Results > 売上高  {guide['chunk_id']}"
    # A JSONL passage has no page and no section: nothing stray beside its title.
    line, memo = heading("memo")
    assert "page" not in memo["metadata"] and "section" not in memo["metadata"]
    assert line == f"Memo  {memo['chunk_id']}"
