"""ScriptedPolicy: replays a fixed list of turns, for tests (DESIGN "Policies")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sift.types import Decision, PolicyView, ToolCall

__all__ = ["ScriptedPolicy", "ScriptedTurn"]

# One turn of a script: a Decision; a list of tool calls (ToolCall or {"name", "arguments"}
# dicts); a dict of Decision fields; or a function of the view returning any of these.
ScriptedTurn = (
    Decision
    | Sequence[ToolCall | Mapping[str, Any]]
    | Mapping[str, Any]
    | Callable[[PolicyView], Any]
)


def _as_decision(turn: Any, view: PolicyView) -> Decision:
    if callable(turn) and not isinstance(turn, Decision | Mapping):
        return _as_decision(turn(view), view)
    if isinstance(turn, Decision):
        return turn
    if isinstance(turn, Mapping):
        return Decision.model_validate(dict(turn))
    if isinstance(turn, Sequence) and not isinstance(turn, str):
        return Decision(
            tool_calls=[
                c if isinstance(c, ToolCall) else ToolCall.model_validate(dict(c)) for c in turn
            ]
        )
    raise TypeError(
        f"a scripted turn must be a Decision, a list of tool calls, a dict of Decision fields "
        f"or a function of the view; got {type(turn).__name__}"
    )


class ScriptedPolicy:
    """Answers turn n (1-based, `view.turn`) with the script's n-th entry; past the end of
    the script it concludes without a final list.

    It keeps no cursor, so one instance may drive concurrent episodes; every view it was
    shown is recorded in `views` (for tests to inspect the rendered context).
    """

    def __init__(self, turns: Sequence[ScriptedTurn] = (), *, record: bool = True) -> None:
        self.turns = list(turns)
        self.record = record
        self.views: list[PolicyView] = []

    async def decide(self, view: PolicyView) -> Decision:
        if self.record:
            self.views.append(view.model_copy(update={"messages": list(view.messages)}))
        index = view.turn - 1
        if index >= len(self.turns):
            return Decision()
        return _as_decision(self.turns[index], view)

    def fork(self, seed: int) -> ScriptedPolicy:
        """An independent copy for one rollout (a script has no randomness to seed)."""
        return ScriptedPolicy(self.turns, record=self.record)
