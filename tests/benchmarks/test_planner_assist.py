"""benchmarks/planner_assist.py's choosers that read the gold labels: the oracle, and the
judge of a given recall and false rate the sweep (`--judges`) runs in a model's place."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from ..conftest import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "planner_assist.py"

# Which of 20 shown passages are gold: two in the top 10, one below it.
GOLD = [i in (1, 6, 14) for i in range(20)]


@pytest.fixture(scope="module")
def assist() -> ModuleType:
    return load_script(SCRIPT, "planner_assist_under_test")


def test_oracle_picks_the_gold_numbers(assist: ModuleType) -> None:
    oracle = assist.OracleAsk(["東京"], {"doc"})
    assert oracle.pick(GOLD) == [2, 7, 15]


def test_a_perfect_judge_is_the_oracle_and_a_blind_one_picks_nothing(
    assist: ModuleType,
) -> None:
    perfect = assist.JudgeAsk(["Tokyo"], {"doc"}, 1.0, 0.0, "q1/perfect")
    assert perfect.pick(GOLD) == [2, 7, 15]
    blind = assist.JudgeAsk(["Tokyo"], {"doc"}, 0.0, 0.0, "q1/blind")
    assert blind.pick(GOLD) == []


def test_a_judge_that_picks_everything_stops_at_four_in_the_order_shown(
    assist: ModuleType,
) -> None:
    every = assist.JudgeAsk(["Tokyo"], {"doc"}, 1.0, 1.0, "q1/every")
    assert every.pick(GOLD) == [1, 2, 3, 4]


def test_a_noisy_judge_is_the_same_for_the_same_seed_and_misses_at_its_rates(
    assist: ModuleType,
) -> None:
    def draws(seed: str) -> list[list[int]]:
        judge = assist.JudgeAsk(["Tokyo"], {"doc"}, 0.5, 0.05, seed)
        return [judge.pick(GOLD) for _ in range(400)]

    first = draws("q1/noisy")
    assert first == draws("q1/noisy")
    assert first != draws("q2/noisy")
    golds = sum(n in (2, 7, 15) for picks in first for n in picks)
    others = sum(n not in (2, 7, 15) for picks in first for n in picks)
    # 1,200 gold chances at 0.5 (600 expected); 6,800 others at 0.05 (340, a few fewer
    # where four picks came first); each bound about five standard deviations out.
    assert 500 < golds < 700
    assert 250 < others < 430


def test_judges_are_read_as_recall_and_false_rate(assist: ModuleType) -> None:
    assert assist._judge("0.8:0.02") == (0.8, 0.02)
    for bad in ("1.5:0", "0.8", "0.8:0.1:0", "高い:0"):
        with pytest.raises(SystemExit, match="RECALL:FALSE_RATE"):
            assist._judge(bad)
