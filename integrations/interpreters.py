"""Child interpreters driven over two pipes: the HTTP service's search processes
(`http/_processes.py`).

A child is a fresh interpreter (`python -c COMMAND`): never a fork of the caller's
multi-threaded process, and never a re-run of the caller's main module as
multiprocessing's spawn would do. It reads requests from one pipe and answers on the
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
from multiprocessing.connection import Connection

__all__ = ["child_pipes", "start_python"]

# Before anything is imported; the window left is the interpreter's own start-up.
_IGNORE_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "


def start_python(command: str) -> tuple[subprocess.Popen[bytes], Connection, Connection]:
    """Starts `python -c command`; returns the process, the pipe to send it requests on
    and the pipe to read its answers from."""
    down_read, down_write = os.pipe()
    up_read, up_write = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _IGNORE_SIGINT + command, str(down_read), str(up_write)],
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
