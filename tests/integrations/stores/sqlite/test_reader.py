"""A store opened for reading (`writer=False`) beside the one that writes it, as `sift
serve`'s search processes open theirs: it answers as the writer does, writes nothing on
disk whatever state it finds, and refuses writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sift.errors import CorpusError, IncompatibleStoreError, NotAStoreError
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.text import Analyzer
from sift.types import Document

DOCS = [
    Document(id="etna", title="Etna", text="Mount Etna is an active volcano on Sicily."),
    Document(
        id="fuji", title="富士山", text="富士山は日本最高峰の火山である。静岡県と山梨県にまたがる。"
    ),
    Document(id="kyoto", title="京都", text="京都は千年の都である。Kyoto was the capital."),
]


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under the store with its size and modification time."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _ids(hits: list) -> list[str]:
    return [h.chunk.doc_id for h in hits]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "ストア"
    with SqliteCorpus(path, embedder="hash") as writer:
        writer.upsert(DOCS)
    return path


def test_a_reader_answers_as_the_writer_does(store: Path) -> None:
    with (
        SqliteCorpus(store) as writer,
        SqliteCorpus(store, writer=False) as reader,
    ):
        for question in ("volcano Sicily", "日本最高峰の火山", "千年の都 Kyoto"):
            for mode in ("bm25", "dense", "hybrid"):
                assert _ids(reader.search(question, k=3, mode=mode)) == _ids(
                    writer.search(question, k=3, mode=mode)
                )
        assert [h.chunk.doc_id for h in reader.grep("静岡県|Sicily", k=5).hits] == ["etna", "fuji"]
        assert [c.text for c in reader.read("kyoto")] == [c.text for c in writer.read("kyoto")]


def test_a_reader_writes_nothing_even_when_the_indexes_are_behind(store: Path) -> None:
    # The writer's BM25 index and grep signatures made to look behind SQLite (as when
    # the writer is between its SQLite commit and theirs, or died there): a writer
    # would replay and save; a reader leaves every file as it is.
    sidecar = store / "lexical.json"
    recorded = json.loads(sidecar.read_text())
    recorded["seq"] = 1
    sidecar.write_text(json.dumps(recorded))
    (store / "trigrams.json").unlink()
    before = _files(store)
    with SqliteCorpus(store, writer=False) as reader:
        assert _ids(reader.search("volcano", k=1, mode="bm25")) == ["etna"]
        assert _ids(reader.grep("山梨県", k=1).hits) == ["fuji"]
    assert _files(store) == before
    # The writer's next open repairs what the reader left alone.
    with SqliteCorpus(store) as writer:
        assert _ids(writer.search("volcano", k=1, mode="bm25")) == ["etna"]
    assert json.loads(sidecar.read_text())["seq"] > 1


def test_a_reader_refuses_writes_and_the_store_is_unchanged(store: Path) -> None:
    before = _files(store)
    with SqliteCorpus(store, writer=False) as reader:
        for write in (
            lambda: reader.upsert([Document(id="new", title="", text="新しい文書")]),
            lambda: reader.delete(["etna"]),
            lambda: reader.record_source_root("/somewhere"),
        ):
            with pytest.raises(CorpusError, match=r"opened for reading \(writer=False\)"):
                write()
        assert reader.stats().documents == 3
    assert _files(store) == before


def test_a_reader_does_not_stand_in_the_writers_way(store: Path) -> None:
    with SqliteCorpus(store, writer=False) as reader:
        with SqliteCorpus(store) as writer:
            writer.upsert([Document(id="osaka", title="大阪", text="大阪は商人の町である。")])
            assert _ids(writer.search("商人の町", k=1, mode="bm25")) == ["osaka"]
        # It sees the store as it was when opened; opened again, it sees the write.
        assert "osaka" not in _ids(reader.search("商人の町", k=3, mode="hybrid"))
    with SqliteCorpus(store, writer=False) as again:
        assert _ids(again.search("商人の町", k=1, mode="bm25")) == ["osaka"]


def test_a_reader_of_an_hnsw_store_replays_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "ann"
    writer = SqliteCorpus(path, embedder="hash", vector_index="ann")
    try:
        writer.upsert(DOCS)
        # The graph on disk lags (it is saved every 250,000 changes and on close).
        before = _files(path)
        with SqliteCorpus(path, writer=False, vector_index="ann") as reader:
            assert _ids(reader.search("日本最高峰の火山", k=1, mode="dense")) == _ids(
                writer.search("日本最高峰の火山", k=1, mode="dense")
            )
        assert _files(path) == before
    finally:
        writer.close()


def test_a_reader_needs_a_store_as_recorded(store: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(NotAStoreError, match="no sift store"):
        SqliteCorpus(missing, writer=False)
    assert not missing.exists()
    with pytest.raises(IncompatibleStoreError, match="records the analyzer"):
        SqliteCorpus(store, writer=False, analyzer=Analyzer(stemmers={"latin": "french"}))
    # A BM25 index that is gone is the writer's to rebuild; the reader says so and
    # leaves the folder alone.
    before = _files(store)
    (store / "lexical.json").unlink()
    with pytest.raises(CorpusError, match="open the store for writing"):
        SqliteCorpus(store, writer=False)
    assert _files(store) == {k: v for k, v in before.items() if k != "lexical.json"}


def test_a_reopened_reader_can_keep_the_loaded_embedder(store: Path) -> None:
    with SqliteCorpus(store, writer=False) as first:
        embedder = first.embedder
    with SqliteCorpus(store, writer=False, embedder=embedder) as again:
        assert again.embedder is embedder
        assert _ids(again.search("日本最高峰の火山", k=1, mode="dense")) == ["fuji"]


def test_changing_the_analyzer_waits_for_the_writer_and_changes_nothing(
    store: Path, tmp_path: Path
) -> None:
    # Another writer is busy with the store (it holds the lock from its first write on):
    # a second open that would record a new analyzer is refused, naming the holder, and
    # the recorded analyzer, the documents and the BM25 index stay as they were.
    from sift.errors import StoreLockedError

    french = Analyzer(stemmers={"latin": "french"})
    writer = SqliteCorpus(store)
    try:
        writer.upsert([Document(id="nara", title="奈良", text="奈良は古い都である。")])
        with pytest.raises(StoreLockedError, match="locked by another process"):
            SqliteCorpus(store, analyzer=french)
        assert writer.stats().extra["analyzer"] != french.spec
        assert _ids(writer.search("古い都", k=1, mode="bm25")) == ["nara"]
    finally:
        writer.close()
    # With the writer gone, the change goes through.
    with SqliteCorpus(store, analyzer=french) as changed:
        assert changed.stats().extra["analyzer"] == french.spec
        assert "nara" in {d.doc_id for d in changed.documents()}
