"""The Python entry points: one question in, one SearchResult out."""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any, cast

from sift.config import HarnessConfig, check_question, from_environment
from sift.filters import Filter
from sift.graphs._build import build_graph, default_policy
from sift.graphs._sync import run_sync
from sift.graphs.rollouts import fork_policy, run_rollouts
from sift.nodes import EpisodeInput
from sift.progress import OnEvent, ProgressEvent
from sift.types import SearchResult

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from sift.protocols import Corpus, Policy

__all__ = ["asearch", "search"]


async def _episode(
    question: str,
    corpus: Corpus,
    policy: Policy,
    settings: HarnessConfig,
    filters: Any,
    top_k: int | None,
    on_event: OnEvent | None,
) -> SearchResult:
    graph = build_graph(corpus, policy, config=settings)
    # The filter is checked here, before the graph runs, and passed on as given: the
    # input is plain data a checkpointer can save.
    Filter.of(filters)
    state = EpisodeInput(question=question, filters=filters, top_k=top_k)
    if on_event is None:
        output = await graph.ainvoke(state)
        return output["result"]
    last: dict[str, Any] = {}
    # Closed here, on this loop, whatever ends the loop below: left to the garbage
    # collector, the stream's pending getter is cancelled on a loop that may have closed.
    # (an async generator, typed by langgraph as the iterator it is)
    stream = cast(
        "AsyncGenerator[tuple[str, Any], None]",
        graph.astream(state, stream_mode=["custom", "values"]),
    )
    async with contextlib.aclosing(stream):
        async for mode, chunk in stream:
            if mode == "custom":
                on_event(cast(ProgressEvent, chunk))
            else:
                last = cast(dict[str, Any], chunk)
    return last["result"]


async def asearch(
    question: str,
    corpus: Corpus,
    *,
    policy: Policy | None = None,
    config: HarnessConfig | None = None,
    filters: Any = None,
    top_k: int | None = None,
    rollouts: int = 1,
    on_event: OnEvent | None = None,
) -> SearchResult:
    """Runs the agentic search for `question` over `corpus`.

    `policy` defaults to the heuristic planner; `config` to `HarnessConfig()` (environment
    included). With `rollouts` > 1 the policy runs that many independent episodes
    (`policy.fork(seed)` when it offers it), merged by reciprocal rank fusion.
    `on_event` receives the progress events (see `sift.graphs`), with a `rollout` index
    added when there are several rollouts.
    """
    settings = config if config is not None else from_environment(HarnessConfig)
    check_question(question, settings.max_question_chars)
    if not isinstance(rollouts, int) or rollouts < 1:
        raise ValueError(f"rollouts must be a positive integer; got {rollouts!r}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be a positive integer; got {top_k!r}")
    chosen = policy if policy is not None else default_policy()
    if rollouts == 1:
        return await _episode(question, corpus, chosen, settings, filters, top_k, on_event)

    started = time.monotonic()

    async def run_one(index: int) -> SearchResult:
        listener = None
        if on_event is not None:

            def listener(event: ProgressEvent) -> None:
                on_event(cast(ProgressEvent, {**event, "rollout": index}))

        own = settings
        if settings.deadline_s is not None:
            # The deadline is the whole call's: a rollout queued behind others gets what
            # is left of it, and none once it has passed.
            left = settings.deadline_s - (time.monotonic() - started)
            if left <= 0:
                return SearchResult(
                    question=question,
                    stopped_because="deadline",
                    flags=["rollout_skipped_after_deadline"],
                )
            own = settings.model_copy(update={"deadline_s": left})
        return await _episode(
            question, corpus, fork_policy(chosen, index), own, filters, top_k, listener
        )

    return await run_rollouts(
        run_one,
        question,
        rollouts,
        concurrency=settings.rollout_concurrency,
        rrf_k=settings.rrf_k,
        top_k=top_k or settings.top_k,
    )


def search(
    question: str,
    corpus: Corpus,
    *,
    policy: Policy | None = None,
    config: HarnessConfig | None = None,
    filters: Any = None,
    top_k: int | None = None,
    rollouts: int = 1,
    on_event: OnEvent | None = None,
) -> SearchResult:
    """Synchronous `asearch`."""
    return run_sync(
        asearch(
            question,
            corpus,
            policy=policy,
            config=config,
            filters=filters,
            top_k=top_k,
            rollouts=rollouts,
            on_event=on_event,
        )
    )
