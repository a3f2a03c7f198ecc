"""Searches in processes of their own (`ServerSettings.search_processes`).

A search is Python from end to end (the planner, the graph, most of the store's work) and
holds the GIL: on worker threads of the service, concurrent searches share one core, and
the event loop that answers /healthz, 429s and streams waits for the GIL behind them. In
search processes every core runs searches and the loop only moves bytes.

The service stays the one writer of every store; each search process opens the stores it
searches for reading (`writer=False`) and opens one again when the service has written to
it since (the service numbers its writes per collection and sends the number with every
search). A search process runs one search at a time: the service hands a search to an
idle one and forwards its events; a request that stops waiting sends its process SIGUSR1,
which the episode reads at its next step. A search process that does not stop within
`_KILL_AFTER_S` of that, or that dies, is replaced by a new one.

A search process is a child interpreter (`sift.integrations.interpreters`: never a fork
of this multi-threaded process, never a re-run of the caller's main module as
multiprocessing's spawn would do) driven over two pipes; it exits when its
request pipe closes, so it never outlives the service, even one killed with SIGKILL.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import pickle
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal

from pydantic_core import to_jsonable_python

from sift.integrations.http._errors import UNAVAILABLE, ApiError
from sift.integrations.http._search import (
    Abandoned,
    Job,
    SearchPlan,
    agentic,
    run_search,
    single_shot,
)
from sift.integrations.http._settings import PolicyName
from sift.integrations.interpreters import child_pipes, start_python
from sift.progress import OnEvent, ProgressEvent
from sift.types import SearchResult

if TYPE_CHECKING:
    from sift.integrations.http._collections import Collection, Collections
    from sift.integrations.http._settings import ServerSettings
    from sift.protocols import Corpus

__all__ = ["SearchProcesses", "serve"]

log = logging.getLogger("sift.http")

# After its request stopped waiting, a search process has this long to reach a step of
# its episode (where it stops) before it is killed and replaced.
_KILL_AFTER_S = 5.0
# How often a waiting service thread looks at its request's flag between messages.
_POLL_S = 0.1
_START_TIMEOUT_S = 120.0
_COMMAND = "from sift.integrations.http._processes import serve; serve()"
# What a request that stopped waiting sends its search process.
_ABANDON = signal.SIGUSR1


@dataclass(frozen=True, kw_only=True)
class _Request:
    kind: Literal["search", "warm", "freeze"]
    collection: Collection | None = None
    generation: int = 0
    plan: SearchPlan | None = None
    due: float = 0.0
    stream: bool = False
    policies: tuple[PolicyName, ...] = ()


class _Worker:
    """One search process, seen from the service: its pipes and the job it runs."""

    def __init__(self, settings: ServerSettings) -> None:
        self.process, self.requests, self.answers = start_python(_COMMAND)
        self._lock = threading.Lock()
        self._current: Job | None = None
        level = logging.getLogger("sift").getEffectiveLevel()
        # A few kilobytes: the pipe's buffer takes them without waiting.
        self.requests.send_bytes(pickle.dumps((settings, level)))

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    @property
    def exitcode(self) -> int | None:
        return self.process.poll()

    def begin(self, job: Job) -> None:
        with self._lock:
            self._current = job
        job.on_abandon(lambda: self._abandon(job))

    def end(self) -> None:
        with self._lock:
            self._current = None

    def _abandon(self, job: Job) -> None:
        # Only while it still runs that job: a late abandon must not stop the next one.
        with self._lock:
            if self._current is job and self.alive:
                with contextlib.suppress(OSError):
                    os.kill(self.pid, _ABANDON)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5.0)
        self._close_pipes()

    def stop(self) -> None:
        """Closes its request pipe (it exits at EOF), then kills it if it lingers."""
        self._close_pipes()
        try:
            self.process.wait(5.0)
        except subprocess.TimeoutExpired:
            self.kill()

    def _close_pipes(self) -> None:
        for conn in (self.requests, self.answers):
            with contextlib.suppress(OSError):
                conn.close()


class SearchProcesses:
    """`count` search processes and the service's side of them (thread-safe)."""

    def __init__(self, count: int, settings: ServerSettings) -> None:
        self.count = count
        self._settings = settings
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self.restarts = 0

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Starts every process and waits until each has imported sift."""
        started = [self._spawn() for _ in range(self.count)]
        try:
            for worker in started:
                self._await_up(worker)
                with self._lock:
                    self._workers.append(worker)
                self._idle.put(worker)
        except BaseException:
            for worker in started:
                worker.kill()
            raise

    def _spawn(self) -> _Worker:
        return _Worker(self._settings)

    def _await_up(self, worker: _Worker) -> None:
        """Waits for the process's "up" (its log records may come first)."""
        end = time.monotonic() + _START_TIMEOUT_S
        while True:
            left = end - time.monotonic()
            if left <= 0 or not worker.answers.poll(left):
                worker.kill()
                raise RuntimeError(f"a search process did not start within {_START_TIMEOUT_S:g} s")
            try:
                kind, payload = worker.answers.recv()
            except (EOFError, OSError):
                worker.kill()
                code = worker.exitcode
                raise RuntimeError(
                    f"a search process ended while starting (exit code {code})"
                ) from None
            if kind == "up":
                return
            _relay(kind, payload)

    def pids(self) -> list[int]:
        with self._lock:
            return [w.pid for w in self._workers]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers, self._workers = self._workers, []
        for worker in workers:
            worker.stop()

    def _replace(self, worker: _Worker, why: str) -> None:
        """Kills `worker` and starts another in its place (in the background: a new
        process takes a second or two to import sift)."""
        worker.kill()
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)
            if self._closed:
                return
            self.restarts += 1
        log.warning("search process %d %s; starting another", worker.pid, why)

        def start() -> None:
            try:
                fresh = self._spawn()
                self._await_up(fresh)
            except Exception:
                log.exception("a replacement search process could not start")
                return
            with self._lock:
                if self._closed:
                    fresh.stop()
                    return
                self._workers.append(fresh)
            self._idle.put(fresh)

        threading.Thread(target=start, name="sift-search-restart", daemon=True).start()

    # ----------------------------------------------------------------- work

    def warm(
        self,
        collection: Collection,
        generation: int,
        plan: SearchPlan,
        policies: tuple[PolicyName, ...],
    ) -> None:
        """Opens `collection` in every search process and runs a search of each kind
        there, so the first request finds every process warm."""
        self._everywhere(
            _Request(
                kind="warm",
                collection=collection,
                generation=generation,
                plan=plan,
                policies=policies,
            )
        )

    def freeze_heaps(self) -> None:
        """`gc.freeze()` in every search process, once warm (see `Engine.warm_up`)."""
        self._everywhere(_Request(kind="freeze"))

    def _everywhere(self, request: _Request) -> None:
        """`request` in every search process, one after the other (at start-up, before
        any search is admitted)."""
        with self._lock:
            count = len(self._workers)
        taken = [self._idle.get() for _ in range(count)]
        try:
            for worker in taken:
                self._exchange(worker, request, Job(), None)
        finally:
            for worker in taken:
                if worker.alive:
                    self._idle.put(worker)

    def search(
        self,
        job: Job,
        collection: Collection,
        generation: int,
        plan: SearchPlan,
        due: float,
        on_event: OnEvent | None,
    ) -> SearchResult:
        """The search, run in the first idle process (blocks the calling thread)."""
        worker = self._acquire(job)
        request = _Request(
            kind="search",
            collection=collection,
            generation=generation,
            plan=plan,
            due=due,
            stream=on_event is not None,
        )
        try:
            result = self._exchange(worker, request, job, on_event)
        finally:
            if worker.alive:
                self._idle.put(worker)
        assert isinstance(result, SearchResult)
        return result

    def _acquire(self, job: Job) -> _Worker:
        while True:
            if job.abandoned:
                raise Abandoned
            try:
                worker = self._idle.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            if worker.alive:
                return worker
            # It died while idle: nothing of any request was lost with it.
            self._replace(worker, f"ended while idle (exit code {worker.exitcode})")

    def _exchange(
        self, worker: _Worker, request: _Request, job: Job, on_event: OnEvent | None
    ) -> object:
        worker.begin(job)
        try:
            return self._answer(worker, request, job, on_event)
        finally:
            worker.end()

    def _answer(
        self, worker: _Worker, request: _Request, job: Job, on_event: OnEvent | None
    ) -> object:
        try:
            worker.requests.send(request)
        except (OSError, ValueError):
            self._replace(worker, "could not be reached")
            raise _lost(worker) from None
        abandoned_at: float | None = None
        while True:
            if not worker.answers.poll(_POLL_S):
                if job.abandoned:
                    abandoned_at = abandoned_at or time.monotonic()
                    if time.monotonic() - abandoned_at > _KILL_AFTER_S:
                        self._replace(
                            worker,
                            f"did not stop within {_KILL_AFTER_S:g} s of its request leaving",
                        )
                        raise Abandoned
                continue
            try:
                kind, payload = worker.answers.recv()
            except (EOFError, OSError):
                self._replace(worker, f"ended (exit code {worker.exitcode})")
                raise _lost(worker) from None
            if kind == "event":
                if on_event is not None:
                    on_event(payload)
            elif kind == "done":
                return payload
            elif kind == "error":
                raise payload
            else:
                _relay(kind, payload)


