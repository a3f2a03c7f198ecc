"""The embedded store's SQLite connections: one per thread, each closed when its thread
has ended or the store closes."""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from sift.errors import CorpusError
from sift.integrations.stores.sqlite._schema import DB_NAME, connect

__all__ = ["Connections"]

log = logging.getLogger("sift.integrations.stores")


class Connections:
    """Every thread's connection to one store's SQLite file, with its thread: a connection
    whose thread has ended is closed when the next one is opened (episodes run store
    calls on short-lived pools, and each connection holds up to 64 MB of page cache)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._local = threading.local()
        self._conns: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._lock = threading.Lock()
        self.closed = False

    def get(self) -> sqlite3.Connection:
        """This thread's connection, opened on its first use; CorpusError once closed."""
        if self.closed:
            raise CorpusError(f"store {self._path} is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self._path / DB_NAME)
            self._local.conn = conn
            with self._lock:
                self._close_ended_threads_connections()
                self._conns.append((threading.current_thread(), conn))
        return conn

    def close_all(self) -> None:
        """Closes every thread's connection (a later `get` opens a new one); the first
        failure is raised after all were tried."""
        failed: list[sqlite3.Error] = []
        with self._lock:
            for _, conn in self._conns:
                try:
                    conn.close()
                except sqlite3.Error as exc:
                    failed.append(exc)
            self._conns.clear()
        self._local = threading.local()
        if failed:
            raise failed[0]

    def _close_ended_threads_connections(self) -> None:
        """Closes the connections whose threads have ended (no thread uses them again:
        each thread only ever uses its own). Called with `_lock` held."""
        alive: list[tuple[threading.Thread, sqlite3.Connection]] = []
        for thread, conn in self._conns:
            if thread.is_alive():
                alive.append((thread, conn))
                continue
            try:
                conn.close()
            except sqlite3.Error:
                # The connection is dropped either way; nothing of it is left to close.
                log.warning("store %s: closing an ended thread's connection failed", self._path)
        self._conns = alive
