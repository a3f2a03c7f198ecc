"""A derived index whose files are damaged (bytes flipped on disk, files removed under a
running process): its engine fails inside a query, and the store rebuilds that index
from SQLite and answers, rather than failing every query until it is reopened.

tantivy reports damage as ValueError ("An IO error occurred: ...") or, where its
assertions catch it, as a Rust panic: pyo3's PanicException, which derives from
BaseException, not Exception, so an `except Exception` lets it through as a crash.
`engine_calls` turns either into `IndexDamagedError`, naming the index.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from sift.errors import IndexDamagedError

__all__ = ["INDEX_KINDS", "IndexKind", "engine_calls", "engine_failure", "index_damaged"]

IndexKind = Literal["lexical", "vectors", "trigrams"]
INDEX_KINDS: tuple[IndexKind, ...] = ("lexical", "vectors", "trigrams")


def engine_failure(exc: BaseException) -> bool:
    """Whether `exc`, raised inside an index engine's call, says the index is unusable:
    an I/O or format error, or a panic (pyo3's PanicException, matched by name: pyo3
    makes the class at run time and exports it from no module)."""
    if isinstance(exc, OSError | ValueError | RuntimeError):
        return True
    kind = type(exc)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


@contextmanager
def engine_calls(kind: IndexKind, what: str) -> Iterator[None]:
    """Runs an engine's calls on index `kind` (`what` names its files, for the message),
    raising IndexDamagedError for a failure that says the index is unusable."""
    try:
        yield
    except BaseException as exc:
        if not engine_failure(exc):
            raise
        # Without the traceback: its frames would keep the engine's objects alive.
        raise index_damaged(
            kind, f"{what} is damaged ({type(exc).__name__}: {str(exc)[:300]})"
        ) from None


def index_damaged(kind: IndexKind, message: str) -> IndexDamagedError:
    """The error that makes the store rebuild index `kind` from SQLite (`_open.heal`)."""
    return IndexDamagedError(message, kind)
