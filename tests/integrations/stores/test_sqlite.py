"""What only the embedded store promises: recognising its directory, recording its
embedder and schema, and derived indexes that catch up with SQLite after a crash."""

from __future__ import annotations

import errno
import gc
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from sift.errors import CorpusError, IncompatibleStoreError, NotAStoreError
from sift.integrations.stores import open_store
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.integrations.stores.sqlite.testing import (
    failing_lexical_catch_up,
    fields_out_of_step,
    reset_lexical_index,
)
from sift.types import Document


def docs(n: int, prefix: str = "d", start: int = 0) -> list[Document]:
    return [
        Document(id=f"{prefix}{i}", title=f"T{i}", text=f"Unique{prefix}{i}word and common text.")
        for i in range(start, start + n)
    ]


def snapshot(path: Path) -> dict[str, str]:
    """Every file under path with its content digest."""
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def test_a_file_is_not_a_store(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("hello")
    with pytest.raises(NotAStoreError, match="is a file"):
        SqliteCorpus(target, embedder="hash")
    assert target.read_text() == "hello"


def test_a_directory_with_other_files_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "README.md").write_text("mine")
    before = snapshot(tmp_path / "project")
    with pytest.raises(NotAStoreError, match="not a sift store"):
        SqliteCorpus(tmp_path / "project", embedder="hash")
    assert snapshot(tmp_path / "project") == before


def test_a_foreign_sqlite_database_is_left_alone(tmp_path: Path) -> None:
    store = tmp_path / "other"
    store.mkdir()
    conn = sqlite3.connect(store / "sift.db")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.close()
    before = snapshot(store)
    with pytest.raises(NotAStoreError, match="not a sift store"):
        SqliteCorpus(store, embedder="hash")
    assert snapshot(store) == before
    (store / "sift.db").write_bytes(b"garbage" * 10)
    with pytest.raises(NotAStoreError, match="not a SQLite database"):
        SqliteCorpus(store, embedder="hash")


