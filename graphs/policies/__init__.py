"""Policies: who chooses the tool calls (DESIGN "Policies").

`HeuristicPlanner` is the no-model default (its settings: `HeuristicPlannerConfig`, env
`SIFT_PLANNER_<FIELD>`); `AssistedPlanner` is the same planner asking a small model short
constrained questions (issue 45); `ScriptedPolicy` replays a script (tests).
"""

from __future__ import annotations

from sift.graphs.policies._planner_config import HeuristicPlannerConfig
from sift.graphs.policies.assisted import AskRecord, AssistedPlanner, ConstrainedAsk
from sift.graphs.policies.heuristic import HeuristicPlanner
from sift.graphs.policies.scripted import ScriptedPolicy, ScriptedTurn

__all__ = [
    "AskRecord",
    "AssistedPlanner",
    "ConstrainedAsk",
    "HeuristicPlanner",
    "HeuristicPlannerConfig",
    "ScriptedPolicy",
    "ScriptedTurn",
]
