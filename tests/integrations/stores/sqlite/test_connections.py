"""The embedded store's SQLite connections: one per thread, and none kept for a thread
that has ended (an episode's store calls run on a short-lived pool)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document


def open_db_files(folder: Path) -> int:
    """File descriptors of this process open on the store's sift.db."""
    db = str((folder / "sift.db").resolve())
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == db:
                count += 1
        except OSError:
            continue  # closed while listing
    return count


def test_connections_of_ended_threads_are_closed(tmp_path: Path) -> None:
    path = tmp_path / "ストア"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(
            [
                Document(id="en", title="Etna", text="Mount Etna is a volcano on Sicily."),
                Document(id="ja", title="富士山", text="富士山は日本最高峰の火山である。"),
            ]
        )
        before = open_db_files(path)
        hits: list[str] = []

        def search(question: str) -> None:
            hits.extend(h.chunk.doc_id for h in store.search(question, k=1, mode="bm25"))

        for round_ in range(40):
            question = "volcano Sicily" if round_ % 2 else "日本最高峰"
            worker = threading.Thread(target=search, args=(question,))
            worker.start()
            worker.join()
        # Every thread searched on a connection of its own...
        assert hits == ["ja", "en"] * 20
        # ...and the ended threads' connections were closed as new threads opened theirs
        # (40 were opened in all). SQLite may hold a closed connection's file open a
        # while for reuse (POSIX locks are per process), so a few stay, not 40.
        assert open_db_files(path) <= before + 3
        # The store's own thread still works, on its connection.
        assert store.search("volcano", k=1, mode="bm25")[0].chunk.doc_id == "en"
    assert open_db_files(path) == 0
