"""Chunking and embedding beside the store's writes: the ingest's first stage.

Batches are chunked and embedded in a worker thread while the caller's thread writes the
batch before. Both are mostly Python, so they share one core (the GIL); once an ingest is
long enough to pay for starting one (`spawn_after` documents), later batches go to a
child process instead, which gives chunking and embedding a core of their own.

The child is a fresh interpreter (`python -c`, started by
`sift.integrations.interpreters`: never a fork of this multi-threaded process, and never
a re-run of the caller's main module as multiprocessing's spawn would do) that reads
requests from a pipe. It gets its own copy of the embedder
(pickled: an embedder that cannot be pickled, one holding an HTTP client say, stays in
the thread) and only plain data crosses: (id, title, text) in, spans and vectors out. A
child that dies or fails a batch is stopped, and that batch and the rest run in the
thread. SQLite, the change log and every index are written by the caller's process
alone, so the store's crash safety does not depend on the child; the child exits when
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
    """A child interpreter running `serve`, driven one request at a time from the
    courier thread; only `kill` may come from another thread."""

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

    def prepare(self, items: list[Item], chunk_tokens: int) -> Chunked:
        try:
            self._requests.send((items, chunk_tokens))
        except OSError as exc:
            raise ChildFailedError(f"the child process exited ({exc!r})") from None
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


def _close_when_up(starting: Future[_Child | None]) -> None:
    child = starting.result()
    if child is not None:
        child.close()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Preparer:
    """Runs `chunk_and_embed` on batches off the caller's thread. Once `spawn_after`
    documents were submitted (0: never; and never on a single core) it starts a child
    process, and sends it the batches submitted after the child is up."""

    def __init__(self, embedder: Embedder, chunk_tokens: int, *, spawn_after: int) -> None:
        self._embedder = embedder
        self._chunk_tokens = chunk_tokens
        self._spawn_after = spawn_after if _cores() > 1 else 0
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sift-prepare")
        # Talks to the child, one batch at a time (waiting on the pipe frees the GIL).
        self._courier = ThreadPoolExecutor(1, thread_name_prefix="sift-prepare-child")
        self._starting: _Child | None = None
        self._child: Future[_Child | None] | None = None  # done once the child is up
        self._submitted = 0

    def submit(self, items: list[Item]) -> Future[Chunked]:
        self._submitted += len(items)
        if self._child is None and self._spawn_after and self._submitted >= self._spawn_after:
            self._spawn()
        if self._child is not None and self._child.done():
            child = self._child.result()
            if child is not None:
                return self._courier.submit(child.prepare, items, self._chunk_tokens)
        return self._in_thread(items)

    def _spawn(self) -> None:
        try:
            payload = pickle.dumps(self._embedder)
            self._starting = _Child(payload)
        except Exception:
            # Not picklable (it holds a connection, a lock), or no process to be had:
            # the thread does it all.
            self._child = _no_child()
            return
        self._child = self._courier.submit(self._starting.wait_ready)

    def _in_thread(self, items: list[Item]) -> Future[Chunked]:
        return self._thread.submit(
            chunk_and_embed, items, self._embedder, chunk_tokens=self._chunk_tokens
        )

    def result(self, future: Future[Chunked], items: list[Item]) -> Chunked:
        """The batch's chunks and vectors. A batch the child could not prepare runs
        again in the thread, and so do all later ones."""
        try:
            return future.result()
        except ChildFailedError:
            self._stop_child()
            return self._in_thread(items).result()

    def _stop_child(self) -> None:
        """Routes later batches to the thread and closes the child, on the courier's
        thread (after the batches already sent to it), which alone touches its pipes."""
        if self._child is not None and self._child.done():
            child = self._child.result()
            if child is not None:
                self._courier.submit(child.close)
        self._child = _no_child()

    def close(self) -> None:
        if self._child is not None and not self._child.done() and self._starting is not None:
            # Still starting when the ingest ended: not worth waiting for.
            self._starting.kill()
        self._stop_child_when_up()
        self._thread.shutdown(wait=True, cancel_futures=True)
        self._courier.shutdown(wait=True, cancel_futures=False)

    def _stop_child_when_up(self) -> None:
        if self._child is not None:
            self._courier.submit(_close_when_up, self._child)
            self._child = _no_child()


def _no_child() -> Future[_Child | None]:
    done: Future[_Child | None] = Future()
    done.set_result(None)
    return done
