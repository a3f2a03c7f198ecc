"""The BM25 index's additions on a thread of their own (`sift-lexical`): they keep their
order with deletions, their failures reach the caller, and what they had not committed
is replayed from SQLite."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from sift.errors import CorpusError
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.integrations.stores.sqlite._analysis import TantivyAnalysis
from sift.types import Document


def docs(n: int, start: int = 0) -> list[Document]:
    return [
        Document(id=f"d{i}", title=f"T{i}", text=f"Uniqued{i}word and common text.")
        for i in range(start, start + n)
    ]


def test_a_failure_on_the_lexical_thread_is_raised_and_the_index_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The BM25 additions run on a thread of their own, behind the writer: a failure there
    # must still reach the caller of upsert, and nothing SQLite committed may be lost.
    real_fill = TantivyAnalysis.fill
    threads: set[str] = set()

    def fill(self: TantivyAnalysis, docs: list[object], field: str, values: list[str]) -> None:
        threads.add(threading.current_thread().name)
        if any("poison" in value for value in values):
            raise RuntimeError("tantivy refused the batch")
        real_fill(self, docs, field, values)

    monkeypatch.setattr(TantivyAnalysis, "fill", fill)
    path = tmp_path / "s"
    batch = [*docs(40), Document(id="bad", title="T", text="poison pill"), *docs(40, start=40)]
    store = SqliteCorpus(path, embedder="hash", batch_docs=10)
    with pytest.raises(RuntimeError, match="tantivy refused the batch"):
        store.upsert(batch)
    assert threads and all(name.startswith("sift-lexical") for name in threads)
    # From then on the index refuses to write or commit (its sidecar must not claim the
    # lost chunks), saying what to do; searches still see what it had committed.
    with pytest.raises(CorpusError, match="close the store and open it again"):
        store.upsert(docs(3, start=200))
    with pytest.raises(CorpusError, match="failed to add chunks earlier"):
        store.delete(["d1"])
    store.search("Uniqued1word", k=1, mode="bm25")
    store.close()
    monkeypatch.undo()
    # Every batch SQLite committed is there, and the BM25 index, replayed from the change
    # log on open, holds each of them (English and Japanese), the poisoned one too.
    with SqliteCorpus(path) as again:
        stored = again.stats().documents
        assert stored >= 41
        # The refused calls wrote nothing: the refusal came before SQLite.
        ids = {info.doc_id for info in again.documents()}
        assert "d200" not in ids and "d1" in ids
        assert again.stats().extra["lexical_chunks"] == again.stats().chunks
        assert again.search("poison", k=1, mode="bm25")[0].chunk.doc_id == "bad"
        assert again.search("Uniqued3word", k=1, mode="bm25")[0].chunk.doc_id == "d3"
        again.upsert([Document(id="ja", title="梅雨", text="日本で梅雨がないのは北海道である。")])
        assert again.search("北海道 梅雨", k=1, mode="bm25")[0].chunk.doc_id == "ja"


def test_deletions_and_replacements_keep_their_order_with_additions(tmp_path: Path) -> None:
    # A replaced document's old chunks are deleted and its new ones added in one batch;
    # queued out of order, the index would hold both or neither.
    with SqliteCorpus(tmp_path / "s", embedder="hash", batch_docs=7) as store:
        store.upsert(docs(50))
        for version in range(3):
            store.upsert(
                [
                    Document(id=f"d{i}", title=f"T{i}", text=f"Version{version}x{i} 東京{i}")
                    for i in range(0, 50, 2)
                ]
            )
        store.delete([f"d{i}" for i in range(1, 50, 4)])
        stats = store.stats()
        assert stats.extra["lexical_chunks"] == stats.chunks == 50 - 13
        assert store.search("Version1x4", k=3, mode="bm25") == []
        assert store.search("Uniqued4word", k=3, mode="bm25") == []
        assert [h.chunk.doc_id for h in store.search("Version2x4", k=1, mode="bm25")] == ["d4"]
        assert store.search("Uniqued5word", k=1, mode="bm25") == []
        assert [h.chunk.doc_id for h in store.search("Uniqued3word", k=1, mode="bm25")] == ["d3"]
