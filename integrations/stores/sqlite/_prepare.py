"""Chunking and embedding beside the store's writes: the ingest's first stage.

Batches are chunked and embedded in a worker thread while the caller's thread writes the
batch before. With an embedder that holds the GIL, both are mostly Python and share one
core; once an ingest is long enough to pay for starting one (`spawn_after` documents),
later batches go to a child process instead, which gives chunking and embedding a core
of their own; a long ingest gets a second child (see `Preparer`). An embedder that
releases the GIL (the static one's C part) already runs beside the writer from the
thread, and the store starts no child for it (`SqliteCorpus`, `spawn_after`).

Each child is a fresh interpreter (`python -c`, started by
`sift.integrations.interpreters`: never a fork of this multi-threaded process, and never
a re-run of the caller's main module as multiprocessing's spawn would do) that reads
requests from a pipe. It gets its own copy of the embedder
(pickled: an embedder that cannot be pickled, one holding an HTTP client say, stays in
the thread) and only plain data crosses: (id, title, text) in, spans and vectors out. A
child that dies or fails a batch stops them all, and that batch and the rest run in
the thread. SQLite, the change log and every index are written by the caller's process
alone, so the store's crash safety does not depend on the children; a child exits when
its pipe closes, so it never outlives the ingest, even one killed with SIGKILL.
"""

from __future__ import annotations

import os
import pickle
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from sift.integrations.interpreters import start_python
from sift.integrations.stores._child import COMMAND, READY
from sift.integrations.stores._documents import Chunked, Item, chunk_and_embed

if TYPE_CHECKING:
    from sift.protocols import Embedder

__all__ = ["Preparer"]


class ChildFailedError(Exception):
    """The child process could not prepare a batch (it died, or its code failed)."""


class _Child:
    """A child interpreter running `serve`. Requests are sent from its courier's sender
    thread and answers read, in the same order, from its receiver thread; only `kill`
    may come from another thread."""

    def __init__(self, payload: bytes) -> None:
        self._process, self._requests, self._answers = start_python(COMMAND)
        try:
            # A few hundred bytes: the pipe's buffer takes them without waiting.
            self._requests.send_bytes(payload)
        except OSError:
            self.kill()
            self.close()
            raise

    def wait_ready(self) -> _Child | None:
        """This child once it has loaded the embedder, or None if it could not."""
        try:
            if self._receive() == READY:
                return self
        except ChildFailedError:
            pass
        self.close()
        return None

    def _receive(self) -> Any:
        try:
            status, value = self._answers.recv()
        except (EOFError, OSError) as exc:
            raise ChildFailedError(f"the child process exited ({exc!r})") from None
        if status != "ok":
            raise ChildFailedError(str(value))
        return value

    def send(self, items: list[Item], chunk_tokens: int) -> None:
        try:
            self._requests.send((items, chunk_tokens))
        except OSError as exc:
            raise ChildFailedError(f"the child process exited ({exc!r})") from None

    def receive(self, sent: Future[None]) -> Chunked:
        """The answer to the request `sent` (the next one not yet answered)."""
        sent.result()  # a request that could not be sent has no answer coming
        chunked: Chunked = self._receive()
        return chunked

    def kill(self) -> None:
        self._process.kill()

    def close(self) -> None:
        self._requests.close()  # the child's recv sees EOF and it returns
        self._answers.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


# A second child starts once this many times `spawn_after` documents were submitted.
_MORE_AFTER = 8


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _Courier:
    """One child and its two threads (waiting on a pipe frees the GIL): one sends the
    requests, the other reads the answers in the same order. The next batch is sent
    while the child still prepares the one before, so the child never waits for its
    answer to cross the pipe and the next request to come back: with that round trip (a
    megabyte of vectors one way, the texts the other) one child prepared 5,942 passages/s
    of synth-100k, 6,289 without it."""

    def __init__(self, child: _Child, number: int) -> None:
        self.child = child
        self.executor = ThreadPoolExecutor(1, thread_name_prefix=f"sift-prepare-child{number}")
        self.sender = ThreadPoolExecutor(1, thread_name_prefix=f"sift-prepare-send{number}")
        self.ready: Future[_Child | None] = self.executor.submit(child.wait_ready)
        self.closing = False

    def up(self) -> bool:
        """Whether the child is up and ready (not still starting, nor failed to)."""
        return self.ready.done() and self.ready.result() is not None

    def prepare(self, items: list[Item], chunk_tokens: int) -> Future[Chunked]:
        sent = self.sender.submit(self.child.send, items, chunk_tokens)
        return self.executor.submit(self.child.receive, sent)

    def shutdown(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=False)
        self.sender.shutdown(wait=True, cancel_futures=False)

    def close(self) -> None:
        """Closes the child after the batches already sent to it; one still starting is
        killed (not worth waiting for)."""
        if self.closing:
            return
        self.closing = True
        if not self.ready.done():
            self.child.kill()
        self.executor.submit(_close_when_up, self.ready)


def _close_when_up(starting: Future[_Child | None]) -> None:
    child = starting.result()
    if child is not None:
        child.close()


class Preparer:
    """Runs `chunk_and_embed` on batches off the caller's thread. Once `spawn_after`
    documents were submitted (0: never; and never on a single core) it starts a child
    process, and a second one (`children`, at most one per core) once `_MORE_AFTER`
    times as many were; batches submitted after a child is up go to the children in
    turn.

    Why a second child: the caller's process (SQLite, tantivy's indexing thread, the
    grep signatures) needs a little less than a core, and chunking and embedding a
    little more. With one child, the child was a long ingest's critical path: the writer
    waited for it half the time while the cores were a fifth idle. Two children keep
    both cores busy, the scheduler sharing them between the children and the writer
    (100k documents: 183 -> 150 us a passage). A short ingest (the dev corpora, a few
    thousand documents) gets one: there a second child's start-up, a third of a second
    of CPU, cost more than it gave back (0.39x-0.47x of the embedder's pace with two,
    0.46x-0.54x with one, benchmarks/results/store_speed.md).
    """

    def __init__(
        self, embedder: Embedder, chunk_tokens: int, *, spawn_after: int, children: int = 2
    ) -> None:
        self._embedder = embedder
        self._chunk_tokens = chunk_tokens
        cores = _cores()
        self._spawn_after = spawn_after if cores > 1 else 0
        self._wanted = max(1, min(children, cores))
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sift-prepare")
        self._couriers: list[_Courier] = []
        self._payload: bytes | None = None
        self._failed = False  # a child failed, or none could start: the thread does it all
        self._turn = 0
        self._submitted = 0

    def submit(self, items: list[Item]) -> Future[Chunked]:
        self._submitted += len(items)
        started = len(self._couriers)
        if (
            self._spawn_after
            and not self._failed
            and started < self._wanted
            and self._submitted >= self._spawn_after * (_MORE_AFTER if started else 1)
        ):
            self._spawn()
        if not self._failed:
            live = [courier for courier in self._couriers if courier.up()]
            if live:
                courier = live[self._turn % len(live)]
                self._turn += 1
                return courier.prepare(items, self._chunk_tokens)
        return self._in_thread(items)

    def _spawn(self) -> None:
        try:
            if self._payload is None:
                self._payload = pickle.dumps(self._embedder)
            child = _Child(self._payload)
        except Exception:
            # Not picklable (it holds a connection, a lock), or no process to be had:
            # the children already up, else the thread, do it.
            if not self._couriers:
                self._failed = True
            self._wanted = len(self._couriers)
            return
        self._couriers.append(_Courier(child, len(self._couriers)))

    def _in_thread(self, items: list[Item]) -> Future[Chunked]:
        return self._thread.submit(
            chunk_and_embed, items, self._embedder, chunk_tokens=self._chunk_tokens
        )

    def result(self, future: Future[Chunked], items: list[Item]) -> Chunked:
        """The batch's chunks and vectors. A batch a child could not prepare runs again
        in the thread, and so do all later ones (the children are closed)."""
        try:
            return future.result()
        except ChildFailedError:
            self._failed = True
            for courier in self._couriers:
                courier.close()
            return self._in_thread(items).result()

    def close(self) -> None:
        for courier in self._couriers:
            courier.close()
        self._thread.shutdown(wait=True, cancel_futures=True)
        for courier in self._couriers:
            courier.shutdown()
