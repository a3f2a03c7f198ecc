"""A search, grep or listing that matches nothing says so on stderr, naming the filters
that may be why; stdout keeps its usual shape (an empty result, JSON included)."""

from __future__ import annotations

import json
from pathlib import Path


def test_nothing_found_is_said_on_stderr(sift, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "梅雨.md").write_text("# 梅雨\n\n梅雨入りは六月です。", encoding="utf-8")
    (docs / "kestrel.md").write_text("# Kestrel\n\nThe kestrel hovers.", encoding="utf-8")
    store = str(tmp_path / "store")
    assert sift("index", "--store", store, "--embedder", "hash", "-q", str(docs)).returncode == 0

    found = sift("search", "--store", store, "-q", "梅雨入り")
    assert found.returncode == 0 and "nothing found" not in found.stderr

    for question in ("梅雨入り", "kestrel"):
        run = sift("search", "--store", store, "--json", "--filter", "format=pdf", question)
        assert run.returncode == 0 and json.loads(run.stdout)["evidence"] == []
        said = " ".join(run.stderr.split())
        assert "nothing found: no passage matches the question with --filter format=pdf" in said

    grep = sift("grep", "--store", store, "--json", "台風")
    assert grep.returncode == 0 and json.loads(grep.stdout)["hits"] == []
    assert "nothing found: no passage matches /台風/" in " ".join(grep.stderr.split())

    listed = sift("ls", "--store", store, "--filter", "format=pdf")
    assert listed.stdout == "" and "nothing found: no document matches with --filter" in (
        " ".join(listed.stderr.split())
    )
    prefixed = sift("ls", "--store", store, "--prefix", "reports/")
    assert "no document id starts with 'reports/'" in prefixed.stderr
