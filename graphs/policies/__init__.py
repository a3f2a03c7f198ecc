"""Policies: who chooses the tool calls (DESIGN "Policies").

`ScriptedPolicy` replays a script (tests). `HeuristicPlanner`, the no-model default, and
its `HeuristicPlannerConfig` are imported on first use.
"""

from __future__ import annotations

from typing import Any

from sift.graphs.policies.scripted import ScriptedPolicy, ScriptedTurn

__all__ = ["HeuristicPlanner", "HeuristicPlannerConfig", "ScriptedPolicy", "ScriptedTurn"]


def __getattr__(name: str) -> Any:
    if name in ("HeuristicPlanner", "HeuristicPlannerConfig"):
        from sift.graphs.policies import heuristic

        return getattr(heuristic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