def _relay(kind: str, payload: Any) -> None:
    """A message that is not a search's: a log record of the process."""
    if kind == "log":
        name, level, message = payload
        logging.getLogger(name).log(level, "%s", message)


def _lost(worker: _Worker) -> ApiError:
    return ApiError(
        503,
        UNAVAILABLE,
        f"the search process running this search ended (pid {worker.pid}, exit code "
        f"{worker.exitcode}); another is starting in its place: retry",
        headers={"Retry-After": "1"},
    )


# --------------------------------------------------------------------- the process


class _Sender:
    """The search process's end of the pipe: the episode's thread and the threads that
    log share it."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    def send(self, message: object) -> None:
        with self._lock:
            self._conn.send(message)


class _Forward(logging.Handler):
    """Hands the search process's log records to the service, which logs them as its
    own (with the service's handlers and format)."""

    def __init__(self, sender: _Sender) -> None:
        super().__init__()
        self._sender = sender

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
            self._sender.send(("log", (record.name, record.levelno, message)))
        except Exception:
            self.handleError(record)


_abandoned = threading.Event()


def _on_abandon(_signum: int, _frame: FrameType | None) -> None:
    _abandoned.set()


class _SignalledJob(Job):
    """The search process's side of a Job: abandoned when the service signals it."""

    @property
    def abandoned(self) -> bool:
        return _abandoned.is_set()


def serve() -> None:
    """A search process (`python -P -c`, see `_COMMAND`): answers requests from the pipe in
    argv[1] on the pipe in argv[2] until the request pipe closes."""
    requests, answers = child_pipes()
    sender = _Sender(answers)
    signal.signal(_ABANDON, _on_abandon)
    settings, level = pickle.loads(requests.recv_bytes())
    _yield_to_the_service(settings.search_nice)
    root = logging.getLogger()
    root.addHandler(_Forward(sender))
    root.setLevel(logging.WARNING)
    logging.getLogger("sift").setLevel(level)
    from sift.integrations.http._collections import Collections

    collections = Collections(settings)
    opened: dict[str, tuple[int, Corpus, float]] = {}
    sender.send(("up", os.getpid()))
    try:
        while True:
            try:
                request = requests.recv()
            except (EOFError, OSError):
                return
            # A signal meant for the previous search (sent as it ended) is not this one's.
            _abandoned.clear()
            try:
                outcome: tuple[str, object] = (
                    "done",
                    _answer(request, collections, opened, sender),
                )
            except BaseException as exc:  # every failure goes back to the request
                outcome = ("error", _transportable(exc))
            try:
                sender.send(outcome)
            except (OSError, ValueError):
                return
    finally:
        for _, corpus, _ in opened.values():
            with contextlib.suppress(Exception):
                corpus.close()


def _yield_to_the_service(nice: int) -> None:
    """Lowers this process's priority by `nice` (`ServerSettings.search_nice`, 5 by
    default): when every core is busy, the service's own process, whose event loop
    admits, times out and answers every request, goes first."""
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)


