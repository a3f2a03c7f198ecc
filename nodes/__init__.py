"""sift.nodes: the steps of an episode, pure over the protocols of `sift.protocols`.

`sift.graphs` wires them into a LangGraph state machine; nothing here knows LangGraph, a
store, or a model server. One turn is: `policy_step` (ask the policy, check its calls),
`run_call` / `resolve_prune` for each call (concurrently), `collect` (observations in
call order, budget tiers, usage marker), and at the end `finalize` (the SearchResult).
"""

from __future__ import annotations

from sift.nodes._budget import chunk_values, force_prune
from sift.nodes._context import Episode
from sift.nodes._finalize import fallback_ranking, finalize
from sift.nodes._rerank import TermOverlapReranker
from sift.nodes._steps import Emit, collect, policy_step
from sift.nodes._tokens import EstimateTokenCounter
from sift.nodes._tools import IO_TOOLS, PlannedCall, ToolOutcome, resolve_prune, run_call

__all__ = [
    "IO_TOOLS",
    "Emit",
    "Episode",
    "EstimateTokenCounter",
    "PlannedCall",
    "TermOverlapReranker",
    "ToolOutcome",
    "chunk_values",
    "collect",
    "fallback_ranking",
    "finalize",
    "force_prune",
    "policy_step",
    "resolve_prune",
    "run_call",
]
