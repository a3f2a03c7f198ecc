"""sift.graphs: the Context-1 search harness as a LangGraph state machine.

Public API
----------
- `HarnessConfig` (defined in `sift.config`): every limit (env `SIFT_<FIELD>`); per run
  as LangGraph's typed context (`graph.invoke(input, context=HarnessConfig(...))`), as
  `configurable` (compatibility), or as the input keys `max_turns` and `top_k`.
- `build_graph(corpus, policy=None, *, config=None, reranker=None, token_counter=None,
  checkpointer=None)`: the compiled graph, run sync or async. Input `{"question",
  "filters"?, "top_k"?, "max_turns"?}`; output `{"evidence", "usage", "stopped_because",
  "error", "trace", "result"}` (`result` is the whole `SearchResult`); context
  `HarnessConfig`. It composes as a node of a parent graph (sync or async), and a
  checkpointer can interrupt and resume an episode.
- `asearch(question, corpus, *, policy=None, config=None, filters=None, top_k=None,
  rollouts=1, on_event=None)` and its synchronous twin `search(...)`: a `SearchResult`.
- `single_shot(question, corpus, *, config=None, top_k=None, mode=None, filters=None)`:
  the one-search baseline, a `SearchResult` with mode "single_shot"; like `asearch` it
  takes the run's `HarnessConfig` (`top_k`, `search_mode`, `single_shot_graph_weight`).
- `merge_rollouts(question, results, *, rrf_k=None, top_k=None)`: reciprocal rank
  fusion (None: `HarnessConfig`'s `rrf_k` and `top_k`).
- `HeuristicPlanner` (the default policy) and `HeuristicPlannerConfig` (its settings,
  env `SIFT_PLANNER_<FIELD>`); `ScriptedPolicy` (tests).

Progress events
---------------
Emitted with LangGraph's custom stream writer (`stream_mode="custom"`; they reach a parent
graph streamed with `subgraphs=True`) and passed to `on_event`. Every event is a dict
whose "event" key is one of (typed in `sift.progress`: `EventName` and a TypedDict each):

- "sift.turn_started": turn (1-based), tokens (context tokens before the policy decides)
- "sift.tool_call": turn, index (position in the turn), tool, arguments, batch_id,
  error (the error observation when the call was refused, else None)
- "sift.chunks_added": turn, tool, argument, chunk_ids (newly surfaced, in rank order)
- "sift.chunks_pruned": turn, chunk_ids, by ("policy" or "harness")
- "sift.token_usage": turn, used, threshold, rejection, budget,
  tier ("ok" | "over_threshold" | "rejecting")
- "sift.finished": stopped_because, turns, evidence (number of items), error
With several rollouts, `on_event` also gets "rollout" (its index) on every event.

In `SearchResult.trace`, chunks the harness pruned itself to keep the budget appear as a
call `{"tool": "prune_chunks", "arguments": {"by": "harness"}, "pruned": [...]}`; a
turn without tool calls (the policy concluded, failed or ran out of time) has a `note`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sift.config import HarnessConfig
from sift.progress import EVENT_NAMES

if TYPE_CHECKING:
    from sift.graphs._api import asearch, search
    from sift.graphs._build import build_graph
    from sift.graphs._single_shot import single_shot
    from sift.graphs.policies import HeuristicPlanner, HeuristicPlannerConfig, ScriptedPolicy
    from sift.graphs.rollouts import merge_rollouts

__all__ = [
    "EVENT_NAMES",
    "HarnessConfig",
    "HeuristicPlanner",
    "HeuristicPlannerConfig",
    "ScriptedPolicy",
    "asearch",
    "build_graph",
    "merge_rollouts",
    "search",
    "single_shot",
]

# Each name is imported on first use: LangGraph takes about a second to import, and
# `single_shot` or the planner's settings do not need it (a one-shot CLI search).
_LAZY = {
    "asearch": "sift.graphs._api",
    "search": "sift.graphs._api",
    "build_graph": "sift.graphs._build",
    "single_shot": "sift.graphs._single_shot",
    "HeuristicPlanner": "sift.graphs.policies",
    "HeuristicPlannerConfig": "sift.graphs.policies",
    "ScriptedPolicy": "sift.graphs.policies",
    "merge_rollouts": "sift.graphs.rollouts",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sift.graphs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