def test_a_refused_new_store_leaves_nothing_behind(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown embedder"):
        SqliteCorpus(tmp_path / "new", embedder="no-such-model")
    with pytest.raises(ValueError, match="chunk_tokens"):
        SqliteCorpus(tmp_path / "new", embedder="hash", chunk_tokens=2)
    assert not (tmp_path / "new").exists()
    with SqliteCorpus(tmp_path / "new", embedder="hash") as store:
        assert store.stats().documents == 0


def test_missing_store_without_create(tmp_path: Path) -> None:
    with pytest.raises(NotAStoreError, match="no sift store"):
        SqliteCorpus(tmp_path / "absent", embedder="hash", create=False)
    assert not (tmp_path / "absent").exists()


def test_schema_version_and_embedder_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash:64") as store:
        store.upsert(docs(3))
    with SqliteCorpus(path) as store:  # the recorded embedder
        assert store.stats().embedder == "hash:64"
        assert store.search("Uniqued1word", k=1, mode="dense")[0].chunk.doc_id == "d1"
    with pytest.raises(CorpusError, match="hash:64"):
        SqliteCorpus(path, embedder="hash:128")
    with pytest.raises(IncompatibleStoreError, match="chunks at 512"):
        SqliteCorpus(path, chunk_tokens=100)
    conn = sqlite3.connect(path / "sift.db")
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(IncompatibleStoreError, match="schema version 99"):
        SqliteCorpus(path)


def test_open_store_and_reopen_keep_everything(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s", embedder="hash")
    store.upsert(docs(30))
    store.close()
    with pytest.raises(CorpusError, match="closed"):
        store.read("d1")
    again = open_store(tmp_path / "s")
    assert again.stats().documents == 30
    assert again.search("Uniqued7word", k=1, mode="bm25")[0].chunk.doc_id == "d7"
    again.close()


def test_a_second_writer_is_refused_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash") as first:
        first.upsert(docs(2))
        with SqliteCorpus(path) as second:
            assert second.search("Uniqued1word", k=1, mode="bm25")[0].chunk.doc_id == "d1"
            with pytest.raises(CorpusError, match="another process"):
                second.upsert(docs(1, prefix="late"))
            with pytest.raises(CorpusError, match="another process"):
                second.delete(["d0"])
            assert second.stats().documents == 2
        first.upsert(docs(1, prefix="late"))
        assert first.stats().documents == 3


def test_unknown_fusion_lists_valid_names(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="relative_score, rrf"):
        SqliteCorpus(tmp_path / "s", embedder="hash", fusion="magic")
    with pytest.raises(ValueError, match="alpha"):
        SqliteCorpus(tmp_path / "s", embedder="hash", alpha=1.5)


def test_alpha_zero_is_bm25_and_one_is_dense(tmp_path: Path) -> None:
    with SqliteCorpus(tmp_path / "s", embedder="hash") as store:
        store.upsert(docs(50))
    for fusion in ("relative_score", "rrf"):
        with SqliteCorpus(tmp_path / "s", fusion=fusion, alpha=0.0) as store:
            hybrid = store.search("Uniqued3word common", k=10)
            bm25 = store.search("Uniqued3word common", k=10, mode="bm25")
            assert [h.chunk.chunk_id for h in hybrid] == [h.chunk.chunk_id for h in bm25]
        with SqliteCorpus(tmp_path / "s", fusion=fusion, alpha=1.0) as store:
            hybrid = store.search("Uniqued3word common", k=10)
            dense = store.search("Uniqued3word common", k=10, mode="dense")
            assert [h.chunk.chunk_id for h in hybrid] == [h.chunk.chunk_id for h in dense]


def _lexical_state(path: Path) -> dict[str, int]:
    return json.loads((path / "lexical.json").read_text())


def test_an_index_older_than_the_pruned_log_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(docs(20))
        old_state = (path / "lexical.json").read_text()
        store.upsert(docs(20, start=20))
        store.delete(["d0"])
    # The sidecar claims an older sequence than the pruned change log covers: replay is
    # impossible, so the index is rebuilt from the chunks, without duplicates.
    (path / "lexical.json").write_text(old_state)
    with SqliteCorpus(path) as store:
        stats = store.stats()
        assert stats.extra["lexical_sequence"] == stats.extra["sequence"]
        assert stats.extra["lexical_chunks"] == stats.chunks == 39
        assert store.search("Uniqued0word", k=5, mode="bm25") == []
        assert store.search("Uniqued25word", k=5, mode="bm25")[0].chunk.doc_id == "d25"


def test_lexical_index_rebuilds_when_missing_or_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(docs(25))
    import shutil

    shutil.rmtree(path / "lexical")
    with SqliteCorpus(path) as store:
        assert store.stats().extra["lexical_chunks"] == 25
        assert store.search("Uniqued24word", k=1, mode="bm25")[0].chunk.doc_id == "d24"
    (path / "lexical.json").write_text("{not json")
    with SqliteCorpus(path) as store:
        assert store.stats().extra["lexical_chunks"] == 25


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.integrations.stores.sqlite.testing import interrupt_index_commit
    from sift.types import Document

    path, mode, index = sys.argv[1], sys.argv[2], sys.argv[3]
    store = SqliteCorpus(
        path, embedder="hash", chunk_tokens=24, batch_docs=7, vector_index=index
    )
    if mode in ("before-index-commit", "after-index-commit"):
        # Die exactly between SQLite's COMMIT and tantivy's commit, or after tantivy
        # committed but before the index recorded its sequence.
        when = mode.split("-")[0]
        interrupt_index_commit(store, when, lambda: os.kill(os.getpid(), signal.SIGKILL))
    body = " ".join(f"Sentence {j} of the filler text about rivers." for j in range(12))
    for batch in range(10_000):
        items = [
            Document(id=f"c{batch}-{i}", title=f"Doc {batch} {i}",
                     text=f"Marker{batch}x{i} opens. {body}",
                     metadata={"batch": batch, "tags": ["川", f"t{i}"]})
            for i in range(5)
        ]
        store.upsert(items)
        print(batch, flush=True)
    """
)


def test_a_failed_index_reset_leaves_a_clear_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s"
    store = SqliteCorpus(path, embedder="hash")
    store.upsert(docs(5))
    # The folder cannot be removed (another process holds it, say).
    monkeypatch.setattr("shutil.rmtree", lambda *args, **kwargs: None)
    with pytest.raises(CorpusError, match="cannot clear the BM25 index folder"):
        reset_lexical_index(store)
    for call in (
        lambda: store.search("Uniqued3word", mode="bm25"),
        store.stats,
        lambda: store.upsert(docs(1, prefix="late")),
    ):
        with pytest.raises(CorpusError, match=r"BM25 index .* is unusable"):
            call()
    store.close()
    monkeypatch.undo()
    # Reopened, the store rebuilds the index from SQLite; nothing was lost.
    with SqliteCorpus(path) as again:
        assert again.stats().documents == 5
        assert again.search("Uniqued3word", k=1, mode="bm25")[0].chunk.doc_id == "d3"


def _run_child(path: Path, mode: str, kill_after: int | None, index: str = "exact") -> list[int]:
    errors = path.with_name(path.name + ".stderr")
    with errors.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), mode, index],
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
        )
        done: list[int] = []
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                done.append(int(line))
                if kill_after is not None and len(done) >= kill_after:
                    os.kill(proc.pid, signal.SIGKILL)
                    break
        finally:
            proc.wait(timeout=60)
    # A child that died on its own (not by our SIGKILL) must say why.
    assert proc.returncode == -signal.SIGKILL, errors.read_text()[-2000:]
    return done


def _check_whole(path: Path) -> SqliteCorpus:
    store = SqliteCorpus(path)
    conn = sqlite3.connect(path / "sift.db")
    bad = conn.execute(
        "SELECT d.doc_id FROM documents d LEFT JOIN chunks c ON c.doc = d.id "
        "GROUP BY d.id HAVING count(c.id) != d.n_chunks OR max(c.idx) != d.n_chunks - 1"
    ).fetchall()
    assert bad == []
    orphans = conn.execute(
        "SELECT count(*) FROM chunks c LEFT JOIN vectors v ON v.id = c.id WHERE v.id IS NULL"
    ).fetchone()[0]
    assert orphans == 0
    (vectors,) = conn.execute("SELECT count(*) FROM vectors").fetchone()
    conn.close()
    # The rows filters are answered from are the documents' metadata, no more, no less.
    assert fields_out_of_step(path / "sift.db") == []
    stats = store.stats()
    assert stats.chunks == vectors == stats.extra["lexical_chunks"] == stats.extra["vector_chunks"]
    return store


@pytest.mark.parametrize("mode", ["before-index-commit", "after-index-commit"])
def test_killed_around_the_index_commit_loses_nothing(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "s"
    _run_child(path, mode, kill_after=None)
    store = _check_whole(path)
    # The first upsert committed to SQLite; the index commit or its record was cut off,
    # and the replay neither loses nor duplicates chunks (_check_whole counts them).
    assert store.stats().documents == 5
    hit = store.search("Marker0x3", k=1, mode="bm25")
    assert hit and hit[0].chunk.doc_id == "c0-3"
    hits = store.search("Marker0x3 rivers", k=10, mode="hybrid", filters={"tags": "t3"})
    assert {h.chunk.doc_id for h in hits} == {"c0-3"}
    store.close()


@pytest.mark.parametrize("index", ["exact", "ann"])
def test_sigkill_mid_ingest_leaves_a_whole_store(tmp_path: Path, index: str) -> None:
    path = tmp_path / "s"
    done = _run_child(path, "normal", kill_after=6, index=index)
    store = _check_whole(path)
    stats = store.stats()
    assert stats.documents >= 5 * len(done)
    for batch in done:
        for i in range(5):
            assert store.read(f"c{batch}-{i}"), f"committed document c{batch}-{i} lost"
    last = max(done)
    hit = store.search(f"Marker{last}x4", k=1, mode="bm25")
    assert hit[0].chunk.doc_id == f"c{last}-4"
    # grep's signatures cover every committed chunk too (rebuilt past their watermark).
    for batch in done:
        assert [h.chunk.doc_id for h in store.grep(f"Marker{batch}x[0-4] ", k=9).hits] == [
            f"c{batch}-{i}" for i in range(5)
        ]
    # The store still takes writes after the crash.
    assert store.upsert(docs(2, prefix="after")).added == 2
    store.close()


def test_ann_index_agrees_with_exact_search(tmp_path: Path) -> None:
    items = [
        Document(id=f"a{i}", title=f"Topic {i % 17}", text=f"Words {i} about theme {i % 23}.")
        for i in range(300)
    ]
    with SqliteCorpus(tmp_path / "exact", embedder="hash", vector_index="exact") as exact:
        exact.upsert(items)
        with SqliteCorpus(tmp_path / "ann", embedder="hash", vector_index="ann") as ann:
            ann.upsert(items)
            assert ann.stats().extra["vector_index"] == "ann"
            for query in ("theme 5", "Topic 3 words", "about theme 22"):
                want = exact.search(query, k=5, mode="dense")
                got = ann.search(query, k=5, mode="dense")
                # Tied scores make ids differ; the top 5 scores must agree (two-byte floats).
                assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=0.01)
            excluded = [f"a{i}_0" for i in range(250)]
            hits = ann.search("theme", k=10, mode="dense", exclude=excluded)
            assert len(hits) == 10 and not {h.chunk.chunk_id for h in hits} & set(excluded)


def test_store_switches_to_ann_past_the_threshold_and_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash", ann_threshold=45, batch_docs=10) as store:
        store.upsert(docs(30))
        assert store.stats().extra["vector_index"] == "exact"
        seen: list[str] = []
        # The switch happens within one long upsert, as soon as the threshold is crossed.
        store.upsert(
            docs(30, start=30),
            on_progress=lambda n: seen.append(store.stats().extra["vector_index"]),
        )
        assert seen == ["exact", "ann", "ann"]
        assert store.stats().extra["vector_index"] == "ann"
        store.delete(["d5"])
        store.upsert(docs(5, prefix="late"))
    assert (path / "vectors.usearch").exists()
    with SqliteCorpus(path, ann_threshold=40) as store:
        stats = store.stats()
        assert stats.extra["vector_index"] == "ann"
        assert stats.extra["vector_chunks"] == stats.chunks == 64
        hit = store.search("Uniquelate3word", k=1, mode="dense")[0]
        assert hit.chunk.doc_id == "late3"
    # A lost graph is rebuilt from SQLite.
    (path / "vectors.usearch").unlink()
    (path / "vectors.json").unlink()
    with SqliteCorpus(path, vector_index="ann") as store:
        assert store.stats().extra["vector_chunks"] == 64


def _ann_store(path: Path) -> tuple[Path, list[tuple[int, bytes]]]:
    """A store on its vector graph, English and Japanese; the graph's file and SQLite's
    vector rows."""
    with SqliteCorpus(path, embedder="hash", vector_index="ann") as store:
        store.upsert(docs(20))
        store.upsert([Document(id="ja", title="天気", text="東京の天気は晴れ。大阪は雨が降る。")])
    with sqlite3.connect(path / "sift.db") as conn:
        rows = conn.execute("SELECT id, v FROM vectors ORDER BY id").fetchall()
    return path / "vectors.usearch", rows


def _save_graph(graph: Path, rows: list[tuple[int, bytes]], dtype: str) -> None:
    """Writes a graph of `rows` over the store's, leaving its record as it is but for
    the graph's checksum, which a sift before issue 42 did not record (with it, the graph
    would be rebuilt as damaged before anything else was looked at)."""
    from usearch.index import Index

    sidecar = graph.with_suffix(".json")
    record = json.loads(sidecar.read_text())
    record.pop("sum", None)
    sidecar.write_text(json.dumps(record))

    index = Index(ndim=len(rows[0][1]) // 4, metric="ip", dtype=dtype, connectivity=12)
    index.add(
        np.array([r[0] for r in rows], dtype=np.uint64),
        np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1),
    )
    index.save(str(graph))


def test_a_float16_graph_from_an_older_sift_is_kept_and_new_graphs_are_bfloat16(
    tmp_path: Path,
) -> None:
    from usearch.index import Index, ScalarKind

    path = tmp_path / "s"
    graph, rows = _ann_store(path)
    assert Index.metadata(str(graph))["kind_scalar"] == ScalarKind.BF16
    # What sift saved before it switched to bfloat16: the same vectors, as float16.
    _save_graph(graph, rows, "f16")
    with SqliteCorpus(path) as store:
        assert store.stats().extra["vector_index"] == "ann"
        assert store.search("東京の天気", k=1, mode="dense")[0].chunk.doc_id == "ja"
        assert store.search("Uniqued7word", k=1, mode="dense")[0].chunk.doc_id == "d7"
        store.upsert(docs(2, prefix="late"))
        assert store.search("Uniquelate1word", k=1, mode="dense")[0].chunk.doc_id == "late1"
    # Loaded, caught up and saved again without a rebuild: still the float16 graph.
    assert Index.metadata(str(graph))["kind_scalar"] == ScalarKind.F16
    assert Index.metadata(str(graph))["count_present"] == len(rows) + 2


def test_a_store_whose_indexes_cannot_be_written_opens_for_reading(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """After a full disk, opening a store (for `stats`, `search`, `grep`) brought its BM25
    index up to date, failed to write it, and ended in a traceback. It opens for reading
    instead, says so, and releases what the failed catch-up had opened."""
    path = tmp_path / "ストア"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(docs(3))
    full = OSError(errno.ENOSPC, "No space left on device")
    gc.collect()  # earlier tests' garbage must not be counted as this test's leaks
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with failing_lexical_catch_up(full):
            opened = SqliteCorpus(path)
        assert "cannot be brought up to date" in caplog.text and "No space" in caplog.text
        assert opened.stats().documents == 3
        assert opened.search("Uniqued2word", k=1, mode="bm25")[0].chunk.doc_id == "d2"
        # Space is back: its next write takes the lock and opens the indexes again.
        assert opened.upsert(docs(1, prefix="after")).added == 1
        opened.close()
        with SqliteCorpus(path) as again:
            assert again.upsert(docs(1, prefix="later")).added == 1
            assert again.stats().documents == 5
        gc.collect()
    assert not [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    shutil.rmtree(path)
    assert not path.exists()


def test_a_bm25_writer_that_cannot_roll_back_is_reported_on_close(tmp_path: Path) -> None:
    path = tmp_path / "s"
    store = SqliteCorpus(path, embedder="hash")
    store.upsert(docs(3))  # the store keeps its BM25 writer open after writing
    (path / "lexical" / "meta.json").unlink()  # the index folder was damaged meanwhile
    with pytest.raises(CorpusError, match=r"closing the BM25 index failed .*meta\.json"):
        store.close()
    # The writer was dropped all the same, and the index is rebuilt from SQLite.
    with SqliteCorpus(path) as again:
        assert again.upsert(docs(1, prefix="after")).added == 1
        assert again.search("Uniqued2word", k=1, mode="bm25")[0].chunk.doc_id == "d2"


def test_close_releases_everything_and_then_reports_what_failed(tmp_path: Path) -> None:
    path = tmp_path / "s"
    store = SqliteCorpus(path, embedder="hash", vector_index="ann")
    store.upsert(docs(5))
    # Saving the vector graph on close cannot write its temporary file.
    (path / "vectors.tmp").mkdir()
    with pytest.raises(CorpusError, match="saving the vector index failed") as failure:
        store.close()
    assert str(path) in str(failure.value)
    with pytest.raises(CorpusError, match="closed"):
        store.search("Uniqued1word")
    store.close()  # closing again is a no-op
    (path / "vectors.tmp").rmdir()
    # The BM25 writer and SQLite were released all the same: another store writes at once,
    # and the vectors the graph did not save are replayed from SQLite.
    with SqliteCorpus(path) as again:
        assert again.upsert(docs(2, prefix="after")).added == 2
        assert again.stats().extra["vector_chunks"] == 7
        assert again.search("Uniqued3word", k=1, mode="dense")[0].chunk.doc_id == "d3"


def test_a_close_failure_does_not_hide_the_error_that_left_the_block(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "s"
    store = SqliteCorpus(path, embedder="hash", vector_index="ann")
    store.upsert(docs(3))
    (path / "vectors.tmp").mkdir()
    with pytest.raises(KeyError, match="the real problem"), store:
        raise KeyError("the real problem")
    assert "saving the vector index failed" in caplog.text


def test_a_vector_graph_missing_vectors_is_rebuilt_whatever_its_record_says(
    tmp_path: Path,
) -> None:
    from usearch.index import Index

    path = tmp_path / "s"
    graph, rows = _ann_store(path)
    # What a lost race left (issue 31): a graph whose record claims the store's last
    # sequence but that lacks some vectors, the Japanese document's among them.
    _save_graph(graph, rows[: len(rows) // 2], "bf16")
    with SqliteCorpus(path) as store:
        assert store.stats().extra["vector_chunks"] == len(rows)
        assert store.search("東京の天気", k=1, mode="dense")[0].chunk.doc_id == "ja"
        assert store.search("Uniqued19word", k=1, mode="dense")[0].chunk.doc_id == "d19"
    # Saved whole again: the next open finds nothing to rebuild.
    assert Index.metadata(str(graph))["count_present"] == len(rows)
