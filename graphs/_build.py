"""Assembly of the sift graph: the node functions of `sift.nodes` wired into a LangGraph
StateGraph, with the graph's services bound to them. No episode logic lives here.

    start -> policy -(Send per call)-> search_corpus | grep_corpus | read_document
                                       | prune_chunks -> budget -> policy ... -> finalize
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import get_runtime

from sift import nodes
from sift.config import HarnessConfig, from_environment
from sift.graphs._sync import run_sync
from sift.nodes import (
    EpisodeInput,
    EpisodeOutput,
    EpisodeState,
    EstimateTokenCounter,
    Services,
    TermOverlapReranker,
)

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Checkpointer

    from sift.protocols import Corpus, Policy, Reranker, TokenCounter

__all__ = ["build_graph", "default_policy"]

NodeFunction = Callable[..., Any]


def default_policy() -> Policy:
    """The heuristic planner (no model), sift's default policy."""
    from sift.graphs.policies import HeuristicPlanner

    return HeuristicPlanner()


class _BoundNode(Runnable[Any, Any]):
    """A node function with the graph's services bound, runnable both ways: sync runs
    (`invoke`, `stream`, a sync parent graph) and async runs (`ainvoke`, `astream`).

    A coroutine node runs on its own event loop when the graph is driven synchronously;
    a plain node runs inline when it is driven asynchronously (no worker-thread hop).
    The typed runtime comes from LangGraph (`get_runtime`), as it would for a function.
    """

    def __init__(self, function: NodeFunction, services: Services) -> None:
        self.function = function
        self.services = services
        self.name = function.__name__

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        result = self.function(input, get_runtime(HarnessConfig), services=self.services)
        return run_sync(result) if inspect.iscoroutine(result) else result

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        result = self.function(input, get_runtime(HarnessConfig), services=self.services)
        return await result if inspect.isawaitable(result) else result


def destinations(function: NodeFunction) -> tuple[str, ...]:
    """The nodes a routing node may go to, read from its `Command[Literal[...]]` return."""
    returned = typing.get_type_hints(function)["return"]
    (route,) = typing.get_args(returned)
    return typing.get_args(route)


def build_graph(
    corpus: Corpus,
    policy: Policy | None = None,
    *,
    config: HarnessConfig | None = None,
    reranker: Reranker | None = None,
    token_counter: TokenCounter | None = None,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph[EpisodeState, HarnessConfig, EpisodeInput, EpisodeOutput]:
    """The compiled sift graph over `corpus`, driven by `policy` (default: the heuristic
    planner). Input: `EpisodeInput`; output: `EpisodeOutput`; context: `HarnessConfig`.

    `config` is the graph's default settings; a run may bring its own as LangGraph's
    context (`graph.invoke(input, context=HarnessConfig(...))`), as `configurable`, or as
    the input keys `max_turns` and `top_k`. `checkpointer` makes episodes resumable when
    the graph runs on its own (as a subgraph it uses its parent's).
    """
    settings = config if config is not None else from_environment(HarnessConfig)
    services = Services(
        corpus=corpus,
        policy=policy if policy is not None else default_policy(),
        reranker=reranker
        if reranker is not None
        else TermOverlapReranker(k1=settings.rerank_k1, b=settings.rerank_b),
        counter=token_counter if token_counter is not None else EstimateTokenCounter(),
        config=settings,
    )
    graph = StateGraph(
        EpisodeState,
        context_schema=HarnessConfig,
        input_schema=EpisodeInput,
        output_schema=EpisodeOutput,
    )
    routing = {nodes.policy, nodes.budget}
    for function in nodes.NODES:
        graph.add_node(
            function.__name__,
            _BoundNode(function, services),
            destinations=destinations(function) if function in routing else None,
        )
    graph.add_edge(START, nodes.start.__name__)
    graph.add_edge(nodes.start.__name__, nodes.policy.__name__)
    for tool in (nodes.search_corpus, nodes.grep_corpus, nodes.read_document, nodes.prune_chunks):
        graph.add_edge(tool.__name__, nodes.budget.__name__)
    graph.add_edge(nodes.finalize.__name__, END)
    compiled = graph.compile(name="sift", checkpointer=checkpointer)
    return compiled.with_config(recursion_limit=settings.effective_recursion_limit)
