"""Assembly of the sift graph: the nodes of `sift.nodes` wired into a LangGraph StateGraph.

    start -> policy -(Send per call)-> search_corpus | grep_corpus | read_document
                                       | prune_chunks -> budget -> policy ... -> finalize

The calls of one turn are sent to their tool nodes in one superstep, so they run
concurrently (the store calls in worker threads); `budget` runs once they have all
returned and joins their results in the order of the calls.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from sift.config import HarnessConfig
from sift.errors import InvalidQueryError
from sift.filters import Filter
from sift.graphs.state import EpisodeInput, EpisodeOutput, EpisodeState, ToolTask
from sift.llm import task_prompt
from sift.nodes import (
    Emit,
    Episode,
    EstimateTokenCounter,
    TermOverlapReranker,
    collect,
    finalize,
    policy_step,
    resolve_prune,
    run_call,
)

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from sift.protocols import Corpus, Policy, Reranker, TokenCounter

__all__ = ["build_graph", "check_question", "default_policy", "new_episode"]

TOOL_NODES = ("search_corpus", "grep_corpus", "read_document", "prune_chunks")


def check_question(question: object, limit: int) -> str:
    """The question, stripped; empty, non-text or over-long questions are clear errors."""
    if not isinstance(question, str) or not question.strip():
        raise InvalidQueryError("the question is empty")
    text = question.strip()
    if len(text) > limit:
        raise InvalidQueryError(
            f"the question is {len(text):,} characters long; the limit is {limit:,} "
            "(HarnessConfig.max_question_chars, env SIFT_MAX_QUESTION_CHARS)"
        )
    return text


def default_policy() -> Policy:
    """The heuristic planner (no model), sift's default policy."""
    try:
        from sift.graphs.policies.heuristic import HeuristicPlanner
    except ImportError as exc:  # pragma: no cover - only while the planner is being written
        raise ImportError(
            "the default policy (sift.graphs.policies.heuristic.HeuristicPlanner) is not "
            "available; pass a policy explicitly, e.g. ScriptedPolicy"
        ) from exc
    return HeuristicPlanner()


def _writer() -> Emit:
    try:
        return get_stream_writer()
    except Exception:  # outside a graph run (a node called directly): events go nowhere
        return lambda _event: None


def new_episode(
    question: Any,
    settings: HarnessConfig,
    counter: TokenCounter,
    *,
    filters: Any = None,
    top_k: int | None = None,
    max_turns: int | None = None,
) -> Episode:
    """A fresh episode whose context holds the task message."""
    question = check_question(question, settings.max_question_chars)
    top_k = top_k or settings.top_k
    episode = Episode(
        question=question,
        limits=settings,
        filters=Filter.of(filters),
        top_k=top_k,
        max_turns=max_turns or settings.max_turns,
        deadline=(time.monotonic() + settings.deadline_s) if settings.deadline_s else None,
    )
    episode.add_entry("user", [task_prompt(episode.question, top_k)], counter)
    episode.note_peak()
    return episode


def build_graph(
    corpus: Corpus,
    policy: Policy | None = None,
    *,
    config: HarnessConfig | None = None,
    reranker: Reranker | None = None,
    token_counter: TokenCounter | None = None,
) -> CompiledStateGraph:
    """The compiled sift graph over `corpus`, driven by `policy` (default: the heuristic
    planner). Input: `EpisodeInput`; output: `EpisodeOutput`. Limits come from `config`,
    overridable per run through `configurable`."""
    base = config if config is not None else HarnessConfig()
    chosen = policy if policy is not None else default_policy()
    rank = reranker if reranker is not None else TermOverlapReranker()
    counter = token_counter if token_counter is not None else EstimateTokenCounter()

    async def start(state: EpisodeInput, config: RunnableConfig) -> dict[str, Any]:
        settings = base.merged((config or {}).get("configurable"))
        episode = new_episode(
            state.get("question"),
            settings,
            counter,
            filters=state.get("filters"),
            top_k=state.get("top_k"),
            max_turns=state.get("max_turns"),
        )
        limit = (config or {}).get("recursion_limit")
        needed = 3 * episode.max_turns + 10
        if isinstance(limit, int) and limit < needed:
            raise ValueError(
                f"max_turns={episode.max_turns} needs a LangGraph recursion_limit of at least "
                f"{needed}, but this run has {limit}: raise HarnessConfig.recursion_limit "
                "(env SIFT_RECURSION_LIMIT) or pass recursion_limit in the run's config"
            )
        return {"episode": episode, "outcomes": None, "planned": []}

    async def policy(state: EpisodeState) -> dict[str, Any]:
        episode = state["episode"]
        planned = await policy_step(episode, chosen, counter, _writer())
        return {"episode": episode, "planned": planned}

    # Routers are coroutines: LangGraph would run plain functions in a worker thread,
    # a thread hop per turn that costs milliseconds on a busy machine.
    async def dispatch(state: EpisodeState) -> list[Send] | str:
        episode = state["episode"]
        if episode.stopped is not None:
            return "finalize"
        planned = state.get("planned") or []
        if not planned:
            return "policy"  # the policy's reply failed; it gets another turn
        sends = [
            Send(p.call.name, ToolTask(episode=episode, planned=p))
            for p in planned
            if p.error is None
        ]
        return sends or "budget"

    async def io_tool(task: ToolTask) -> dict[str, Any]:
        episode = task["episode"]
        outcome = await run_call(task["planned"], episode, corpus, episode.time_left())
        return {"outcomes": {outcome.index: outcome}}

    async def prune_chunks(task: ToolTask) -> dict[str, Any]:
        outcome = resolve_prune(task["planned"], task["episode"])
        return {"outcomes": {outcome.index: outcome}}

    async def budget(state: EpisodeState) -> dict[str, Any]:
        episode = state["episode"]
        collect(
            episode,
            state.get("planned") or [],
            state.get("outcomes") or {},
            counter,
            rank,
            _writer(),
        )
        return {"episode": episode, "outcomes": None, "planned": []}

    async def after_budget(state: EpisodeState) -> str:
        return "finalize" if state["episode"].stopped is not None else "policy"

    async def finish(state: EpisodeState) -> dict[str, Any]:
        episode = state["episode"]
        result = finalize(episode, rank)
        _writer()(
            {
                "event": "sift.finished",
                "stopped_because": result.stopped_because,
                "turns": result.usage.turns,
                "evidence": len(result.evidence),
                "error": result.error,
            }
        )
        return {
            "evidence": result.evidence,
            "usage": result.usage,
            "stopped_because": result.stopped_because,
            "error": result.error,
            "trace": result.trace,
            "result": result,
        }

    graph = StateGraph(EpisodeState, input_schema=EpisodeInput, output_schema=EpisodeOutput)
    graph.add_node("start", start)
    graph.add_node("policy", policy)
    graph.add_node("search_corpus", io_tool)
    graph.add_node("grep_corpus", io_tool)
    graph.add_node("read_document", io_tool)
    graph.add_node("prune_chunks", prune_chunks)
    graph.add_node("budget", budget)
    graph.add_node("finalize", finish)
    graph.add_edge(START, "start")
    graph.add_edge("start", "policy")
    graph.add_conditional_edges("policy", dispatch, [*TOOL_NODES, "budget", "policy", "finalize"])
    for name in TOOL_NODES:
        graph.add_edge(name, "budget")
    graph.add_conditional_edges("budget", after_budget, ["policy", "finalize"])
    graph.add_edge("finalize", END)
    compiled = graph.compile(name="sift")
    return compiled.with_config(recursion_limit=base.effective_recursion_limit)
