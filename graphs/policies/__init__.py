"""Policies: who chooses the tool calls (DESIGN "Policies").

`ScriptedPolicy` replays a script (tests). `HeuristicPlanner`, the no-model default, is
imported on first use.
"""

from __future__ import annotations

from typing import Any

from sift.graphs.policies.scripted import ScriptedPolicy, ScriptedTurn

__all__ = ["HeuristicPlanner", "ScriptedPolicy", "ScriptedTurn"]


def __getattr__(name: str) -> Any:
    if name == "HeuristicPlanner":
        from sift.graphs.policies.heuristic import HeuristicPlanner

        return HeuristicPlanner
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
