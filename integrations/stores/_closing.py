"""Closing a store: every resource is released even when one of them fails, and what
failed is reported, never swallowed. A store whose opening fails releases what it had
opened before the error propagates."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from sift.errors import CorpusError

__all__ = ["close_on_exit", "release_all", "release_quietly", "released_on_failure"]


class _Opening(Protocol):
    def _release_after_failed_open(self) -> None: ...


S = TypeVar("S", bound=_Opening)
P = ParamSpec("P")

_log = logging.getLogger("sift.integrations.stores")

Step = tuple[str, Callable[[], object]]


def release_all(what: str, steps: Iterable[Step]) -> None:
    """Runs every (description, step); then CorpusError naming each step that failed."""
    failures = []
    for name, step in steps:
        try:
            step()
        except Exception as exc:
            failures.append(f"{name} failed ({type(exc).__name__}: {exc})")
    if failures:
        raise CorpusError(f"{what} was closed, but {'; '.join(failures)}")


def release_quietly(what: str, steps: Iterable[Step]) -> None:
    """`release_all` while another error is already on its way out: a failure to release
    is logged rather than raised, so that it does not hide the error that matters."""
    try:
        release_all(what, steps)
    except CorpusError as failure:
        _log.warning("%s", failure)


def close_on_exit(close: Callable[[], None], error: BaseException | None) -> None:
    """A store's `__exit__`: close, raising a close failure unless the block is already
    leaving with an error, which the failure must not replace (it is logged instead)."""
    if error is None:
        close()
        return
    try:
        close()
    except CorpusError as failure:
        _log.warning("%s (while leaving on %s: %s)", failure, type(error).__name__, error)


def released_on_failure(
    init: Callable[Concatenate[S, P], None],
) -> Callable[Concatenate[S, P], None]:
    """Decorates a store's `__init__`: when it raises, the store's
    `_release_after_failed_open()` (which must not raise) releases what it had opened
    (connections, file locks), so the location can be reopened or removed at once rather
    than whenever the half-made object is collected."""

    @functools.wraps(init)
    def opening(self: S, *args: P.args, **kwargs: P.kwargs) -> None:
        try:
            init(self, *args, **kwargs)
        except BaseException:
            self._release_after_failed_open()
            raise

    return opening
