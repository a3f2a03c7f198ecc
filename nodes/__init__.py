"""sift.nodes: the graph's nodes, each a named LangGraph node function, pure over the
protocols of `sift.protocols`.

    start ─► policy ─┬─► search_corpus ─┐
                     ├─► grep_corpus   ─┤
                     ├─► read_document ─┼─► budget ─┬─► policy (next turn)
                     └─► prune_chunks  ─┘           └─► finalize

Every node takes the state (a tool node: its `Send` payload, a `ToolTask`), LangGraph's
typed runtime (`Runtime[HarnessConfig]`: the run's context and stream writer) and, as a
keyword, the graph's `Services` (corpus, policy, reranker, token counter, store pool),
which `sift.graphs` binds when it builds the graph. `policy` and `budget` route with
typed `Command[Literal[...]]` returns. Nothing here imports a store or a model server.
"""

from __future__ import annotations

from sift.nodes._budget import budget, chunk_values, force_prune
from sift.nodes._episode import Block, Entry, Episode, PlannedCall
from sift.nodes._finalize import fallback_ranking, finalize, search_result
from sift.nodes._policy import policy
from sift.nodes._rerank import TermOverlapReranker
from sift.nodes._services import Services
from sift.nodes._start import check_question, new_episode, run_settings, start
from sift.nodes._state import (
    EpisodeChannel,
    EpisodeInput,
    EpisodeOutput,
    EpisodeState,
    OutcomesChannel,
    ToolOutcome,
    ToolTask,
    merge_outcomes,
)
from sift.nodes._tokens import EstimateTokenCounter
from sift.nodes._tools import grep_corpus, prune_chunks, read_document, search_corpus

__all__ = [
    "NODES",
    "Block",
    "Entry",
    "Episode",
    "EpisodeChannel",
    "EpisodeInput",
    "EpisodeOutput",
    "EpisodeState",
    "EstimateTokenCounter",
    "OutcomesChannel",
    "PlannedCall",
    "Services",
    "TermOverlapReranker",
    "ToolOutcome",
    "ToolTask",
    "budget",
    "check_question",
    "chunk_values",
    "fallback_ranking",
    "finalize",
    "force_prune",
    "grep_corpus",
    "merge_outcomes",
    "new_episode",
    "policy",
    "prune_chunks",
    "read_document",
    "run_settings",
    "search_corpus",
    "search_result",
    "start",
]

# The nodes in the order a turn meets them; each is registered under its own name.
NODES = (
    start,
    policy,
    search_corpus,
    grep_corpus,
    read_document,
    prune_chunks,
    budget,
    finalize,
)
