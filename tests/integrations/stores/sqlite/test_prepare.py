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
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from sift.integrations.embedders import get_embedder
from sift.integrations.stores._documents import Chunked, Item, chunk_and_embed, content_hash
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.integrations.stores.sqlite._prepare import Preparer, _Child, _cores
from sift.integrations.stores.sqlite.testing import children_pace
from sift.types import Document

BODY = "Sentence {j} tells of rivers, 東京の川 and bridges." * 3


def _items(n: int, start: int = 0) -> list[Item]:
    return [
        (f"d{i}", f"Title {i}", BODY.format(j=i) + f" Marker{i}.", {"n": i})
        for i in range(start, n)
    ]


def _same(got: Chunked, want: Chunked) -> None:
    assert got[0] == want[0] and got[2] == want[2] and got[3] == want[3]
    assert got[1].tobytes() == want[1].tobytes()


def _wait_up(preparer: Preparer, count: int) -> list[object]:
    """The preparer's children once `count` of them are up (or failed to start)."""
    for _ in range(1200):
        if len(preparer._couriers) >= count and all(c.ready.done() for c in preparer._couriers):
            break
        time.sleep(0.05)
    return [c.ready.result() for c in preparer._couriers]


def test_children_prepare_exactly_what_the_thread_does_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served: Counter[int] = Counter()
    real = _Child.send

    def counted(child: _Child, items: list[Item], chunk_tokens: int) -> None:
        served[id(child)] += 1
        real(child, items, chunk_tokens)

    monkeypatch.setattr(_Child, "send", counted)
    embedder = get_embedder("static")
    preparer = Preparer(embedder, 24, spawn_after=1, children=2)
    two = _cores() >= 2
    try:
        # The first child starts with the first batch, the second once _MORE_AFTER
        # documents went by; batches go to the thread until a child is up.
        batches = [_items(10 * (b + 1), 10 * b) for b in range(30)]
        futures = [preparer.submit(batch) for batch in batches]
        children = _wait_up(preparer, 2 if two else 1)
        assert all(child is not None for child in children)
        assert len(children) == (2 if two else 1)
        later = [_items(400 + 10 * (b + 1), 400 + 10 * b) for b in range(6)]
        futures += [preparer.submit(batch) for batch in later]
        for batch, future in zip(batches + later, futures, strict=True):
            _same(preparer.result(future, batch), chunk_and_embed(batch, embedder, chunk_tokens=24))
        # The later batches went to the children in turn.
        assert sorted(served.values())[0] >= (3 if two else 6)
        assert len(served) == len(children)
    finally:
        preparer.close()
    for courier in preparer._couriers:
        assert courier.child._process.poll() is not None  # ended, and reaped


def test_a_dead_child_hands_its_batches_back_to_the_thread() -> None:
    embedder = get_embedder("hash")
    preparer = Preparer(embedder, 24, spawn_after=1, children=1)
    try:
        first = _items(5)
        preparer.result(preparer.submit(first), first)
        (child,) = _wait_up(preparer, 1)
        assert isinstance(child, _Child)
        batch = _items(20, 5)
        future = preparer.submit(batch)
        child._process.kill()
        _same(preparer.result(future, batch), chunk_and_embed(batch, embedder, chunk_tokens=24))
        after = _items(30, 20)
        _same(
            preparer.result(preparer.submit(after), after),
            chunk_and_embed(after, embedder, chunk_tokens=24),
        )
        assert preparer._failed  # the thread does the rest
    finally:
        preparer.close()


