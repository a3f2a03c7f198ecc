"""Ideas that have one home stay there: reciprocal rank fusion is `sift.fusion.rrf_scores`,
and a chunk id is made by `sift.types.make_chunk_id` and read by `split_chunk_id`. A copy
written out again elsewhere drifts (four RRFs and five id builders did), so these fail on
one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sift.types import make_chunk_id, split_chunk_id

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("core", "graphs", "nodes", "integrations", "benchmarks", "examples", "checks")

# `weight / (k + rank)`, `1.0 / (rrf_k + 1 + i)`: a sum with a fusion constant divided into.
_RRF = re.compile(r"/\s*\(\s*(?:[\w.]*_)?k\s*\+\s*(?:1\s*\+\s*)?\w*\s*\)")
# f"{doc_id}_{index}": a chunk id put together by hand.
_MADE_ID = re.compile(r"f\"\{[\w.]*doc[\w.]*\}_\{")
# `.rpartition("_")`: a chunk id taken apart by hand.
_SPLIT_ID = re.compile(r"\.rpartition\(\s*[\"']_[\"']\s*\)")

_HOMES = {
    _RRF: {"core/fusion.py"},
    _MADE_ID: {"core/types.py"},
    _SPLIT_ID: {"core/types.py"},
}


def _python_files() -> list[Path]:
    files: list[Path] = []
    for folder in SOURCES:
        files += [p for p in (ROOT / folder).rglob("*.py") if ".cache" not in p.parts]
    return files


@pytest.mark.parametrize("pattern", list(_HOMES), ids=["rrf", "make_chunk_id", "split_chunk_id"])
def test_the_idea_is_written_in_its_home_only(pattern: re.Pattern[str]) -> None:
    homes = _HOMES[pattern]
    found = []
    for path in _python_files():
        relative = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and relative not in homes:
                found.append(f"{relative}:{number}: {line.strip()}")
    assert not found, "written out again; use the one home:\n" + "\n".join(found)
    # The patterns find what they are for (a guard against a pattern that matches nothing).
    assert any(pattern.search(line) for home in homes for line in (ROOT / home).open())


def test_chunk_ids_round_trip_and_refuse_what_is_not_one() -> None:
    for doc_id, index in [("a", 0), ("a_b", 12), ("東京/梅雨.md", 3), ("x_1", 7)]:
        assert split_chunk_id(make_chunk_id(doc_id, index)) == (doc_id, index)
    for text in ["plain", "_3", "a_", "a_b", "a_²", "a_-1", "a_1.5"]:
        assert split_chunk_id(text) is None, text
