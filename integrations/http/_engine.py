"""Where the HTTP service's work runs: on worker threads, never on the event loop, each unit
admitted through the queue and bounded by its request's deadline.

A search's deadline covers the whole request, from its arrival: waiting for the service to
be warm, waiting for a slot, opening the store, the episode. The harness concludes by
itself when the deadline passes; the answer is then the single-shot result for the question
(`stopped_because: "deadline"`, flags `degraded` and `deadline_fallback`, a metric and a log
line), computed in the same worker right away. That fallback is itself bounded: the request
waits at most `deadline + grace` in all, and past that answers 503/5040 rather than an
empty list that a client would read as "nothing found".

A worker cannot be killed: a request that stops waiting (its client left, or the hard bound
passed) asks its worker to stop at the harness's next progress event, and the slot stays
taken until the worker has actually finished, so admission always reflects the CPU in use.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from sift.errors import (
    CorpusError,
    DocumentError,
    InvalidPatternError,
    InvalidQueryError,
    ModelServerError,
)
from sift.filters import Filter
from sift.integrations.http._errors import (
    DEADLINE_EXCEEDED,
    INVALID_REQUEST,
    NOT_READY,
    STORAGE_FULL,
    UNAVAILABLE,
    UNKNOWN_COLLECTION,
    ApiError,
)
from sift.integrations.http._limits import Admission, Slot
from sift.integrations.http._metrics import Metrics
from sift.integrations.http._settings import PolicyName
from sift.types import Document, SearchResult, UpsertReport

if TYPE_CHECKING:
    from sift.integrations.http._collections import Collection, Collections
    from sift.integrations.http._settings import ServerSettings
    from sift.protocols import Corpus, Policy

__all__ = ["Engine", "PolicyName", "SearchPlan", "single_shot_fallback"]

log = logging.getLogger("sift.http")


T = TypeVar("T")
OnEvent = Callable[[dict[str, Any]], None]

# Below this much time left when its worker starts, an agentic search goes straight to the
# single-shot fallback: an episode needs at least a turn to find anything.
_MIN_EPISODE_S = 0.05
_WARM_QUESTION = "warm up the search path"


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


class _Abandoned(Exception):
    """Raised inside a worker whose request stopped waiting for it."""


class _Job:
    """One unit of work on a worker thread, with a flag its request sets when it leaves."""

    def __init__(self) -> None:
        self._abandoned = threading.Event()

    def abandon(self) -> None:
        self._abandoned.set()

    @property
    def abandoned(self) -> bool:
        return self._abandoned.is_set()

    def listener(self, forward: OnEvent | None) -> OnEvent:
        """An `on_event` for the harness: forwards events, and is where an abandoned
        episode stops (the harness calls it after every step)."""

        def on_event(event: dict[str, Any]) -> None:
            if self._abandoned.is_set():
                raise _Abandoned
            if forward is not None:
                forward(event)

        return on_event


def _policy(name: PolicyName) -> Policy | None:
    if name == "heuristic":
        return None  # the harness's default: the no-model planner
    from sift.integrations.ollama import policy_from_settings

    return policy_from_settings()


def _single_shot(plan: SearchPlan, corpus: Corpus) -> SearchResult:
    from sift import graphs

    return graphs.single_shot(
        plan.question, corpus, top_k=plan.top_k, mode="hybrid", filters=plan.filters
    )


def single_shot_fallback(plan: SearchPlan, corpus: Corpus) -> SearchResult:
    """The answer of a search whose deadline passed: the single-shot result, flagged."""
    result = _single_shot(plan, corpus)
    return result.model_copy(
        update={
            "mode": plan.mode,
            "stopped_because": "deadline",
            "flags": [*result.flags, "degraded", "deadline_fallback"],
        }
    )


def _agentic(
    plan: SearchPlan, corpus: Corpus, deadline_s: float, on_event: OnEvent
) -> SearchResult:
    from sift import graphs

    try:
        config = graphs.HarnessConfig(**{**plan.config, "deadline_s": deadline_s})
    except ValueError as exc:
        raise ApiError(422, INVALID_REQUEST, f"invalid harness configuration: {exc}") from None
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


def _freeze_heap() -> None:
    """Collects, then freezes what is left: the modules, the stores' and the planner's
    long-lived objects. A full garbage collection runs in whichever thread allocates when
    it is due and holds the GIL throughout; over the warmed process's objects it took
    100-200 ms, during which the event loop answered nothing (measured: /healthz p99 with
    one client 150 ms before, 20 ms after; benchmarks/results/http_load.md)."""
    gc.collect()
    gc.freeze()


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


_NO_SPACE = ("No space left on device", "os error 28", "database or disk is full", "StorageFull")


def _no_space(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    return any(marker in str(exc) for marker in _NO_SPACE)


class Engine:
    """The worker pool, the admission queue and readiness of one app."""

    def __init__(
        self, settings: ServerSettings, collections: Collections, metrics: Metrics
    ) -> None:
        self.settings = settings
        self.collections = collections
        self.metrics = metrics
        self.admission = Admission(
            settings.max_concurrency, settings.queue_size, settings.retry_after_s, metrics
        )
        # One thread per slot, plus room for workers a request gave up on: their slot is
        # still taken, so the extra threads never run more work than there are slots.
        self._pool = ThreadPoolExecutor(
            max_workers=settings.max_concurrency * 2, thread_name_prefix="sift-work"
        )
        self._ready: asyncio.Event | None = None
        self.warm_report: dict[str, str] = {}
        self._write_locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    # ----------------------------------------------------------------- readiness

    @property
    def ready(self) -> bool:
        return self._ready is not None and self._ready.is_set()

    async def warm_up(self) -> None:
        """Opens every known collection and runs a single-shot and an agentic search on
        each (embedder, store indexes, planner, graph), then reports ready."""
        self._ready = asyncio.Event()
        self.metrics.ready.set(0)
        started = time.monotonic()
        try:
            names = self.collections.names() if self.settings.warm_up else []
            for name in names:
                self.warm_report[name] = await asyncio.wrap_future(
                    self._pool.submit(self._warm_one, name)
                )
        finally:
            if self.settings.freeze_heap:
                _freeze_heap()
            self._ready.set()
            self.metrics.ready.set(1)
        problems = {k: v for k, v in self.warm_report.items() if v != "ready"}
        log.info(
            "sift is ready: %d collection(s) warm in %.1f s%s",
            len(self.warm_report) - len(problems),
            time.monotonic() - started,
            f"; not usable: {problems}" if problems else "",
        )

    def _warm_one(self, name: str) -> str:
        try:
            collection = self.collections.get(name)
            corpus = self.collections.open_sync(collection)
            plan = SearchPlan(
                question=_WARM_QUESTION,
                mode="agentic",
                top_k=1,
                filters=None,
                deadline_s=max(self.settings.search_deadline_s, 1.0),
                grace_s=0.0,
                config={"max_turns": 2},
            )
            _single_shot(plan, corpus)
            for policy in self.settings.warm_policies:
                _agentic(
                    SearchPlan(**{**plan.__dict__, "policy": policy}),
                    corpus,
                    plan.deadline_s,
                    _Job().listener(None),
                )
        except Exception as exc:  # one broken collection must not keep the others out
            log.warning("collection %r could not be warmed: %s", name, exc)
            return f"{type(exc).__name__}: {exc}"
        return "ready"

    async def wait_ready(self, wait_s: float) -> None:
        if self._ready is None or self._ready.is_set():
            return
        try:
            await asyncio.wait_for(self._ready.wait(), max(wait_s, 0.0))
        except TimeoutError:
            raise ApiError(
                503,
                NOT_READY,
                "the service is still warming up (opening its collections); retry shortly",
                headers={"Retry-After": str(self.settings.retry_after_s)},
            ) from None

    # ----------------------------------------------------------------- running work

    def _submit(self, slot: Slot, work: Callable[[], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        future = self._pool.submit(work)
        self.metrics.in_flight.set(self.admission.active)

        def done(_: Future[T]) -> None:
            # The slot is freed when the worker has really finished, on the loop's thread.
            def release() -> None:
                slot.release()
                self.metrics.in_flight.set(self.admission.active)

            # A closed loop has nothing waiting for the slot.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(release)

        future.add_done_callback(done)
        waited = asyncio.wrap_future(future)
        # A request that stopped waiting never reads its worker's outcome: read it here,
        # so asyncio does not log it as "never retrieved".
        waited.add_done_callback(lambda f: f.cancelled() or f.exception())
        return waited

    async def admit(self, due: float | None = None) -> Slot:
        """Readiness, then a slot; `due` (monotonic) bounds both waits."""
        wait = self.settings.queue_wait_s
        if due is not None:
            wait = min(wait, due - time.monotonic())
        await self.wait_ready(wait)
        if due is not None:
            wait = min(self.settings.queue_wait_s, due - time.monotonic())
        return await self.admission.acquire(wait)

    async def run(
        self, slot: Slot, work: Callable[[], T], collection: Collection | None = None
    ) -> T:
        """`work` on a worker holding `slot`; store failures mapped to their answers."""
        try:
            future = self._submit(slot, work)
        except BaseException:
            slot.release()
            raise
        try:
            return await asyncio.shield(future)
        except ApiError:
            raise
        except DocumentError as exc:
            raise ApiError(422, INVALID_REQUEST, str(exc)) from None
        except ModelServerError as exc:
            raise _search_error(exc) from None
        except (CorpusError, OSError, ValueError) as exc:
            if _no_space(exc):
                if collection is not None:
                    # Its index writer may have died with the write: the next request
                    # opens the store afresh, which replays what the indexes missed.
                    await asyncio.to_thread(self.collections.discard, collection.name)
                raise _disk_full(exc) from None
            if isinstance(exc, CorpusError):
                raise ApiError(
                    404, UNKNOWN_COLLECTION, f"the collection cannot be opened: {exc}"
                ) from None
            raise

    # ----------------------------------------------------------------- searches

    async def search(
        self,
        collection: Collection,
        plan: SearchPlan,
        *,
        arrived: float,
        on_event: OnEvent | None = None,
        slot: Slot | None = None,
    ) -> SearchResult:
        """The search's result within `arrived + deadline + grace`; bad input is a 422, an
        unreachable model server a 503. `slot`: one already admitted (streams admit
        before they answer, so that a 429 is a status, not an event)."""
        due = arrived + plan.deadline_s
        hard = due + plan.grace_s
        if slot is None:
            slot = await self.admit(due)
        job = _Job()
        try:
            future = self._submit(
                slot, lambda: self._search_sync(job, collection, plan, due, on_event)
            )
        except BaseException:
            slot.release()
            raise
        try:
            result = await asyncio.wait_for(
                asyncio.shield(future), max(hard - time.monotonic(), 0.0)
            )
        except TimeoutError:
            job.abandon()
            log.warning(
                "search of collection %r did not finish within its %.1f s deadline plus "
                "%.1f s grace (not even single-shot): answering 503",
                collection.name,
                plan.deadline_s,
                plan.grace_s,
            )
            self.metrics.degraded.labels(collection.name, "overrun").inc()
            raise ApiError(
                503,
                DEADLINE_EXCEEDED,
                f"the search did not finish within its deadline ({plan.deadline_s:g} s) and "
                "the single-shot fallback did not either: the store is stalled or the server "
                "is overloaded; retry",
                headers={"Retry-After": str(self.settings.retry_after_s)},
            ) from None
        except BaseException as exc:
            job.abandon()
            if isinstance(exc, Exception):
                raise _search_error(exc) from None
            raise
        if "deadline_fallback" in result.flags:
            self.metrics.degraded.labels(collection.name, "deadline").inc()
        self.metrics.record_search(collection.name, result)
        return result

    def _search_sync(
        self,
        job: _Job,
        collection: Collection,
        plan: SearchPlan,
        due: float,
        on_event: OnEvent | None,
    ) -> SearchResult:
        corpus = self.collections.open_sync(collection)
        if plan.mode == "single_shot":
            return _single_shot(plan, corpus)
        left = due - time.monotonic()
        if left < _MIN_EPISODE_S:
            result = None
        else:
            result = _agentic(plan, corpus, left, job.listener(on_event))
            if result.stopped_because != "deadline":
                return result
        if job.abandoned:
            raise _Abandoned
        log.warning(
            "search of collection %r reached its %.1f s deadline (%s); answering with the "
            "single-shot result (degraded)",
            collection.name,
            plan.deadline_s,
            "before the episode could start"
            if result is None
            else f"after {result.usage.turns} turn(s)",
        )
        return single_shot_fallback(plan, corpus)

    # ----------------------------------------------------------------- writes

    def write_lock(self, name: str) -> threading.Lock:
        """Serialises writes to one collection from this process (stores are ACID; this
        keeps a batch's report consistent with what a concurrent batch did)."""
        with self._locks_guard:
            return self._write_locks.setdefault(name, threading.Lock())

    async def upsert(
        self, slot: Slot, collection: Collection, parse: Callable[[], list[Document]]
    ) -> UpsertReport:
        def work() -> UpsertReport:
            documents = parse()
            corpus = self.collections.open_sync(collection)
            with self.write_lock(collection.name):
                return corpus.upsert(documents)

        return await self.run(slot, work, collection)

    async def delete(self, slot: Slot, collection: Collection, doc_id: str) -> int:
        def work() -> int:
            corpus = self.collections.open_sync(collection)
            with self.write_lock(collection.name):
                return corpus.delete([doc_id])

        return await self.run(slot, work, collection)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _disk_full(exc: BaseException) -> ApiError:
    return ApiError(
        507,
        STORAGE_FULL,
        f"the store's disk is full: {exc}",
    )


def _search_error(exc: Exception) -> Exception:
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, InvalidQueryError | InvalidPatternError):
        return ApiError(422, INVALID_REQUEST, str(exc))
    if isinstance(exc, ModelServerError):
        return ApiError(
            503,
            UNAVAILABLE,
            f"the model server is unavailable: {exc}",
            headers={"Retry-After": "5"},
        )
    if isinstance(exc, CorpusError):
        return ApiError(404, UNKNOWN_COLLECTION, f"the collection cannot be opened: {exc}")
    return exc