def _corpus(
    collections: Collections,
    opened: dict[str, tuple[int, Corpus, float]],
    collection: Collection,
    generation: int,
) -> Corpus:
    """The collection's store, opened again when the service has written to it since.

    Readers are bounded as the service's stores are (`Collections`): before one opens,
    those idle for `collection_idle_s` are closed, and beyond `max_open_collections` the
    least recently used. A process runs one search at a time, so none of them is in use
    then; a process that gets no search keeps its readers until it gets one."""
    name = collection.name
    now = time.monotonic()
    held = opened.pop(name, None)  # put back last: the dict's order is least recent first
    if held is not None and held[0] == generation:
        corpus = held[1]
    else:
        embedder = None
        if held is not None:
            embedder = getattr(held[1], "embedder", None)
            with contextlib.suppress(Exception):
                held[1].close()
        settings = collections.settings
        for other, (_, reader, used) in list(opened.items()):
            too_many = len(opened) >= settings.max_open_collections
            if too_many or now - used >= settings.collection_idle_s:
                del opened[other]
                with contextlib.suppress(Exception):
                    reader.close()
        corpus = collections.open_reader(collection, embedder)
    opened[name] = (generation, corpus, now)
    return corpus


def _answer(
    request: _Request,
    collections: Collections,
    opened: dict[str, tuple[int, Corpus, float]],
    sender: _Sender,
) -> SearchResult | None:
    if request.kind == "freeze":
        gc.collect()
        gc.freeze()
        return None
    plan, collection = request.plan, request.collection
    assert plan is not None and collection is not None
    corpus = _corpus(collections, opened, collection, request.generation)
    if request.kind == "warm":
        single_shot(plan, corpus)
        for policy in request.policies:
            agentic(
                SearchPlan(**{**plan.__dict__, "policy": policy}),
                corpus,
                plan.deadline_s,
                Job().listener(None),
            )
        return None
    forward: OnEvent | None = None
    if request.stream:

        def forward(event: ProgressEvent) -> None:
            sender.send(("event", to_jsonable_python(event, fallback=str)))

    return run_search(_SignalledJob(), collection.name, corpus, plan, request.due, forward)


def _transportable(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling, else a RuntimeError naming it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc
