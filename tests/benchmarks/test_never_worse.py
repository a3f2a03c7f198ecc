"""benchmarks/never_worse.py's per-kind table: each set's questions split by the kind the
set labels them with, single-shot beside agentic in every cell, halves apart."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "never_worse.py"


@pytest.fixture(scope="module")
def never_worse() -> ModuleType:
    return load_script(SCRIPT, "never_worse_under_test")


def test_kind_is_hops_for_musique_and_the_type_elsewhere(never_worse: ModuleType) -> None:
    assert never_worse.kind_of({"num_hops": 3, "type": "3hop1"}) == "3 hops"
    assert never_worse.kind_of({"type": "bridge_comparison"}) == "bridge_comparison"
    # JSQuAD's and most HotpotQA questions carry no type: one kind, not a skipped one.
    assert never_worse.kind_of({"type": None, "question": "東京タワーの高さは?"}) == "-"


def _outcome(first: int | None, all_gold: bool) -> dict[str, Any]:
    return {"first_gold_rank": first, "all_gold10": all_gold}


def test_kind_table_scores_each_system_per_set_kind_and_half(never_worse: ModuleType) -> None:
    records = [
        # Two 2-hop tune questions: single-shot finds the gold first once; agentic finds
        # both golds of both, and the gold first once.
        {
            "dataset": "musique",
            "kind": "2 hops",
            "part": "tune",
            "single_shot": _outcome(1, False),
            "agentic": _outcome(2, True),
        },
        {
            "dataset": "musique",
            "kind": "2 hops",
            "part": "tune",
            "single_shot": _outcome(12, False),
            "agentic": _outcome(1, True),
        },
        # A held JSQuAD question agentic loses past rank 10.
        {
            "dataset": "jsquad",
            "kind": "-",
            "part": "held",
            "single_shot": _outcome(9, True),
            "agentic": _outcome(None, False),
        },
    ]
    lines = never_worse.kind_table(records)
    assert lines[0].startswith("| set | kind | half | n |")
    rows = {tuple(c.strip() for c in line.strip("|").split("|")[:3]): line for line in lines[2:]}
    assert set(rows) == {("musique", "2 hops", "tune"), ("jsquad", "-", "held")}
    cells = [c.strip() for c in rows[("musique", "2 hops", "tune")].strip("|").split("|")]
    assert cells[3:] == ["2", "0.500 / 0.500", "0.500 / 1.000", "0.000 / 1.000"]
    cells = [c.strip() for c in rows[("jsquad", "-", "held")].strip("|").split("|")]
    assert cells[3:] == ["1", "0.000 / 0.000", "1.000 / 0.000", "1.000 / 0.000"]
