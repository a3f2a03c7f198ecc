"""The entity index's worker process: the graph it gives is the writer's thread's, and a
worker that cannot start or dies costs nothing but the time."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

CITIES = ["札幌", "仙台", "金沢", "名古屋", "京都", "神戸", "広島", "福岡", "熊本", "那覇"]
# English and Japanese pages that name each other, in enough documents for several
# batches of `batch_docs=8`.
DOCS = [
    Document(
        id=f"town-{i}",
        title=f"Town {i}",
        text=f'Town {i} lies on the "River {i % 7}" near Marker{i} in Finland, founded on '
        f"3 March {1800 + i}. It is twinned with Town {(i + 1) % 40}.",
    )
    for i in range(40)
] + [
    Document(
        id=f"ja-{i}",
        title=f"{city}タワー",
        text=f"{city}タワーは{city}市にある電波塔。設計は『日建設計』、{1950 + i}年5月22日開業。",
    )
    for i, city in enumerate(CITIES)
]
QUESTIONS = [
    "What lies near Marker3?",
    'Where does the "River 2" run?',
    "金沢タワーを設計した会社は？",
]


def _index(store: SqliteCorpus):
    index = store._s.indexes().entities  # white-box: the index and its extractor
    assert index is not None
    return index


def _patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch sent to the child is answered before the caller goes on. A write this
    small ends before the child has imported anything, and the writer then extracts
    everything itself (`test_a_write_never_waits_for_a_starting_worker`): here the child
    surely does the work."""
    from concurrent.futures import wait

    from sift.integrations.stores.sqlite._extractor import Extractor

    submit = Extractor.submit

    def patient(self, inputs):
        submit(self, inputs)
        wait([future for future, _, _ in list(self._queue) if future is not None])

    monkeypatch.setattr(Extractor, "submit", patient)


def _ingest(
    path: Path, monkeypatch: pytest.MonkeyPatch, min_chunks: int, *, patient: bool = True
) -> tuple[list, int]:
    monkeypatch.setenv("SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS", str(min_chunks))
    if patient and min_chunks:
        _patient(monkeypatch)
    with SqliteCorpus(path, embedder="hash", batch_docs=8, entity_graph=True) as store:
        # "town-5" twice in one call: its second copy replaces the first's chunks while
        # they may still be on their way through the worker.
        rewritten = Document(id="town-5", title="Town 5", text="Town 5 was renamed Helsinki.")
        store.upsert([*DOCS, rewritten])
        started = _index(store)._extractor.started
        walks = [store.walk_entities(q, k=8) for q in QUESTIONS]
        graph = _index(store).graph()
        rows = [(c, graph.entities_of(c)) for c in graph.chunk_ids]
    assert all(w.chunks for w in walks)  # the comparisons compare something
    return [walks, rows], started


def test_the_worker_gives_the_graph_the_writers_thread_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inline, started = _ingest(tmp_path / "inline", monkeypatch, 0)
    assert started == 0
    worker, started = _ingest(tmp_path / "worker", monkeypatch, 1)
    assert started == 1  # one process for the whole call, not one a batch
    assert worker == inline
    rows = dict(worker[1])
    assert "town-5_0" in rows and "helsinki" in rows["town-5_0"]  # the second copy's
    # And what it recorded reads back the same.
    with SqliteCorpus(tmp_path / "worker", entity_graph=True) as store:
        assert _index(store).extracted == 0
        assert [store.walk_entities(q, k=8) for q in QUESTIONS] == worker[0]


def test_a_rebuild_on_open_uses_the_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s"
    from sift.integrations.stores.sqlite import _entities

    expected, _ = _ingest(path, monkeypatch, 0)
    (path / "entities.json").unlink()
    monkeypatch.setenv("SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS", "1")
    # The rebuild reads all its chunks in one batch: no worker, it would start too late.
    with SqliteCorpus(path, entity_graph=True) as store:
        assert _index(store).extracted == len(DOCS)
        assert _index(store)._extractor.started == 0
    (path / "entities.json").unlink()
    # In batches of 8, it does.
    monkeypatch.setattr(_entities, "_REBUILD_BATCH", 8)
    _patient(monkeypatch)
    with SqliteCorpus(path, entity_graph=True) as store:
        assert _index(store).extracted == len(DOCS)
        assert _index(store)._extractor.started == 1
        assert [store.walk_entities(q, k=8) for q in QUESTIONS] == expected[0]


