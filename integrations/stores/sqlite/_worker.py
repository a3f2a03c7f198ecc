"""One thread of its own that runs a derived index's jobs in the order they were queued.

The HNSW graph (`_ann.py`) and the BM25 index (`_lexical.py`) each take additions and
removals from the store's writer this way: the writer goes on with the next batch while
the job runs, and a job never overtakes one queued before it (a removal and the re-add
of a replaced chunk keep their order).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["OrderedWorker"]


class OrderedWorker:
    """Jobs run one after the other on a thread named `name` (made on the first job), at
    most `depth` queued behind the caller; not thread-safe for callers (the store's write
    lock serialises them)."""

    def __init__(self, name: str, depth: int) -> None:
        self._name = name
        self._depth = depth
        self._thread: ThreadPoolExecutor | None = None
        self._queued: deque[Future[Any]] = deque()

    def submit(self, job: Callable[..., Any], *args: Any) -> None:
        """Queues `job(*args)`. A failure of a job already ended is raised here, before
        more is queued behind it; past `depth` queued jobs, waits for the oldest."""
        while self._queued and self._queued[0].done():
            self._queued.popleft().result()
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix=self._name)
        self._queued.append(self._thread.submit(job, *args))
        while len(self._queued) > self._depth:
            self._queued.popleft().result()

    def wait(self) -> None:
        """Returns once every queued job has ended; raises the first failure, once none
        is left running behind the caller."""
        failure: BaseException | None = None
        while self._queued:
            try:
                self._queued.popleft().result()
            except BaseException as exc:  # re-raised below, once the queue is empty
                failure = failure or exc
        if failure is not None:
            raise failure

    def close(self) -> None:
        """`wait`, then the thread ends (whether or not a job failed)."""
        try:
            self.wait()
        finally:
            if self._thread is not None:
                self._thread.shutdown(wait=True)
                self._thread = None
