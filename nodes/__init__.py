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

# What other packages use: the node functions, the graph's state schemas, the services
# and defaults `sift.graphs` binds, and the question check the MCP server shares. The
# episode's internals stay in their modules (the package's own tests import them there).
from sift.nodes._budget import budget
from sift.nodes._finalize import finalize
from sift.nodes._policy import policy
from sift.nodes._rerank import TermOverlapReranker
from sift.nodes._services import Services
from sift.nodes._start import check_question, start
from sift.nodes._state import EpisodeInput, EpisodeOutput, EpisodeState, ToolOutcome, ToolTask
from sift.nodes._tokens import EstimateTokenCounter
from sift.nodes._tools import grep_corpus, prune_chunks, read_document, search_corpus

__all__ = [
    "NODES",
    "EpisodeInput",
    "EpisodeOutput",
    "EpisodeState",
    "EstimateTokenCounter",
    "Services",
    "TermOverlapReranker",
    "ToolOutcome",
    "ToolTask",
    "budget",
    "check_question",
    "finalize",
    "grep_corpus",
    "policy",
    "prune_chunks",
    "read_document",
    "search_corpus",
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
