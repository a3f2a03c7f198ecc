"""HarnessConfig from the environment, built once per environment and shared."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sift.config import HarnessConfig, from_environment
from sift.graphs.policies import HeuristicPlanner, HeuristicPlannerConfig


def test_settings_follow_the_environment_and_are_shared_while_it_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SIFT_MAX_TURNS", raising=False)
    first = from_environment(HarnessConfig)
    assert first == HarnessConfig()
    assert from_environment(HarnessConfig) is first  # built once, shared (frozen)
    monkeypatch.setenv("SIFT_MAX_TURNS", "3")
    assert from_environment(HarnessConfig).max_turns == 3
    # Names are matched without regard to case, as pydantic-settings reads them.
    monkeypatch.delenv("SIFT_MAX_TURNS")
    monkeypatch.setenv("sift_max_turns", "4")
    assert from_environment(HarnessConfig).max_turns == 4
    monkeypatch.delenv("sift_max_turns")
    assert from_environment(HarnessConfig) == first
    # A bad value is refused every time, never cached.
    monkeypatch.setenv("SIFT_MAX_TURNS", "zero")
    for _ in range(2):
        with pytest.raises(ValidationError, match="max_turns"):
            from_environment(HarnessConfig)


def test_the_planner_reads_its_settings_from_the_environment_of_the_moment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SIFT_PLANNER_MAX_ANCHORS", "2")
    assert HeuristicPlanner().config.max_anchors == 2
    monkeypatch.setenv("SIFT_PLANNER_MAX_ANCHORS", "5")
    assert HeuristicPlanner().config.max_anchors == 5
    assert HeuristicPlanner().config is from_environment(HeuristicPlannerConfig)
