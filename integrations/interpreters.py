"""Child interpreters driven over two pipes: the HTTP service's search processes
(`http/_processes.py`).

A child is a fresh interpreter (`python -P -c COMMAND`): never a fork of the caller's
multi-threaded process, and never a re-run of the caller's main module as
multiprocessing's spawn would do. `-P` keeps the current folder off its import path
(plain `-c` puts it first): a folder named `sift` where the user runs a command must not
run inside every child. The environment (PYTHONPATH included) is kept: a child imports
what its parent does. It reads requests from one pipe and answers on the
other; when the request pipe closes (the parent ended, even by SIGKILL) its next read
sees EOF, so it never outlives its parent.

A child ignores SIGINT from its first line: Ctrl-C in a terminal reaches the whole
process group, the parent handles it and closes the pipes, and a child interrupted
itself printed a KeyboardInterrupt traceback over the user's terminal (one per
child).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection

__all__ = ["child_pipes", "safe_path_children", "start_python"]

# Before anything is imported; the window left is the interpreter's own start-up.
_IGNORE_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "


def start_python(command: str) -> tuple[subprocess.Popen[bytes], Connection, Connection]:
    """Starts `python -P -c command`; returns the process, the pipe to send it requests on
    and the pipe to read its answers from."""
    down_read, down_write = os.pipe()
    up_read, up_write = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-P", "-c", _IGNORE_SIGINT + command, str(down_read), str(up_write)],
            pass_fds=(down_read, up_write),
            stdin=subprocess.DEVNULL,
        )
    except BaseException:
        for fd in (down_read, down_write, up_read, up_write):
            os.close(fd)
        raise
    os.close(down_read)
    os.close(up_write)
    return process, Connection(down_write, readable=False), Connection(up_read, writable=False)


def child_pipes() -> tuple[Connection, Connection]:
    """In a child `start_python` started: its request pipe and its answer pipe."""
    return (
        Connection(int(sys.argv[1]), writable=False),
        Connection(int(sys.argv[2]), readable=False),
    )


_SAFE_PATH = "PYTHONSAFEPATH"
_safe_path_lock = threading.Lock()
# How many `safe_path_children` are open, and the variable's value before the first.
_safe_path_users = 0
_safe_path_saved: str | None = None


@contextmanager
def safe_path_children() -> Iterator[None]:
    """While open, every Python child started (a `multiprocessing` spawn child, its
    resource tracker) runs as with `-P`: the folder the user runs sift in stays off its
    import path. multiprocessing starts a child with `python -c ...`, which puts that
    folder first, so a `threading.py` there was imported by every PDF reader of `sift
    index` (which then called valid PDFs malformed); multiprocessing passes `-P` on only
    from a parent itself run with it, so the child learns it from the environment
    (PYTHONSAFEPATH, Python 3.11+), set for as long as children are being started."""
    global _safe_path_users, _safe_path_saved
    with _safe_path_lock:
        if _safe_path_users == 0:
            _safe_path_saved = os.environ.get(_SAFE_PATH)
            os.environ[_SAFE_PATH] = "1"
        _safe_path_users += 1
    try:
        yield
    finally:
        with _safe_path_lock:
            _safe_path_users -= 1
            if _safe_path_users == 0:
                if _safe_path_saved is None:
                    os.environ.pop(_SAFE_PATH, None)
                else:
                    os.environ[_SAFE_PATH] = _safe_path_saved
