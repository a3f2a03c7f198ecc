"""Pages and sections: chunk metadata from a document's offset tables, on every backend,
through evidence; and the tables checked on the way in."""

from __future__ import annotations

import pytest

from sift.graphs import single_shot
from sift.integrations.stores.catalog import DocumentCatalog
from sift.integrations.stores.locations import check_locations, chunk_metadata, location_label
from sift.types import Document

from .conftest import CorpusFactory


def test_chunk_metadata_maps_offsets_to_pages_and_sections() -> None:
    meta = {
        "lang": "ja",
        "page_starts": [0, 100, 100, 250],  # page 2 has no text: page 3 starts where it does
        "section_starts": [0, 120],
        "section_titles": ["概要", "概要 > 売上"],
    }
    assert chunk_metadata(meta, 0, 99) == {
        "lang": "ja",
        "page": 1,
        "pages": [1, 1],
        "section": "概要",
    }
    assert chunk_metadata(meta, 90, 260) == {
        "lang": "ja",
        "page": 1,
        "pages": [1, 4],
        "section": "概要",
    }
    assert chunk_metadata(meta, 100, 101)["pages"] == [3, 3]
    assert chunk_metadata(meta, 130, 249)["section"] == "概要 > 売上"
    assert chunk_metadata({"page": 7}, 0, 5) == {"page": 7}  # no tables: left alone


def test_location_label_says_where_a_chunk_sits_and_nothing_when_unknown() -> None:
    assert location_label({"page": 3, "pages": [3, 3]}) == "p. 3"
    assert location_label({"page": 3, "pages": [3, 4]}) == "pp. 3-4"
    assert location_label({"page": "12"}) == "p. 12"  # as some stores give it back
    assert location_label({"section": "Results > 売上高"}) == "§ Results > 売上高"
    meta = chunk_metadata(
        {"page_starts": [0, 50], "section_starts": [0], "section_titles": ["概要 > Revenue"]},
        40,
        60,
    )
    assert location_label(meta) == "pp. 1-2 · § 概要 > Revenue"
    # A section that is only the title beside it (a Markdown file's one heading) is left out.
    assert location_label({"page": 2, "section": "Results"}, title="Results") == "p. 2"
    assert location_label({"section": "Results > 売上高"}, title="Results") == "§ Results > 売上高"
    # A JSONL passage, or metadata that is not a location: nothing.
    assert location_label({}) == ""
    assert location_label({"lang": "ja", "page": True, "pages": ["iv"], "section": " "}) == ""


@pytest.mark.parametrize(
    ("meta", "says"),
    [
        ({"page_starts": [5, 10]}, "the first one 0"),
        ({"page_starts": [0, 10, 3]}, "ascending"),
        ({"page_starts": [0, 500]}, "ascending"),  # past the end of the text
        ({"page_starts": "0,10"}, "ascending"),
        ({"section_starts": [0]}, "come together"),
        ({"section_starts": [0, 4], "section_titles": ["one"]}, "one string per section"),
    ],
)
def test_bad_tables_are_named(meta: dict, says: str) -> None:
    wrong = check_locations(meta, 100)
    assert wrong is not None and says in wrong


def _report(pages: int) -> Document:
    body = []
    starts = []
    for n in range(1, pages + 1):
        starts.append(sum(len(p) + 2 for p in body))
        body.append(
            f"Page {n} of the annual report. Pagemark{n}x is printed here. "
            f"{n}ページ目の売上高は前年同期比で増加しました。" + " filler words here" * 20
        )
    return Document(
        id="annual-report.pdf",
        title="Annual report",
        text="\n\n".join(body),
        metadata={"source": "/data/annual-report.pdf", "page_starts": starts},
    )


def test_every_chunk_knows_its_pages_in_every_store(corpus_factory: CorpusFactory) -> None:
    corpus = corpus_factory(chunk_tokens=64)
    document = _report(30)
    corpus.upsert([document])
    chunks = corpus.read(document.id)
    assert len(chunks) > 10
    starts = document.metadata["page_starts"]
    assert isinstance(starts, list)

    def page_at(offset: int) -> int:  # by a linear scan, not the store's bisection
        return max(n + 1 for n, start in enumerate(starts) if start <= offset)

    for chunk in chunks:
        assert chunk.metadata["page"] == page_at(chunk.start)
        assert chunk.metadata["pages"] == [page_at(chunk.start), page_at(chunk.end - 1)]
        first, last = chunk.metadata["pages"]
        for n in range(1, 31):
            if f"Pagemark{n}x" in chunk.text:
                assert first <= n <= last
        assert "page_starts" not in chunk.metadata  # the table stays on the document
    # What search returns, evidence included, says the page the text is on.
    (hit,) = corpus.grep(r"Pagemark23x").hits
    assert hit.chunk.metadata["pages"][0] <= 23 <= hit.chunk.metadata["pages"][1]
    result = single_shot("Pagemark17x", corpus, top_k=3, mode="bm25")
    top = result.evidence[0]
    assert "Pagemark17x" in top.text
    assert top.metadata["pages"][0] <= 17 <= top.metadata["pages"][1]
    if isinstance(corpus, DocumentCatalog):
        (info,) = corpus.documents()
        assert (info.doc_id, info.chunks, info.source) == (
            document.id,
            len(chunks),
            "/data/annual-report.pdf",
        )


def test_a_document_with_bad_tables_is_refused_whole(corpus_factory: CorpusFactory) -> None:
    corpus = corpus_factory()
    good = Document(id="ok", text="fine text")
    bad = Document(id="bad", text="some text", metadata={"page_starts": [3]})
    report = corpus.upsert([good, bad])
    assert report.added == 1 and [f.doc_id for f in report.failed] == ["bad"]
    assert "page_starts" in report.failed[0].error
