"""The ingest's chunk-and-embed stage (sift.integrations.stores.sqlite._prepare): the same
chunks and vectors from the child process as in the thread, in order, and a failing or
dying child costs nothing but speed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sift.integrations.embedders import get_embedder
from sift.integrations.stores._documents import Item, chunk_and_embed
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.integrations.stores.sqlite._prepare import Preparer
from sift.types import Document

BODY = "Sentence {j} tells of rivers, 東京の川 and bridges." * 3


def _items(n: int, start: int = 0) -> list[Item]:
    return [(f"d{i}", f"Title {i}", BODY.format(j=i) + f" Marker{i}.") for i in range(start, n)]


def _same(got: tuple[object, np.ndarray, object], want: tuple[object, np.ndarray, object]) -> None:
    assert got[0] == want[0] and got[2] == want[2]
    assert got[1].tobytes() == want[1].tobytes()


def test_child_prepares_exactly_what_the_thread_does_in_order() -> None:
    embedder = get_embedder("static")
    preparer = Preparer(embedder, 24, spawn_after=1)
    try:
        batches = [_items(10 * (b + 1), 10 * b) for b in range(30)]
        futures = [preparer.submit(batch) for batch in batches]
        # Keep submitting until the child is up, then a few more go through it.
        for _ in range(1200):
            if preparer._child is not None and preparer._child.done():
                break
            time.sleep(0.05)
        assert preparer._child is not None and preparer._child.result() is not None
        later = [_items(400 + 10 * (b + 1), 400 + 10 * b) for b in range(3)]
        futures += [preparer.submit(batch) for batch in later]
        for batch, future in zip(batches + later, futures, strict=True):
            _same(preparer.result(future, batch), chunk_and_embed(batch, embedder, chunk_tokens=24))
    finally:
        preparer.close()


def test_a_dead_child_hands_its_batches_back_to_the_thread() -> None:
    embedder = get_embedder("hash")
    preparer = Preparer(embedder, 24, spawn_after=1)
    try:
        first = _items(5)
        preparer.result(preparer.submit(first), first)
        assert preparer._child is not None
        child = preparer._child.result()
        assert child is not None
        batch = _items(20, 5)
        future = preparer.submit(batch)
        child._process.kill()
        _same(preparer.result(future, batch), chunk_and_embed(batch, embedder, chunk_tokens=24))
        after = _items(30, 20)
        _same(
            preparer.result(preparer.submit(after), after),
            chunk_and_embed(after, embedder, chunk_tokens=24),
        )
        assert preparer._child.result() is None  # the thread does the rest
    finally:
        preparer.close()


def test_a_child_still_starting_when_the_ingest_ends_is_stopped() -> None:
    preparer = Preparer(get_embedder("hash"), 24, spawn_after=1)
    batch = _items(3)
    preparer.result(preparer.submit(batch), batch)  # prepared in the thread
    starting = preparer._starting
    assert starting is not None
    preparer.close()
    assert starting._process.poll() is not None  # ended, and reaped


class _Unpicklable:
    """An embedder holding a lock (as an HTTP client does): it cannot go to a child."""

    name = "hash:64"
    dim = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inner = get_embedder("hash:64")

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return self._inner.embed(texts)


def test_an_embedder_that_cannot_be_pickled_stays_in_the_thread() -> None:
    preparer = Preparer(_Unpicklable(), 24, spawn_after=1)  # type: ignore[arg-type]
    try:
        for start in range(0, 40, 10):
            batch = _items(start + 10, start)
            assert preparer.result(preparer.submit(batch), batch)[0]
        assert preparer._child is not None and preparer._child.result() is None
    finally:
        preparer.close()


def _rows(path: Path) -> list[tuple[object, ...]]:
    import sqlite3

    conn = sqlite3.connect(path / "sift.db")
    rows = conn.execute(
        "SELECT d.doc_id, c.idx, c.text, c.start, c.end, c.tokens, v.v FROM chunks c "
        "JOIN documents d ON d.id = c.doc JOIN vectors v ON v.id = c.id ORDER BY c.id"
    ).fetchall()
    conn.close()
    return rows


def test_a_store_ingested_with_a_child_equals_one_ingested_without(tmp_path: Path) -> None:
    docs = [Document(id=i, title=t, text=x) for i, t, x in _items(300)]
    for name, spawn_after in (("thread", 0), ("child", 1)):
        with SqliteCorpus(
            tmp_path / name,
            embedder="static",
            chunk_tokens=24,
            batch_docs=20,
            spawn_after=spawn_after,
        ) as store:
            report = store.upsert(docs)
            assert report.added == 300 and not report.failed
    assert _rows(tmp_path / "thread") == _rows(tmp_path / "child")
    with SqliteCorpus(tmp_path / "child") as store:
        assert [h.chunk.doc_id for h in store.grep("Marker29[0-9]", k=20).hits] == [
            f"d{i}" for i in range(290, 300)
        ]


PARENT = textwrap.dedent(
    """
    import sys, time
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    def slow():
        for i in range(100_000):
            if i > 200:
                time.sleep(0.01)
            yield Document(id=f"d{i}", text=f"Words of document {i} about rivers.")

    store = SqliteCorpus(sys.argv[1], embedder="hash", batch_docs=10, spawn_after=20)
    store.upsert(slow())
    """
)


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if int(stat[1]) == pid and b"_child import serve" in cmdline:
                found.append(int(entry))
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the child")
def test_the_child_exits_when_the_ingest_is_killed(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path / "s")])
    try:
        children: list[int] = []
        for _ in range(600):  # the child starts once 20 documents went by
            children = _children(parent.pid)
            if children or parent.poll() is not None:
                break
            time.sleep(0.1)
        assert children, "the ingest started no child process"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        for _ in range(300):  # its pipe closed, the child returns
            if all(_gone(pid) for pid in children):
                break
            time.sleep(0.1)
        assert all(_gone(pid) for pid in children)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