def test_a_worker_that_dies_mid_ingest_is_replaced_by_the_writers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    expected, _ = _ingest(tmp_path / "inline", monkeypatch, 0)
    from sift.integrations.stores.sqlite import _extractor

    roundtrip = _extractor.Extractor._roundtrip
    calls: list[int] = []

    def dies_at_the_third_batch(self, child, inputs):
        calls.append(len(inputs))
        if len(calls) == 3:
            child.kill()  # as the OOM killer would
            child.wait()
        return roundtrip(self, child, inputs)

    monkeypatch.setattr(_extractor.Extractor, "_roundtrip", dies_at_the_third_batch)
    # Every batch goes through the child and is answered before the next (`_patient`),
    # so the third batch surely reaches it.
    with caplog.at_level(logging.WARNING, logger=_extractor.__name__):
        got, started = _ingest(tmp_path / "worker", monkeypatch, 1)
    assert started == 1  # not started again after it died
    assert len(calls) >= 3
    assert got == expected
    assert "worker process is not used: it stopped" in caplog.text
    assert caplog.text.count("worker process is not used") == 1


def test_a_write_never_waits_for_a_starting_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that ends before the child has answered a batch (it is still starting,
    or stuck) extracts everything in the writer's thread and kills the child: a write of
    300 documents took twice as long when it waited. Nor does the bound on batches
    waiting for the child hold the writer then."""
    import threading

    from sift.integrations.stores.sqlite import _extractor

    expected, _ = _ingest(tmp_path / "inline", monkeypatch, 0)
    never = threading.Event()  # the child never gets to answer until the test ends
    roundtrip = _extractor.Extractor._roundtrip
    children: list[subprocess.Popen[bytes]] = []

    def held(self, child, inputs):
        children.append(child)
        never.wait()
        return roundtrip(self, child, inputs)

    monkeypatch.setattr(_extractor.Extractor, "_roundtrip", held)
    # More batches than may wait for the child: past the bound, the writer does the
    # newest ones itself while the child has answered nothing.
    assert len(DOCS) // 8 > _extractor._MAX_UNANSWERED + 1
    result: list = []
    writer = threading.Thread(
        target=lambda: result.append(_ingest(tmp_path / "worker", monkeypatch, 1, patient=False))
    )
    writer.start()
    writer.join(timeout=300)  # a writer waiting for the child would wait forever
    try:
        assert not writer.is_alive()
        got, started = result[0]
        assert started == 1
        assert got == expected
        assert children and all(child.poll() is not None for child in children)  # killed
    finally:
        never.set()
        writer.join(timeout=300)


def test_a_write_too_short_for_the_worker_starts_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected, _ = _ingest(tmp_path / "inline", monkeypatch, 0)
    got, started = _ingest(tmp_path / "short", monkeypatch, len(DOCS) + 2)
    assert started == 0
    assert got == expected
    # The default is about where the worker's start stops costing more than it saves.
    from sift.entities import EntityGraphConfig

    assert EntityGraphConfig.model_construct().worker_min_chunks > 1000


def test_a_worker_that_cannot_start_is_not_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    expected, _ = _ingest(tmp_path / "inline", monkeypatch, 0)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    with caplog.at_level(logging.WARNING):
        got, started = _ingest(tmp_path / "worker", monkeypatch, 1)
    assert started == 0
    assert got == expected
    assert "worker process is not used: it could not start" in caplog.text
    assert caplog.text.count("worker process is not used") == 1  # said once, not a batch


def test_a_script_without_a_main_guard_runs_once(tmp_path: Path) -> None:
    """The worker is not a multiprocessing child: those import the caller's main module
    again, and this script would ingest (and print) twice."""
    script = tmp_path / "ingest.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from sift.integrations.stores.sqlite import SqliteCorpus
            from sift.types import Document

            store = SqliteCorpus({str(tmp_path / "s")!r}, embedder="hash", entity_graph=True)
            store.upsert(Document(id=str(i), title=f"Page {{i}}", text=f"Page {{i}} names Paris.")
                         for i in range(40))
            print("ran", store._s.indexes().entities._extractor.started, flush=True)
            store.close()
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ran", "1"]


def test_batches_the_child_has_not_answered_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer (or a rebuild) faster than the child waits once `_MAX_UNANSWERED`
    batches are queued, instead of holding every batch's texts."""
    import threading

    from sift.entities import EntityGraphConfig, graph_row
    from sift.integrations.stores.sqlite import _extractor

    release = threading.Event()
    roundtrip = _extractor.Extractor._roundtrip
    calls: list[int] = []

    def held(self, child, inputs):
        # The first batch is answered (the child has started); the rest wait.
        calls.append(len(inputs))
        if len(calls) > 1:
            release.wait()
        return roundtrip(self, child, inputs)

    from concurrent.futures import wait

    monkeypatch.setattr(_extractor.Extractor, "_roundtrip", held)
    limits = EntityGraphConfig().limits()
    extractor = _extractor.Extractor(limits, 1)
    batches = [[(i, f"p{i}_0", f"Page {i}", f"Page {i} names Paris.")] for i in range(8)]
    extractor.prepare(len(batches))
    extractor.submit(batches[0])
    wait([future for future, _, _ in list(extractor._queue) if future is not None])
    submitted: list[int] = []

    def submit_all() -> None:
        for batch in batches[1:]:
            extractor.submit(batch)
            submitted.append(batch[0][0])

    writer = threading.Thread(target=submit_all)
    writer.start()
    writer.join(timeout=2)
    try:
        # Held at the batch past the bound (1 sent and waiting, 4 queued, behind the one
        # answered): it cannot have gone on, whatever the machine's speed.
        assert writer.is_alive()
        assert len(submitted) <= _extractor._MAX_UNANSWERED + 1
    finally:
        release.set()
        writer.join(timeout=300)
    rows = extractor.take(wait=True)
    extractor.stop()
    assert rows == [(b[0][0], graph_row(b[0][1], b[0][2], b[0][3], limits)) for b in batches]


