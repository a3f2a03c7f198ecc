"""The entity index's extraction in a worker process beside the writer.

Finding a chunk's entities is Python regular expressions and string work (about 70 us an
English passage) and holds the GIL: done in the writer's thread it added 60-70 % to an
English ingest, because the writer, the chunker and the embedder already share the
interpreter. A child process does it on another core while the writer goes on
(benchmarks/results/entity_graph.md has the figures; docs/decisions/0015 says why).

The child is `sift.entities.worker_command()`, not a `multiprocessing` child:
those import the caller's main module again, and a script without an `if __name__ ==
"__main__"` guard would run its ingest twice. It reads the pickled `EntityLimits`, then
pickled batches of (title, text) on stdin, and answers each with the pickled (keys, how
many are the title's) of every text on stdout. It imports only the extraction and the
standard library (about 0.05 s, where importing `sift` took 0.2 s of a core the writer
also uses).

The child is started only when the caller says a run of at least the configuration's
`worker_min_chunks` chunks is coming (`prepare`): a write that has read that many
documents and goes on, a rebuild of more than one batch. A shorter run is extracted in
the caller's thread: below about 2,400 documents the child saved nothing (its start,
and the core it takes from the writer). And a run that ends before the child has
answered anything does not wait for it: the caller extracts what is queued and the
child is killed (a write of 300 documents took twice as long when it waited for the
child's imports).

If the child cannot start or dies, every batch it had not answered is extracted in the
caller's thread, a warning says so, and this extractor does not start another: the
rows are the same either way.
"""

from __future__ import annotations

import logging
import pickle
import subprocess
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from sift.entities import EntityLimits, graph_row, worker_command

__all__ = ["Extractor"]

_log = logging.getLogger(__name__)
# Batches the child may have unanswered before `submit` waits for the oldest: the child
# is slower than the writer (and than reading SQLite on a rebuild), and every queued
# batch holds its texts, so without a bound a large ingest or rebuild would hold most
# of the corpus's text in memory.
_MAX_UNANSWERED = 4

# A chunk to extract: its rowid, chunk id, its document's title, its text.
Input = tuple[int, str, str, str]
# What comes back, row for row: (chunk id, keys, how many keys are the title's).
Row = tuple[str, list[str], int]