@pytest.mark.skipif(_cores() < 2, reason="a second child needs a second core")
def test_one_of_two_children_dying_with_batches_queued_loses_none() -> None:
    # Each child has several batches sent ahead (pipelined) when one is killed: every
    # batch still comes back exactly as the thread prepares it, in order, and once the
    # ingest is over neither child is left running.
    embedder = get_embedder("static")
    preparer = Preparer(embedder, 24, spawn_after=1, children=2)
    try:
        for first in (_items(10), _items(20, 10)):  # the second child starts at 8 documents
            preparer.result(preparer.submit(first), first)
        children = _wait_up(preparer, 2)
        assert len(children) == 2 and all(isinstance(c, _Child) for c in children)
        batches = [_items(100 + 60 * (b + 1), 100 + 60 * b) for b in range(8)]
        futures = [preparer.submit(batch) for batch in batches]
        children[0]._process.kill()  # type: ignore[union-attr]
        later = [_items(700 + 20 * (b + 1), 700 + 20 * b) for b in range(3)]
        for batch, future in zip(batches, futures, strict=True):
            _same(preparer.result(future, batch), chunk_and_embed(batch, embedder, chunk_tokens=24))
        for batch in later:
            _same(
                preparer.result(preparer.submit(batch), batch),
                chunk_and_embed(batch, embedder, chunk_tokens=24),
            )
        assert preparer._failed  # the killed child stopped both: the thread did the rest
    finally:
        preparer.close()
    for courier in preparer._couriers:
        assert courier.child._process.poll() is not None


def test_children_still_starting_when_the_ingest_ends_are_stopped() -> None:
    preparer = Preparer(get_embedder("hash"), 24, spawn_after=1, children=2)
    batch = _items(3)
    preparer.result(preparer.submit(batch), batch)  # prepared in the thread
    starting = [c.child for c in preparer._couriers]
    assert starting
    preparer.close()
    assert all(child._process.poll() is not None for child in starting)  # ended, reaped


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
        assert preparer._failed and not preparer._couriers
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
    docs = [Document(id=i, title=t, text=x, metadata=m) for i, t, x, m in _items(300)]
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
        # The children hashed each document as the writer does: the same documents
        # again are all unchanged, and one changed in its metadata alone is updated.
        changed = [*docs[:-1], docs[-1].model_copy(update={"metadata": {"n": -1}})]
        again = store.upsert(changed)
        assert (again.unchanged, again.updated, again.added) == (299, 1, 0)


