"""Defects of issue 13, each pinned by a test that failed before its fix."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sift.graphs import HarnessConfig, ScriptedPolicy
from sift.types import ToolCall

from .conftest import WAITED_DEADLINE_S, call


async def test_a_recorded_view_keeps_showing_what_the_episode_knew_then(corpus, run):
    turns = [
        [call("search_corpus", query="Vesuvius")],
        lambda view: [call("prune_chunks", chunk_ids=sorted(view.seen)[:1])],
        [call("search_corpus", query="Etna Fuji")],
    ]
    result, policy, _ = await run(corpus, turns, search_max_chunks=3)
    first, second, fourth = policy.views[0], policy.views[1], policy.views[3]
    assert first.seen == {}  # chunks found later never show up in an earlier view
    assert len(second.seen) == 3 and not any(s.pruned for s in second.seen.values())
    pruned = sorted(second.seen)[0]
    assert fourth.seen[pruned].pruned and len(fourth.seen) == 6
    assert result.stopped_because == "final"


async def test_an_unreadable_batch_is_answered_and_its_siblings_still_run(corpus, run):
    unreadable = ToolCall(name="multi_tool_use", arguments={"tool_calls": "search a, then b"})
    turns = [
        [call("search_corpus", query="Vesuvius"), unreadable, call("grep_corpus", pattern="Etna")]
    ]
    result, policy, _ = await run(corpus, turns)
    search, batch, grep = result.trace[0].calls
    assert search.added and grep.added
    assert batch.error.startswith('Error: multi_tool_use needs {"tool_calls": [{"name": <tool>,')
    tools = [m.content for m in policy.views[1].messages if m.role == "tool"]
    assert tools[1].startswith("Error: multi_tool_use needs") and "search a, then b" in tools[1]
    assert result.stopped_because == "final"


class StuckCorpus:
    """Delegates to a real store; every search blocks until released."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.release = threading.Event()
        self.threads: list[str] = []

    def search(self, *args: Any, **kwargs: Any):
        self.threads.append(threading.current_thread().name)
        self.release.wait(30)
        return self.inner.search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_a_stuck_store_call_does_not_hold_the_event_loops_executor(corpus, run):
    # One worker in the loop's default executor: a stuck store call held there (as
    # before) would leave nothing for the rest of the process.
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
    stuck = StuckCorpus(corpus)
    try:
        turns = [[call("search_corpus", query="Etna")]]
        result, _, _ = await run(stuck, turns, deadline_s=WAITED_DEADLINE_S)
        assert result.trace[0].calls[0].error == (
            "Error: search_corpus did not finish before the deadline."
        )
        assert stuck.threads and stuck.threads[0].startswith("sift-store")
        # The default executor is free while the store call is still stuck.
        assert await asyncio.wait_for(asyncio.to_thread(lambda: 42), 30) == 42
    finally:
        stuck.release.set()


def test_the_planner_and_its_settings_import_from_sift_graphs(monkeypatch):
    from sift.graphs import HeuristicPlanner, HeuristicPlannerConfig

    monkeypatch.setenv("SIFT_PLANNER_MAX_ANCHORS", "3")
    monkeypatch.setenv("SIFT_PLANNER_TITLE_WEIGHT", "2.5")
    config = HeuristicPlannerConfig()
    assert config.max_anchors == 3 and config.weights().title == 2.5
    assert HeuristicPlanner(config).weights.title == 2.5
    assert isinstance(ScriptedPolicy(), ScriptedPolicy)
    assert HarnessConfig().store_threads == 8
