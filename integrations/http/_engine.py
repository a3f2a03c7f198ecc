"""Where the HTTP service's work runs: never on the event loop; searches in search
processes (`search_processes`, `_processes`) or on worker threads, writes and reads of
documents on worker threads; each unit admitted through the queue and bounded by its
request's deadline.

A search's deadline covers the whole request, from its arrival: waiting for the service to
be warm, waiting for a slot, opening the store, the episode. The harness concludes by
itself when the deadline passes; the answer is then the single-shot result for the question
(`stopped_because: "deadline"`, flags `degraded` and `deadline_fallback`, a metric and a log
line), computed in the same worker right away. That fallback is itself bounded: the request
waits at most `deadline + grace` in all, and past that answers 503/5040 rather than an
empty list that a client would read as "nothing found".

A request that stops waiting (its client left, or the hard bound passed) asks its worker to
stop at the harness's next progress event, and the slot stays taken until the worker has
actually finished, so admission always reflects the CPU in use. A worker thread cannot be
killed; a search process that does not stop is killed and replaced (`_processes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from sift.errors import (
    CorpusError,
    DocumentError,
    IncompatibleStoreError,
    IndexDamagedError,
    InvalidPatternError,
    InvalidQueryError,
    ModelServerError,
    NotAStoreError,
    StoreDamagedError,
    StoreUnavailableError,
)
from sift.integrations.http._errors import (
    DEADLINE_EXCEEDED,
    INVALID_REQUEST,
    NOT_READY,
    UNAVAILABLE,
    ApiError,
    locked,
    no_space,
    store_error,
)
from sift.integrations.http._limits import Admission, Slot
from sift.integrations.http._metrics import Metrics
from sift.integrations.http._processes import SearchProcesses
from sift.integrations.http._search import (
    Job,
    SearchPlan,
    agentic,
    run_search,
    single_shot,
    single_shot_fallback,
)
from sift.integrations.http._settings import PolicyName
from sift.progress import OnEvent
from sift.types import Document, SearchResult, UpsertReport

if TYPE_CHECKING:
    from sift.integrations.http._collections import Collection, Collections
    from sift.integrations.http._settings import ServerSettings
    from sift.protocols import Corpus

__all__ = [
    "Engine",
    "PolicyName",
    "SearchPlan",
    "search_process_count",
    "single_shot_fallback",
]

log = logging.getLogger("sift.http")


T = TypeVar("T")

_WARM_QUESTION = "warm up the search path"


def _freeze_heap() -> None:
    """Collects, then freezes what is left: the modules, the stores' and the planner's
    long-lived objects. A full garbage collection runs in whichever thread allocates when
    it is due and holds the GIL throughout; over the warmed process's objects it took
    100-200 ms, during which the event loop answered nothing (measured: /healthz p99 with
    one client 150 ms before, 20 ms after; benchmarks/results/http_load.md)."""
    gc.collect()
    gc.freeze()


def search_process_count(settings: ServerSettings) -> int:
    """How many search processes the service runs: the setting, or by default one per
    core up to `max_concurrency` on a machine of two cores or more (on one core processes
    gain nothing over threads)."""
    if settings.search_processes is not None:
        return settings.search_processes
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    return 0 if cores < 2 else min(cores, settings.max_concurrency)


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
        count = search_process_count(settings)
        self.processes = SearchProcesses(count, settings) if count else None
        # Writes to each collection so far: a search process whose store is older opens
        # it again.
        self._generations: dict[str, int] = {}

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
            if self.processes is not None:
                try:
                    await asyncio.wrap_future(self._pool.submit(self.processes.start))
                except Exception as exc:
                    # Searching on threads is slower under load, never wrong: better
                    # than a service whose every search waits for a process in vain.
                    log.error(
                        "search processes could not start (%s); searching on the "
                        "service's threads instead",
                        exc,
                    )
                    self.processes.close()
                    self.processes = None
            names = self.collections.names() if self.settings.warm_up else []
            # Warming more than may stay open would only close the first ones again.
            names = names[: self.settings.max_open_collections]
            for name in names:
                self.warm_report[name] = await asyncio.wrap_future(
                    self._pool.submit(self._warm_one, name)
                )
        finally:
            if self.settings.freeze_heap:
                _freeze_heap()
                if self.processes is not None:
                    # RuntimeError: the service stopped before it was warm (its port was
                    # taken) and its pool takes no more work; nothing is left to freeze.
                    with contextlib.suppress(RuntimeError):
                        await asyncio.wrap_future(self._pool.submit(self.processes.freeze_heaps))
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
            with self.collections.using(collection) as corpus:
                return self._warm_with(collection, corpus)
        except Exception as exc:  # one broken collection must not keep the others out
            log.warning("collection %r could not be warmed: %s", name, exc)
            return f"{type(exc).__name__}: {exc}"

    def _warm_with(self, collection: Collection, corpus: Corpus) -> str:
        name = collection.name
        plan = SearchPlan(
            question=_WARM_QUESTION,
            mode="agentic",
            top_k=1,
            filters=None,
            deadline_s=max(self.settings.search_deadline_s, 1.0),
            grace_s=0.0,
            config={"max_turns": 2},
        )
        if self.processes is not None:
            # This process only writes: the searches run, and warm, over there.
            self.processes.warm(
                collection,
                self.generation(name),
                plan,
                tuple(self.settings.warm_policies),
            )
            return "ready"
        single_shot(plan, corpus)
        for policy in self.settings.warm_policies:
            agentic(
                SearchPlan(**{**plan.__dict__, "policy": policy}),
                corpus,
                plan.deadline_s,
                Job().listener(None),
            )
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
        except (CorpusError, OSError, ValueError, sqlite3.Error) as exc:
            answer = store_error(exc, self.settings.retry_after_s)
            if answer is None:
                raise
            if no_space(exc) and collection is not None:
                # Its index writer may have died with the write: the next request
                # opens the store afresh, which replays what the indexes missed.
                await asyncio.to_thread(self.collections.discard, collection.name)
            raise answer from None

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
        job = Job()
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
                raise _search_error(exc, self.settings.retry_after_s) from None
            raise
        if "deadline_fallback" in result.flags:
            self.metrics.degraded.labels(collection.name, "deadline").inc()
        self.metrics.record_search(collection.name, result)
        return result

    def _search_sync(
        self,
        job: Job,
        collection: Collection,
        plan: SearchPlan,
        due: float,
        on_event: OnEvent | None,
    ) -> SearchResult:
        # Opened here first in any case: this process is the store's writer, and its
        # open replays what the derived indexes missed before any reader opens them. Held
        # (in use, so not closed as idle) until the search ends.
        with self.collections.using(collection) as corpus:
            if self.processes is None:
                return run_search(job, collection.name, corpus, plan, due, on_event)
            return self._search_elsewhere(job, collection, plan, due, on_event)

    def _search_elsewhere(
        self,
        job: Job,
        collection: Collection,
        plan: SearchPlan,
        due: float,
        on_event: OnEvent | None,
    ) -> SearchResult:
        assert self.processes is not None
        try:
            return self.processes.search(
                job, collection, self.generation(collection.name), plan, due, on_event
            )
        except IndexDamagedError as exc:
            # A search process (a reader) found a derived index gone and may not rebuild
            # it: this process, the writer, opens the store again, which rebuilds it on
            # disk, and the search runs once more on it (every search answered 503 until
            # a restart, issue 42).
            log.warning(
                "collection %r: %s; opening its store again to rebuild it", collection.name, exc
            )
            with self.write_lock(collection.name):
                self.collections.discard(collection.name)
                with self.collections.using(collection):
                    self._wrote(collection.name)
            return self.processes.search(
                job, collection, self.generation(collection.name), plan, due, on_event
            )

    # ----------------------------------------------------------------- writes

    def generation(self, name: str) -> int:
        with self._locks_guard:
            return self._generations.get(name, 0)

    def _wrote(self, name: str) -> None:
        with self._locks_guard:
            self._generations[name] = self._generations.get(name, 0) + 1

    def write_lock(self, name: str) -> threading.Lock:
        """Serialises writes to one collection from this process (stores are ACID; this
        keeps a batch's report consistent with what a concurrent batch did)."""
        with self._locks_guard:
            return self._write_locks.setdefault(name, threading.Lock())

    def _write(self, collection: Collection, action: Callable[[Corpus, bool], T]) -> T:
        """`action(store, retried)` under the collection's write lock, on a store that
        works: a store that fails (its indexes broken by a failed write, its view of
        SQLite stale after another process wrote) is closed and opened afresh, which
        replays from SQLite what its indexes missed, and the write is tried again, a
        bounded number of times. Another process's write lock is waited for briefly too.
        Bad input, a full disk and a path that holds no store are answered at once."""
        attempts = len(_WRITE_RETRY_S) + 1
        for attempt in range(attempts):
            try:
                with self.collections.using(collection) as corpus, self.write_lock(collection.name):
                    try:
                        return action(corpus, attempt > 0)
                    finally:
                        # Even a failed write may have stored part of the batch.
                        self._wrote(collection.name)
            except Exception as exc:
                if not _reopen_helps(exc):
                    raise
                if attempt == attempts - 1:
                    if locked(exc):
                        raise
                    # Whatever it was (tantivy's ValueError for index files removed
                    # under it was a 500 on every write until restart): the next request
                    # opens the store afresh.
                    self.collections.discard(collection.name)
                    raise store_error(exc, self.settings.retry_after_s) or ApiError(
                        503,
                        UNAVAILABLE,
                        f"the collection's store failed ({type(exc).__name__}: {exc}); it "
                        "is opened afresh by the next request: retry",
                        headers={"Retry-After": str(self.settings.retry_after_s)},
                    ) from exc
                if not locked(exc):
                    log.warning(
                        "collection %r: the store failed (%s: %s); opening it again "
                        "(attempt %d of %d)",
                        collection.name,
                        type(exc).__name__,
                        exc,
                        attempt + 2,
                        attempts,
                    )
                    self.collections.discard(collection.name)
                time.sleep(_WRITE_RETRY_S[attempt])
        raise AssertionError("unreachable")  # the last attempt returns or raises

    async def upsert(
        self, slot: Slot, collection: Collection, parse: Callable[[], list[Document]]
    ) -> UpsertReport:
        def work() -> UpsertReport:
            documents = parse()
            # Idempotent: a retry reports what the failed attempt stored as unchanged.
            return self._write(collection, lambda corpus, _: corpus.upsert(documents))

        return await self.run(slot, work, collection)

    async def delete(self, slot: Slot, collection: Collection, doc_id: str) -> int:
        existed: list[bool] = []

        def attempt(corpus: Corpus, retried: bool) -> int:
            if not retried:
                # Known before the first try: a retry that finds nothing left to delete
                # then reports the deletion the failed attempt made, not a 404.
                existed.append(bool(corpus.read(doc_id)))
            deleted = corpus.delete([doc_id])
            return deleted or int(retried and existed[0])

        return await self.run(slot, lambda: self._write(collection, attempt), collection)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self.processes is not None:
            self.processes.close()


# Pauses between the attempts of a write whose store failed or was locked.
_WRITE_RETRY_S = (0.05, 0.2, 0.5)


def _reopen_helps(exc: BaseException) -> bool:
    """Whether a failed write may succeed on the store opened afresh (or once another
    process's lock is released); never for bad input, a full disk or a missing store."""
    if isinstance(exc, ApiError | DocumentError | ModelServerError):
        return False
    if isinstance(
        exc, NotAStoreError | IncompatibleStoreError | StoreUnavailableError | StoreDamagedError
    ):
        return False
    return not no_space(exc)


def _search_error(exc: Exception, retry_after_s: int = 5) -> Exception:
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
        return store_error(exc, retry_after_s) or exc
    return exc
