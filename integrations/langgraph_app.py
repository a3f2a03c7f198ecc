"""The sift graph as a LangGraph server serves it: the factory `langgraph.json` names.

    langgraph dev --no-browser          # in the repository root; SIFT_STORE names the store

`make_graph` opens sift's default store (`SIFT_STORE`: a path or a `weaviate://` URL,
else `~/.sift/store`), once per process and off the event loop, and refuses a location
that holds no store rather than serving an empty one. The policy is the heuristic
planner unless `SIFT_GRAPH_POLICY=ollama` (then `SIFT_OLLAMA_MODEL`, `OLLAMA_HOST`, ...
as for `sift search --policy ollama`). Runs take the graph's usual input (`question`,
`filters`, `top_k`, `max_turns`) and `HarnessConfig` fields as context or `configurable`;
the server's checkpointer keeps each thread's episode. checks/langgraph_dev.py checks
all of it against a real `langgraph dev`.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from sift import open_store
from sift.graphs import build_graph
from sift.paths import default_store_location

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from sift.config import HarnessConfig
    from sift.nodes import EpisodeInput, EpisodeOutput, EpisodeState
    from sift.protocols import Policy

    ServedGraph = CompiledStateGraph[EpisodeState, HarnessConfig, EpisodeInput, EpisodeOutput]

__all__ = ["ServedGraphSettings", "build_served_graph", "make_graph"]


class ServedGraphSettings(BaseSettings):
    """The served graph's policy (env `SIFT_GRAPH_<FIELD>`); its store is sift's default
    (`SIFT_STORE`)."""

    model_config = SettingsConfigDict(
        env_prefix="SIFT_GRAPH_", env_ignore_empty=True, extra="ignore", frozen=True
    )

    policy: Literal["heuristic", "ollama"] = Field(
        "heuristic",
        description="heuristic (the no-model planner) or ollama (SIFT_OLLAMA_* settings).",
    )


def _policy(settings: ServedGraphSettings) -> Policy | None:
    if settings.policy == "heuristic":
        return None  # build_graph's default: the planner
    from sift.integrations.ollama import policy_from_settings

    return policy_from_settings()


def build_served_graph(
    settings: ServedGraphSettings | None = None, store: str | None = None
) -> ServedGraph:
    """The served graph over `store` (default: sift's default store), built now (blocking:
    it opens the store)."""
    chosen = settings if settings is not None else ServedGraphSettings()
    corpus = open_store(store, create=False)
    return build_graph(corpus, _policy(chosen))


_served: dict[tuple[ServedGraphSettings, str], ServedGraph] = {}
_lock = threading.Lock()


def _served_graph(settings: ServedGraphSettings) -> ServedGraph:
    key = (settings, default_store_location())
    with _lock:
        if key not in _served:
            _served[key] = build_served_graph(settings, key[1])
        return _served[key]


async def make_graph() -> ServedGraph:
    """The factory of `langgraph.json`: the served graph, built on first use.

    A LangGraph server calls it for every run and every schema read, inside its event
    loop (where `langgraph dev` refuses blocking calls): the store is opened once, on a
    worker thread, and the compiled graph reused; runs share nothing else.
    """
    return await asyncio.to_thread(_served_graph, ServedGraphSettings())
