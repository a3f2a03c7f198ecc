"""benchmarks/peers.py's pure parts: the metrics, the order of the rounds, how rounds are
fused into one row, and the tables. The peers themselves (LanceDB, Chroma) are not needed:
the script imports them only inside the worker that runs them."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "peers.py"


@pytest.fixture(scope="module")
def peers() -> ModuleType:
    return load_script(SCRIPT, "peers_under_test")


def test_percentile_is_nearest_rank(peers: ModuleType) -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 9.0, 8.0, 7.0, 6.0]
    assert peers.percentile(values, 50) == 5.0
    assert peers.percentile(values, 95) == 10.0
    assert peers.percentile(values, 10) == 1.0
    assert peers.percentile([7.5], 95) == 7.5
    with pytest.raises(ValueError, match="no values"):
        peers.percentile([], 50)


def test_ranked_docs_keeps_the_first_k_chunks_documents_once(peers: ModuleType) -> None:
    chunks = ["a", "b", "a", "東京", "c", "b", "d", "e", "f", "g", "h", "late"]
    ranked = peers.ranked_docs(chunks, k=10)
    assert ranked == ["a", "b", "東京", "c", "d", "e", "f", "g"]
    assert "late" not in ranked  # the 12th chunk is past k


def test_all_gold_needs_every_gold_or_its_near_duplicate(peers: ModuleType) -> None:
    near = {"g2": ["g2-twin"]}
    assert peers.all_gold(["x", "g1", "g2"], ["g1", "g2"], near)
    assert peers.all_gold(["g2-twin", "g1"], ["g1", "g2"], near)
    assert not peers.all_gold(["g1", "x"], ["g1", "g2"], near)
    # A twin of another question's gold passage stands in for nothing here.
    assert not peers.all_gold(["g1", "g3-twin"], ["g1", "g3"], near)
    assert not peers.all_gold(["g1"], [], {})


def test_quality_is_per_dataset(peers: ModuleType) -> None:
    questions = [
        {"dataset": "hotpotqa", "supporting_doc_ids": ["a", "b"]},
        {"dataset": "hotpotqa", "supporting_doc_ids": ["c"]},
        {"dataset": "jsquad", "supporting_doc_ids": ["東京-1"], "gold_near_duplicate_doc_ids": {}},
    ]
    ranked = [["a", "b"], ["a"], ["東京-1"]]
    assert peers.quality(questions, ranked) == {"hotpotqa": 0.5, "jsquad": 1.0}
    with pytest.raises(ValueError, match="2 rankings for 3 questions"):
        peers.quality(questions, ranked[:2])


def test_order_rotates_so_no_system_keeps_its_place(peers: ModuleType) -> None:
    systems = ["sift", "sift-base", "lancedb", "chroma"]
    rounds = [peers.order(systems, r) for r in range(4)]
    assert rounds[0] == systems
    assert rounds[1] == ["sift-base", "lancedb", "chroma", "sift"]
    for position in range(len(systems)):
        assert sorted(r[position] for r in rounds) == sorted(systems)


def _run(rate: float, p50: float, gold: float) -> dict[str, Any]:
    return {
        "passages_per_s": rate,
        "disk_mb": 10.0,
        "peak_rss_mb": 200.0 + rate / 100,
        "modes": {"dense": {"p50": p50, "p95": p50 * 2, "all_gold": {"hotpotqa": gold}}},
    }


def test_fuse_rounds_takes_medians_and_reports_quality_that_moved(peers: ModuleType) -> None:
    row = peers.fuse_rounds([_run(1000, 2.0, 0.5), _run(3000, 1.0, 0.5), _run(2000, 9.0, 0.5)])
    assert row["rounds"] == 3
    assert row["passages_per_s"] == 2000
    assert row["passages_per_s_range"] == [1000, 3000]
    assert row["modes"]["dense"]["p50"] == 2.0
    assert row["modes"]["dense"]["p95_range"] == [2.0, 18.0]
    assert row["modes"]["dense"]["all_gold"] == {"hotpotqa": 0.5}
    assert "all_gold_rounds" not in row["modes"]["dense"]
    # Two rounds: their mean; a quality that differs between rounds is kept, not hidden.
    moved = peers.fuse_rounds([_run(1000, 2.0, 0.5), _run(2000, 4.0, 0.25)])
    assert moved["passages_per_s"] == 1500
    assert moved["modes"]["dense"]["all_gold_rounds"] == {"hotpotqa": [0.5, 0.25]}
    with pytest.raises(ValueError, match="no runs"):
        peers.fuse_rounds([])


def test_markdown_says_n_a_where_a_system_has_no_such_search(peers: ModuleType) -> None:
    def run(modes: tuple[str, ...], rate: float, p50: float) -> dict[str, Any]:
        out = _run(rate, p50, 0.5)
        out["modes"] = {
            m: {"p50": p50, "p95": 2 * p50, "all_gold": {"hotpotqa": 0.75}} for m in modes
        }
        return out

    runs = {
        "sift": [
            run(("bm25", "dense", "hybrid"), 2000, 1.0),
            run(("bm25", "dense", "hybrid"), 4000, 1.0),
        ],
        "chroma": [run(("dense",), 1000, 3.0), run(("dense",), 1000, 2.0)],
    }
    report = {
        "sizes": {
            "hotpotqa": {
                "runs": runs,
                "summary": {name: peers.fuse_rounds(rows) for name, rows in runs.items()},
            }
        }
    }
    table = peers.markdown(report)
    chroma = next(line for line in table.splitlines() if line.startswith("| HotpotQA | Chroma"))
    assert chroma.count("n/a") == 2
    assert "| Chroma (embedded) | dense | 0.750 |" in table
    assert "| Chroma (embedded) | bm25 |" not in table
    # sift against Chroma, round by round: ingest 2x then 4x, dense 3x then 2x as fast.
    versus = next(
        line for line in table.splitlines() if "| HotpotQA | Chroma (embedded) | 3" in line
    )
    assert versus.startswith("| HotpotQA | Chroma (embedded) | 3.00x (2.00-4.00) | n/a |")
    assert "| 2.50x (2.00-3.00) | n/a |" in versus