@pytest.mark.skipif(_cores() < 2, reason="one core: an ingest never starts a child")
def test_children_start_only_for_an_embedder_that_holds_the_gil(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # By default (spawn_after=None) a long ingest moves chunking and embedding to child
    # processes unless the embedder releases the GIL: the static embedder with its C
    # part does, the same embedder on its Python path does not. An explicit spawn_after
    # is obeyed whatever the embedder.
    started: list[str] = []
    real = _Child.__init__

    def counted(child: _Child, payload: bytes) -> None:
        started.append(str(tmp_path))
        real(child, payload)

    monkeypatch.setattr(_Child, "__init__", counted)
    docs = [Document(id=i, title=t, text=x, metadata=m) for i, t, x, m in _items(1300)]
    c_part = get_embedder("static")
    cases = [
        ("python", get_embedder("static", native=False), None, True),
        ("c", c_part, None, not getattr(c_part, "releases_gil", False)),
        ("forced", c_part, 1, True),
    ]
    for name, embedder, spawn_after, children in cases:
        started.clear()
        with SqliteCorpus(
            tmp_path / name, embedder=embedder, batch_docs=100, spawn_after=spawn_after
        ) as store:
            report = store.upsert(docs)
            assert report.added == 1300 and not report.failed, name
            assert [h.chunk.doc_id for h in store.grep("Marker1299", k=3).hits] == ["d1299"]
        assert bool(started) == children, (name, started)


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


def _wait_for_children(parent: subprocess.Popen[str] | subprocess.Popen[bytes]) -> list[int]:
    """The chunk-and-embed children of a PARENT-like ingest, once all have started: the
    first once 20 documents went by, the second (on two cores or more) once 160 did."""
    expected = 2 if _cores() >= 2 else 1
    children: list[int] = []
    for _ in range(600):
        children = _children(parent.pid)
        if len(children) >= expected or parent.poll() is not None:
            break
        time.sleep(0.1)
    assert len(children) == expected, "the ingest did not start its child processes"
    return children


def _ignores_sigint(pid: int) -> bool:
    """Whether process `pid` ignores SIGINT (from /proc/PID/status's SigIgn mask)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ignored = next(line for line in status.splitlines() if line.startswith("SigIgn:"))
    return bool(int(ignored.split()[1], 16) & (1 << (signal.SIGINT - 1)))


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
        children = _wait_for_children(parent)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        for _ in range(300):  # its pipe closed, the child exits
            if all(_gone(pid) for pid in children):
                break
            time.sleep(0.1)
        assert all(_gone(pid) for pid in children)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


INTERRUPTED = PARENT.replace(
    "store.upsert(slow())",
    "try:\n    store.upsert(slow())\n"
    "except KeyboardInterrupt:\n    print('interrupted', file=sys.stderr)",
)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the children")
def test_ctrl_c_interrupts_the_ingest_and_not_its_children(tmp_path: Path) -> None:
    # Ctrl-C in a terminal is SIGINT to the whole process group. The ingest's process
    # takes it (KeyboardInterrupt out of upsert) and closes its children; the children
    # ignore it, so no traceback of theirs lands on the user's terminal.
    parent = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, str(tmp_path / "s")],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        children = _wait_for_children(parent)
        # Each child ignores SIGINT from the first line of its interpreter's code (one
        # still starting would die of it silently, which would prove nothing).
        for _ in range(600):
            if all(_ignores_sigint(pid) for pid in children):
                break
            time.sleep(0.05)
        assert all(_ignores_sigint(pid) for pid in children), "a child does not ignore SIGINT"
        os.killpg(parent.pid, signal.SIGINT)
        _, err = parent.communicate(timeout=120)
        assert parent.returncode == 0, err
        assert "interrupted" in err and "Traceback" not in err, err
        assert all(_gone(pid) for pid in children)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the children")
@pytest.mark.skipif(_cores() < 2, reason="two children need two cores")
def test_children_pace_times_the_children_and_leaves_none_running() -> None:
    # benchmarks/prepare_pool.py's measure: a rate over every item, and the children it
    # started are gone when it returns.
    items = [(doc_id, title, text) for doc_id, title, text, _ in _items(600)]
    rate = children_pace(get_embedder("hash"), items, children=2, batch=100)
    assert 0 < rate < float("inf")
    assert not [pid for pid in _children(os.getpid()) if not _gone(pid)]
    # More children than cores is an error naming both, not a wait for ones never started.
    with pytest.raises(ValueError, match=f"this machine has {_cores()}"):
        children_pace(get_embedder("hash"), items[:10], children=_cores() + 1)


def test_a_document_whose_chunking_fails_is_reported_and_the_batch_still_prepared() -> None:
    # The batch's texts are chunked together; one that breaks chunking (not text at all,
    # as from a caller bypassing Document) sends the batch back to one document at a
    # time, which names it and prepares the rest as alone.
    embedder = get_embedder("hash")
    good = _items(4)
    broken: Item = ("bad", "Title", None, {})  # type: ignore[assignment]
    chunked, vectors, failed, hashes = chunk_and_embed(
        [*good[:2], broken, *good[2:]], embedder, chunk_tokens=24
    )
    assert [doc for doc, _ in failed] == ["bad"] and "chunking failed" in failed[0][1]
    alone = [chunk_and_embed([item], embedder, chunk_tokens=24) for item in good]
    assert [spans for _, spans in chunked] == [c[0][0][1] for c in alone]
    assert [position for position, _ in chunked] == [0, 1, 3, 4]
    # Each prepared document's content hash, made beside its chunks, is the one the
    # store compares a later ingest of the same document with.
    docs = [Document(id=i, title=t, text=x, metadata=m) for i, t, x, m in good]
    assert hashes == [content_hash(doc) for doc in docs] and len(set(hashes)) == 4
    assert vectors.tobytes() == np.concatenate([c[1] for c in alone]).tobytes()
