"""What a store holds, document by document (`DocumentCatalog`), on every backend; and
a store path that was never written to, which reads as an error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift import open_store
from sift.errors import NotAStoreError
from sift.integrations.stores.catalog import DocumentCatalog, SourceRoots
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

from .conftest import CorpusFactory


def _docs() -> list[Document]:
    out = [
        Document(
            id=f"reports/{n:02d}.pdf",
            title=f"Report {n}",
            text=f"Report number {n} about revenue. " * (1 + n % 3),
            metadata={"source": f"/data/reports/{n:02d}.pdf", "lang": "en"},
        )
        for n in range(20)
    ]
    out.append(Document(id="報告/決算.txt", title="決算", text="売上高は増加した。"))
    out.append(Document(id="reports-old", title="Old", text="an older report"))
    return out


def test_documents_are_listed_by_id_page_after_page(corpus_factory: CorpusFactory) -> None:
    # A query window of 7 objects makes Weaviate page several times.
    try:
        corpus = corpus_factory(query_maximum_results=7)
    except TypeError:
        corpus = corpus_factory()
    if not isinstance(corpus, DocumentCatalog):
        pytest.skip("this backend does not list documents")
    docs = _docs()
    corpus.upsert(docs)
    listed = list(corpus.documents())
    assert [d.doc_id for d in listed] == sorted(d.id for d in docs)
    by_id = {d.doc_id: d for d in listed}
    first = by_id["reports/00.pdf"]
    assert first.title == "Report 0" and first.source == "/data/reports/00.pdf"
    assert first.chunks == len(corpus.read("reports/00.pdf")) >= 1
    assert by_id["報告/決算.txt"].source is None
    prefixed = [d.doc_id for d in corpus.documents(prefix="reports/")]
    assert prefixed == [f"reports/{n:02d}.pdf" for n in range(20)]
    assert [d.doc_id for d in corpus.documents(prefix="報告/")] == ["報告/決算.txt"]
    assert list(corpus.documents(prefix="nothing-here")) == []


def test_a_store_path_never_written_to_is_named_not_read_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "stroe"  # a typo
    corpus = open_store(path, embedder="hash")
    for read in (
        lambda: corpus.search("revenue"),
        lambda: corpus.grep("revenue"),
        lambda: corpus.read("a"),
        lambda: corpus.get_chunks(["a_0"]),
        lambda: list(corpus.documents()),  # type: ignore[attr-defined]
    ):
        with pytest.raises(NotAStoreError, match=str(path)):
            read()
    assert corpus.stats().documents == 0 and corpus.stats().extra["exists"] is False
    assert corpus.delete(["a"]) == 0
    corpus.close()
    assert not path.exists()  # nothing was made on the way
    with pytest.raises(NotAStoreError, match=f"no sift store at {path}"):
        open_store(path, create=False)
    # Made on purpose, a store exists (empty) from the start.
    SqliteCorpus(path, embedder="hash", create=True).close()
    with open_store(path) as made:  # type: ignore[attr-defined]
        assert made.search("anything") == []


def test_the_first_write_makes_the_store_and_its_recorded_root(tmp_path: Path) -> None:
    path = tmp_path / "store"
    corpus = SqliteCorpus(path, embedder="hash", create="on_write")
    assert isinstance(corpus, SourceRoots)
    corpus.record_source_root("/data")
    corpus.record_source_root("/elsewhere")  # the first one stays
    assert corpus.source_root() == "/data" and not path.exists()
    assert corpus.upsert([]).added == 0 and not path.exists()  # nothing to write
    invalid = corpus.upsert([Document(id="x", text="   ")])
    assert invalid.failed and not path.exists()  # nothing valid: still nothing made
    assert corpus.upsert([Document(id="a", text="alpha")]).added == 1
    corpus.close()
    with SqliteCorpus(path) as again:
        assert again.source_root() == "/data"
        assert again.stats().extra["source_root"] == "/data"
        assert again.stats().extra["size_bytes"] > 0
        assert again.read("a")[0].text == "alpha"
