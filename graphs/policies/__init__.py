"""Policies: who chooses the tool calls (DESIGN "Policies").

`HeuristicPlanner` is the no-model default (its settings: `HeuristicPlannerConfig`, env
`SIFT_PLANNER_<FIELD>`); `ScriptedPolicy` replays a script (tests).
"""

from __future__ import annotations

from sift.graphs.policies._planner_config import HeuristicPlannerConfig
from sift.graphs.policies.heuristic import HeuristicPlanner
from sift.graphs.policies.scripted import ScriptedPolicy, ScriptedTurn

__all__ = ["HeuristicPlanner", "HeuristicPlannerConfig", "ScriptedPolicy", "ScriptedTurn"]
