"""Hooks into the embedded store for tests and benchmarks, reached without its private
modules: the points at which crash and recovery tests interrupt a `SqliteCorpus`.

    store = SqliteCorpus(path)
    interrupt_index_commit(store, "before", lambda: os.kill(os.getpid(), signal.SIGKILL))
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from sift.integrations.stores.sqlite import _derived
from sift.integrations.stores.sqlite._filtering import field_rows
from sift.integrations.stores.sqlite._open import materialise
from sift.integrations.stores.sqlite._store import SqliteCorpus

__all__ = [
    "failing_lexical_catch_up",
    "fields_out_of_step",
    "interrupt_index_commit",
    "reset_lexical_index",
]


def interrupt_index_commit(
    store: SqliteCorpus, when: Literal["before", "after"], action: Callable[[], None]
) -> None:
    """Runs `action` at the store's next BM25 index commits: "before" tantivy commits
    (SQLite has committed), or "after" tantivy committed but before the index records
    which change sequence it holds. `action` is expected not to return (a crash)."""
    materialise(store._s)  # a store opened where none existed is made by its first write
    lexical = store._s.indexes().lexical
    commit = lexical.commit

    def interrupted(seq: int) -> None:
        if when == "before":
            action()
        else:
            # As commit does: the queued additions first. Committing while the lexical
            # thread still adds raced it for tantivy's writer ("Already borrowed", seen
            # once in a clone's run).
            lexical._settle()
            lexical._w().commit()
            action()
        commit(seq)

    lexical.commit = interrupted  # type: ignore[method-assign]


def reset_lexical_index(store: SqliteCorpus) -> None:
    """Empties the store's BM25 index as a rebuild does (without refilling it), so tests
    can make that step fail and see what the store does next."""
    store._s.indexes().lexical.reset()


@contextmanager
def failing_lexical_catch_up(error: BaseException) -> Iterator[None]:
    """While active, opening a store for writing fails with `error` where it brings its
    BM25 index up to date with SQLite, once it holds the index's writer (as a disk that
    fills during the catch-up would make it fail), so tests can see what a failed open
    leaves behind. Opening for reading writes nothing, and does not fail."""
    catch_up = _derived._Lexical.catch_up

    def failing(self: _derived._Lexical, changes: _derived.ChangeLog) -> None:
        if not changes.writer:
            catch_up(self, changes)
            return
        self.index.lock()
        raise error

    _derived._Lexical.catch_up = failing  # type: ignore[method-assign]
    try:
        yield
    finally:
        _derived._Lexical.catch_up = catch_up  # type: ignore[method-assign]


def fields_out_of_step(db: Path) -> list[str]:
    """The documents of the store file `db` whose filter rows (`fields`) are not those
    of their metadata, and "orphan rows" when rows name no document: empty when the
    two agree, as every committed transaction must leave them."""
    conn = sqlite3.connect(db)
    try:
        wrong: list[str] = []
        (orphans,) = conn.execute(
            "SELECT count(*) FROM fields f LEFT JOIN documents d ON d.id = f.doc WHERE d.id IS NULL"
        ).fetchone()
        if orphans:
            wrong.append("orphan rows")
        for doc, doc_id, metadata in conn.execute("SELECT id, doc_id, metadata FROM documents"):
            rows = conn.execute(
                "SELECT doc, name, ord, kind, value, text, listed FROM fields WHERE doc = ? "
                "ORDER BY name, ord",
                (doc,),
            ).fetchall()
            if rows != sorted(field_rows(doc, json.loads(metadata)), key=lambda r: r[1:3]):
                wrong.append(doc_id)
        return wrong
    finally:
        conn.close()