def test_the_worker_imports_only_the_extraction() -> None:
    """Its start is spent on a core the writer also wants: eager `__init__`s of `sift`
    and `sift.text` (pydantic, the stemmer) were 0.15 s of its 0.2 s. The command runs
    the worker module as a module, with nothing in front of it (no start-up code)."""
    from sift.entities import worker_command

    command = worker_command()
    assert command[:2] == [sys.executable, "-P"]
    assert command[2:] == ["-m", "sift.entities._worker"]
    probe = (
        "import runpy, sys\n"
        "runpy.run_module('sift.entities._worker', run_name='probe')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sift', 'pydantic')))"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", probe],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert done.stdout.split() == [
        "['sift',",
        "'sift._lazy',",
        "'sift.entities',",
        "'sift.entities._extract',",
        "'sift.text',",
        "'sift.text._scripts']",
    ]


def test_the_worker_answers_as_the_extraction_does() -> None:
    import io
    import pickle

    from sift.entities import EntityGraphConfig, graph_row, worker_command

    limits = EntityGraphConfig().limits()
    texts = [(d.title, d.text) for d in DOCS[::7]]
    done = subprocess.run(
        worker_command(),
        input=pickle.dumps(limits) + pickle.dumps(texts) + pickle.dumps(texts[:1]),
        capture_output=True,
        timeout=300,
        check=True,
    )
    out = io.BytesIO(done.stdout)
    answers = [pickle.load(out), pickle.load(out)]  # one answer a batch, in order
    expected = [graph_row("", title, text, limits)[1:] for title, text in texts]
    assert answers == [[tuple(row) for row in expected], [tuple(expected[0])]]
    assert out.read() == b""
    assert any("金沢タワー" in keys for keys, _ in answers[0])  # DOCS[42], Japanese