class Extractor:
    """Batches of chunks in, their entity rows out in the order the batches went in."""

    def __init__(self, limits: EntityLimits, min_chunks: int) -> None:
        self._limits = limits
        self._min = min_chunks
        self._child: subprocess.Popen[bytes] | None = None
        # One thread sends a batch and waits for its answer, batch after batch: the
        # child reads a whole batch before it writes, so neither end blocks the other.
        self._sender: ThreadPoolExecutor | None = None
        self._queue: deque[tuple[Future[list[Row]] | None, list[Input], list[Row]]] = deque()
        self._lock = threading.Lock()
        self._broken = False
        # Batches the current child has answered: none yet means it is still starting.
        self._answered = 0
        self.started = 0  # children started (the tests read it)

    def submit(self, inputs: list[Input]) -> None:
        """Queues a batch: to the child when one runs, else extracted now."""
        if not inputs:
            return
        with self._lock:
            if self._child is not None:
                assert self._sender is not None
                # The child goes with the batch: once it is given up (`_stop`), a batch
                # already under way fails on its closed pipes, not on a missing child.
                future = self._sender.submit(self._roundtrip, self._child, inputs)
                self._queue.append((future, inputs, []))
                self._bound()
                return
            # Behind the child's batches, so the order holds.
            self._queue.append((None, inputs, self._extract(inputs)))

    def prepare(self, chunks: int) -> None:
        """Starts the child when a run of at least `chunks` chunks is coming and that is
        at least `min_chunks`: its start (about 0.05 s) hides behind the writer's batch
        in hand."""
        with self._lock:
            if self._child is None and not self._broken and 0 < self._min <= chunks:
                self._start()

    def busy(self) -> bool:
        """Whether a batch is queued whose rows have not been taken."""
        with self._lock:
            return bool(self._queue)

    def take(self, *, wait: bool) -> list[tuple[int, Row]]:
        """The rows of the batches done, in order (`wait`: of every batch queued), as
        (rowid, row)."""
        out: list[tuple[int, Row]] = []
        with self._lock:
            if wait:
                self._share()
            while self._queue:
                future, inputs, rows = self._queue[0]
                if future is not None:
                    if not wait and not future.done():
                        break
                    rows = self._answer(future, inputs)
                self._queue.popleft()
                out += zip((rowid for rowid, *_ in inputs), rows, strict=True)
        return out

    def stop(self) -> None:
        """Ends the child (after `take(wait=True)`: nothing is lost if not); the next run
        starts another if `prepare` says it is long enough."""
        with self._lock:
            self._stop()

    # ------------------------------------------------------------------ internals

    def _share(self) -> None:
        """Extracts here the batches the child has not begun, from the last one back,
        while it works from the first: when the writer is done, the two finish the
        queue together instead of the writer waiting for the child alone. A child that
        has answered nothing yet is still importing: every batch is extracted here and
        the child is killed, so a run never waits for a child's start."""
        starting = self._child is not None and self._answered == 0
        while self._take_back_newest():
            pass
        if starting:
            # The batch it has begun too: nothing waits for a child's start.
            for i, (future, inputs, _) in enumerate(self._queue):
                if future is not None:
                    self._queue[i] = (None, inputs, self._extract(inputs))
            self._stop(kill=True)

    def _bound(self) -> None:
        """Waits while more than `_MAX_UNANSWERED` batches wait for the child (their rows
        are taken by the next `take`). While the child has answered nothing (it is
        starting, or does not start at all) the writer extracts the newest batches
        itself instead of waiting for it."""
        while True:
            unanswered = [f for f, _, _ in self._queue if f is not None and not f.done()]
            if len(unanswered) <= _MAX_UNANSWERED:
                return
            if self._answered == 0 and self._take_back_newest():
                continue
            wait(unanswered[:1])

    def _take_back_newest(self) -> bool:
        """Extracts here the newest batch the child has not begun; False if none."""
        for i in range(len(self._queue) - 1, -1, -1):
            future, inputs, _ = self._queue[i]
            if future is not None and future.cancel():
                self._queue[i] = (None, inputs, self._extract(inputs))
                return True
        return False

    def _extract(self, inputs: list[Input]) -> list[Row]:
        return [graph_row(cid, title, text, self._limits) for _, cid, title, text in inputs]

    def _start(self) -> bool:
        try:
            child = subprocess.Popen(
                worker_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        except OSError as exc:
            self._give_up(f"it could not start ({exc})")
            return False
        self._child = child
        self._answered = 0
        self._sender = ThreadPoolExecutor(1, thread_name_prefix="sift-entities")
        self._sender.submit(self._send, child, self._limits)
        self.started += 1
        return True

    @staticmethod
    def _send(child: subprocess.Popen[bytes], value: Any) -> None:
        assert child.stdin is not None
        pickle.dump(value, child.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        child.stdin.flush()

    def _roundtrip(self, child: subprocess.Popen[bytes], inputs: list[Input]) -> list[Row]:
        assert child.stdout is not None
        self._send(child, [(title, text) for _, _, title, text in inputs])
        found: list[tuple[list[str], int]] = pickle.load(child.stdout)
        if len(found) != len(inputs):
            raise EOFError(f"{len(found)} answers for {len(inputs)} chunks")
        self._answered += 1  # only this thread writes it
        return [
            (cid, keys, n_title)
            for (_, cid, _, _), (keys, n_title) in zip(inputs, found, strict=True)
        ]

    def _answer(self, future: Future[list[Row]], inputs: list[Input]) -> list[Row]:
        try:
            return future.result()
        except Exception as exc:  # whatever went wrong, the fallback is the same
            # The child died, broke the protocol or was stopped: this batch and every
            # later one are extracted here (their futures fail the same way). An error
            # of the extraction itself is raised here again, as without the child.
            code = self._child.poll() if self._child is not None else None
            self._give_up(f"it stopped ({type(exc).__name__}: {exc}; exit code {code})")
            return self._extract(inputs)

    def _give_up(self, why: str) -> None:
        if not self._broken:
            _log.warning(
                "the entity extraction's worker process is not used: %s; extracting in "
                "the writer's thread",
                why,
            )
        self._broken = True
        self._stop()

    def _stop(self, *, kill: bool = False) -> None:
        child, sender = self._child, self._sender
        self._child = self._sender = None
        if sender is not None:
            sender.shutdown(wait=False, cancel_futures=True)
        if child is None:
            return
        # Closing its stdin ends it (it reads EOF); a child that does not go, or that
        # would first finish its imports for nothing (`kill`), is killed. Its stdout is
        # closed last: a read of it under way then ends at EOF.
        if kill:
            child.kill()
        try:
            if child.stdin is not None:
                child.stdin.close()
        except OSError:
            pass
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
