"""The harness's progress events: their names and what each carries.

The nodes emit them (LangGraph's custom stream writer, and `on_event`); the CLI, the MCP
server, the HTTP stream and the trace viewer read them. Every event is a plain dict whose
"event" key names its kind; with several rollouts each also carries "rollout" (its index).
Typed here once, so an emitter and a reader cannot disagree on a name or a field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypedDict, get_args

__all__ = [
    "EVENT_NAMES",
    "ChunksAdded",
    "ChunksPruned",
    "EventName",
    "Finished",
    "OnEvent",
    "ProgressEvent",
    "TokenUsage",
    "ToolCallEvent",
    "TurnStarted",
]

EventName = Literal[
    "sift.turn_started",
    "sift.tool_call",
    "sift.chunks_added",
    "sift.chunks_pruned",
    "sift.token_usage",
    "sift.finished",
]
# In the order an episode emits them first.
EVENT_NAMES: tuple[EventName, ...] = get_args(EventName)


class _Rollout(TypedDict, total=False):
    # With several rollouts, `on_event` gets each event with its rollout's index. (A base
    # of its own: NotRequired is not seen in postponed annotations before Python 3.12.)
    rollout: int


class TurnStarted(_Rollout):
    event: Literal["sift.turn_started"]
    turn: int  # 1-based
    tokens: int  # context tokens before the policy decides


class ToolCallEvent(_Rollout):
    event: Literal["sift.tool_call"]
    turn: int
    index: int  # position in the turn
    tool: str
    arguments: dict[str, Any]
    batch_id: str | None
    error: str | None  # the error observation when the call was refused


class ChunksAdded(_Rollout):
    event: Literal["sift.chunks_added"]
    turn: int
    tool: str
    argument: str
    chunk_ids: list[str]  # newly surfaced, in rank order


class ChunksPruned(_Rollout):
    event: Literal["sift.chunks_pruned"]
    turn: int
    chunk_ids: list[str]
    by: Literal["policy", "harness"]


class TokenUsage(_Rollout):
    event: Literal["sift.token_usage"]
    turn: int
    used: int
    threshold: int
    rejection: int
    budget: int
    tier: Literal["ok", "over_threshold", "rejecting"]


class Finished(_Rollout):
    event: Literal["sift.finished"]
    stopped_because: str
    turns: int
    evidence: int  # number of items
    error: str | None


ProgressEvent = TurnStarted | ToolCallEvent | ChunksAdded | ChunksPruned | TokenUsage | Finished
# What receives them: `asearch(on_event=...)`, the CLI's progress, the MCP and SSE relays.
OnEvent = Callable[[ProgressEvent], None]
