"""One search of the service, as a worker runs it (a thread of the service, or a search
process): the episode within the time left, then, past the deadline, the single-shot
result flagged. Shared by `_engine` (threads) and `_processes` (processes).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from sift.filters import Filter
from sift.integrations.http._errors import INVALID_REQUEST, ApiError
from sift.integrations.http._settings import PolicyName
from sift.progress import OnEvent, ProgressEvent
from sift.types import SearchResult

if TYPE_CHECKING:
    from sift.protocols import Corpus, Policy

__all__ = [
    "Abandoned",
    "Job",
    "SearchPlan",
    "agentic",
    "run_search",
    "single_shot",
    "single_shot_fallback",
]

log = logging.getLogger("sift.http")


# Below this much time left when its worker starts, an agentic search goes straight to the
# single-shot fallback: an episode needs at least a turn to find anything.
_MIN_EPISODE_S = 0.05


@dataclass(frozen=True, kw_only=True)
class SearchPlan:
    """Everything one search needs, resolved from request + collection + server settings."""

    question: str
    mode: Literal["agentic", "single_shot"]
    top_k: int
    filters: Filter | None
    deadline_s: float
    grace_s: float
    policy: PolicyName = "heuristic"
    rollouts: int = 1
    config: dict[str, Any] = field(default_factory=dict)


class Abandoned(Exception):
    """Raised inside a worker whose request stopped waiting for it."""


class Job:
    """One unit of work, with a flag its request sets when it leaves. Callbacks given to
    `on_abandon` run when it does (a search process is told through shared memory)."""

    def __init__(self) -> None:
        self._abandoned = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def abandon(self) -> None:
        with self._lock:
            self._abandoned.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_abandon(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if not self._abandoned.is_set():
                self._callbacks.append(callback)
                return
        callback()

    @property
    def abandoned(self) -> bool:
        return self._abandoned.is_set()

    def listener(self, forward: OnEvent | None) -> OnEvent:
        """An `on_event` for the harness: forwards events, and is where an abandoned
        episode stops (the harness calls it after every step)."""

        def on_event(event: ProgressEvent) -> None:
            if self.abandoned:
                raise Abandoned
            if forward is not None:
                forward(event)

        return on_event


def _policy(name: PolicyName) -> Policy | None:
    if name == "heuristic":
        return None  # the harness's default: the no-model planner
    from sift.integrations.ollama import policy_from_settings

    return policy_from_settings()


def single_shot(plan: SearchPlan, corpus: Corpus) -> SearchResult:
    """The plan's one search, with the run's settings (the request's `config` over the
    server's environment), as an episode takes them: the deadline fallback and
    `mode="single_shot"` both."""
    from sift import graphs

    return graphs.single_shot(
        plan.question, corpus, config=_config(plan), top_k=plan.top_k, filters=plan.filters
    )


def _config(plan: SearchPlan, **update: Any) -> Any:
    from sift import graphs

    try:
        return graphs.HarnessConfig(**{**plan.config, **update})
    except ValueError as exc:
        raise ApiError(422, INVALID_REQUEST, f"invalid harness configuration: {exc}") from None


def single_shot_fallback(plan: SearchPlan, corpus: Corpus) -> SearchResult:
    """The answer of a search whose deadline passed: the single-shot result, flagged."""
    result = single_shot(plan, corpus)
    return result.model_copy(
        update={
            "mode": plan.mode,
            "stopped_because": "deadline",
            "flags": [*result.flags, "degraded", "deadline_fallback"],
        }
    )


def agentic(plan: SearchPlan, corpus: Corpus, deadline_s: float, on_event: OnEvent) -> SearchResult:
    from sift import graphs

    config = _config(plan, deadline_s=deadline_s)
    return _worker_loop().run_until_complete(
        graphs.asearch(
            plan.question,
            corpus,
            policy=_policy(plan.policy),
            config=config,
            filters=plan.filters,
            top_k=plan.top_k,
            rollouts=plan.rollouts,
            on_event=on_event,
        )
    )


_local = threading.local()


def _worker_loop() -> asyncio.AbstractEventLoop:
    """This worker thread's own event loop, kept for its next episode: a fresh loop (and
    its thread pool) per request costs time and leaves memory behind."""
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        # The episode's store calls run here; a turn issues a handful at once.
        loop.set_default_executor(ThreadPoolExecutor(4, thread_name_prefix="sift-store"))
        _local.loop = loop
    return loop


def run_search(
    job: Job,
    name: str,
    corpus: Corpus,
    plan: SearchPlan,
    due: float,
    on_event: OnEvent | None,
) -> SearchResult:
    """The search, by `due` (time.monotonic(): the same clock in every process of the
    machine) where the harness can keep it; past it the single-shot result, flagged."""
    if plan.mode == "single_shot":
        return single_shot(plan, corpus)
    left = due - time.monotonic()
    if left < _MIN_EPISODE_S:
        result = None
    else:
        result = agentic(plan, corpus, left, job.listener(on_event))
        if result.stopped_because != "deadline":
            return result
    if job.abandoned:
        raise Abandoned
    log.warning(
        "search of collection %r reached its %.1f s deadline (%s); answering with the "
        "single-shot result (degraded)",
        name,
        plan.deadline_s,
        "before the episode could start"
        if result is None
        else f"after {result.usage.turns} turn(s)",
    )
    return single_shot_fallback(plan, corpus)
