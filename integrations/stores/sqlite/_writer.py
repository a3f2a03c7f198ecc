"""The store's one-writer lock: `ROOT/writer.lock`, held with `flock` by the process that
writes, its text naming that process (pid, command, host, since when).

Taken before anything of a write (a new store's folders included: two processes that
both found no store each deleted and recreated `lexical/` before tantivy's lock stopped
either), and kept until the store closes. The kernel drops it when its process ends,
however it ends: a killed writer never leaves the store locked. A refused writer is told
who holds it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path

from sift.errors import CorpusError, StoreLockedError
from sift.integrations.stores.sqlite._schema import LOCK_NAME, read_only

__all__ = ["WriterLock", "describe_holder"]


def _command() -> str:
    argv = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else ["python"]
    text = " ".join(argv)
    return text if len(text) <= 200 else text[:200] + "..."


def _holder(path: Path) -> dict[str, object]:
    # The holder writes its text just after taking the lock, and empties the file before
    # letting it go: a refusal in between reads an empty or half-written file, or the
    # text of a holder that was killed (it could not empty it), so it looks again a few
    # times. Before the file was emptied, such a refusal named the previous holder.
    for attempt in range(10):
        try:
            holder = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            holder = {}
        if isinstance(holder, dict) and "pid" in holder and not _gone(holder):
            return holder
        time.sleep(0.005 * (attempt + 1))
    return {}


def _gone(holder: dict[str, object]) -> bool:
    """Whether the text names a process of this host that no longer runs."""
    pid = holder.get("pid")
    if holder.get("host") != socket.gethostname() or not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # it runs, as another user
    return False


def describe_holder(path: Path) -> str:
    """Who holds the lock file at `path`, as its text says (or that it does not say)."""
    holder = _holder(path)
    if "pid" not in holder:
        return "it does not say which"
    where = "" if holder.get("host") == socket.gethostname() else f" on {holder.get('host')}"
    return (
        f"process {holder['pid']}{where} (`{holder.get('command', '?')}`, writing since "
        f"{holder.get('since', '?')})"
    )


class WriterLock:
    """One store's writer lock, as this process holds it or not."""

    def __init__(self, store: Path) -> None:
        self._store = store
        self._file = store / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Takes the lock when no other process holds it; False when one does, or when
        the folder cannot be written (a read-only mount)."""
        if self._fd is not None:
            return True
        try:
            fd = os.open(self._file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT):
                return False
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": _command(),
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        text = json.dumps(holder).encode("utf-8")
        with contextlib.suppress(OSError):  # a full disk: the lock holds without its text
            os.pwrite(fd, text, 0)
            os.ftruncate(fd, len(text))
        return True

    def acquire(self) -> None:
        """Takes the lock, or raises StoreLockedError naming the process that holds it
        (CorpusError when the folder cannot be written at all)."""
        if self.try_acquire():
            return
        if read_only(self._store):
            raise CorpusError(
                f"store {self._store} is read-only (its folder cannot be written): it can "
                "be searched, not written; copy it somewhere writable to change it"
            )
        holder = describe_holder(self._file)
        for _ in range(3):
            if "pid" in _holder(self._file):
                break
            # No holder's text: the holder let go between our try and the read (it
            # empties the file as it does). Try again rather than refuse naming no one.
            if self.try_acquire():
                return
            holder = describe_holder(self._file)
        raise StoreLockedError(
            f"store {self._store} is locked by another process that is writing to it: "
            f"{holder}; one process writes to a store at a time: wait "
            "for it to finish (or stop it), then run this again"
        )

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            # Emptied while still held: the next holder's refusals must not read this
            # process's text as theirs (`_holder`).
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing the descriptor drops the flock
