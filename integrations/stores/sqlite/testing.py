"""Hooks into the embedded store for tests and benchmarks, reached without its private
modules: the points at which crash and recovery tests interrupt a `SqliteCorpus`, and the
pace of the ingest's chunk-and-embed children on their own.

    store = SqliteCorpus(path)
    interrupt_index_commit(store, "before", lambda: os.kill(os.getpid(), signal.SIGKILL))
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

from sift.integrations.stores.sqlite._prepare import Preparer, _cores
from sift.integrations.stores.sqlite._store import SqliteCorpus

if TYPE_CHECKING:
    from sift.integrations.stores._documents import Item
    from sift.protocols import Embedder

__all__ = [
    "children_pace",
    "failing_lexical_catch_up",
    "interrupt_index_commit",
    "reset_lexical_index",
]


def interrupt_index_commit(
    store: SqliteCorpus, when: Literal["before", "after"], action: Callable[[], None]
) -> None:
    """Runs `action` at the store's next BM25 index commits: "before" tantivy commits
    (SQLite has committed), or "after" tantivy committed but before the index records
    which change sequence it holds. `action` is expected not to return (a crash)."""
    store._materialise()  # a store opened where none existed is made by its first write
    lexical = store._lexical
    commit = lexical.commit

    def interrupted(seq: int) -> None:
        if when == "before":
            action()
        else:
            lexical._w().commit()
            action()
        commit(seq)

    lexical.commit = interrupted  # type: ignore[method-assign]


def reset_lexical_index(store: SqliteCorpus) -> None:
    """Empties the store's BM25 index as a rebuild does (without refilling it), so tests
    can make that step fail and see what the store does next."""
    store._lexical.reset()


@contextmanager
def failing_lexical_catch_up(error: BaseException) -> Iterator[None]:
    """While active, opening a store fails with `error` where it brings its BM25 index up
    to date with SQLite, once it holds the index's writer (as a disk that fills during the
    catch-up would make it fail), so tests can see what a failed open leaves behind."""
    catch_up = SqliteCorpus._catch_up_lexical

    def failing(self: SqliteCorpus) -> None:
        self._lexical.lock()
        raise error

    SqliteCorpus._catch_up_lexical = failing  # type: ignore[method-assign]
    try:
        yield
    finally:
        SqliteCorpus._catch_up_lexical = catch_up  # type: ignore[method-assign]


def children_pace(
    embedder: Embedder,
    items: Sequence[tuple[str, str, str]],
    *,
    children: int,
    chunk_tokens: int = 512,
    batch: int = 512,
) -> float:
    """Documents per second that `children` chunk-and-embed child processes of an ingest
    (as `SqliteCorpus.upsert` starts them) prepare `items`, (id, title, text), at: every
    batch submitted at once, no writer, the children up before the clock starts.
    ValueError when this machine has fewer cores than `children` or only one (an ingest
    there starts fewer, or none)."""
    cores = _cores()
    if cores < 2 or children > cores:
        raise ValueError(
            f"{children} chunk-and-embed children need {max(2, children)} cores or more; "
            f"this machine has {cores}"
        )
    prepared: list[Item] = [(doc_id, title, text, {}) for doc_id, title, text in items]
    preparer = Preparer(embedder, chunk_tokens, spawn_after=1, children=children)
    try:
        # Small batches until every child is up; the second starts after 8 documents.
        probe = prepared[:8]
        for _ in range(600):
            preparer.result(preparer.submit(probe), probe)
            if preparer._failed:
                raise RuntimeError("the chunk-and-embed children could not start or failed")
            couriers = preparer._couriers
            if len(couriers) >= children and all(c.up() for c in couriers):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError(f"{children} child process(es) did not start within 30 s")
        batches = [prepared[i : i + batch] for i in range(0, len(prepared), batch)]
        start = time.perf_counter()
        futures = [preparer.submit(part) for part in batches]
        for future, part in zip(futures, batches, strict=True):
            preparer.result(future, part)
        return len(items) / (time.perf_counter() - start)
    finally:
        preparer.close()
