"""Filters on where a passage sits: `page` (a number, with ranges) and `section` (its
heading path), chunk by chunk, on every store, in agreement with `sift.filters.matches`
on the metadata the store returns; Japanese beside English."""

from __future__ import annotations

from typing import Any

import pytest

from sift.filters import Filter, matches
from sift.protocols import Corpus
from sift.types import Chunk, Document


def _paged(doc_id: str, title: str, pages: list[str], lang: str) -> Document:
    """A PDF-like document: one short page per entry, each a chunk of its own."""
    text, starts = "", []
    for page in pages:
        starts.append(len(text))
        text += page + "\n\n"
    metadata = {"lang": lang, "format": "pdf", "page_starts": starts}
    return Document(id=doc_id, title=title, text=text, metadata=metadata)


def _sectioned(doc_id: str, title: str, sections: list[tuple[str, str]]) -> Document:
    text, starts, titles = "", [], []
    for heading, body in sections:
        starts.append(len(text))
        titles.append(heading)
        text += body + "\n\n"
    metadata = {"lang": "en", "format": "markdown", "section_starts": starts}
    return Document(
        id=doc_id, title=title, text=text, metadata={**metadata, "section_titles": titles}
    )


DOCS = [
    _paged(
        "reports/annual.pdf",
        "Annual report",
        [f"Page {n} of the annual report: revenue grew in region {n}." for n in range(1, 7)],
        "en",
    ),
    _paged(
        "reports/決算.pdf",
        "決算説明資料",
        [f"{n}ページ目: 売上高は地域{n}で増加しました。revenue" for n in range(1, 7)],
        "ja",
    ),
    _sectioned(
        "guide.md",
        "Guide",
        [
            ("Results", "The results of the year: revenue grew."),
            ("Results > 売上高", "売上高は前年同期比12.5%増の4,820億円となりました。revenue"),
            ("Outlook", "Demand recovers next year, and revenue with it."),
        ],
    ),
]


@pytest.fixture
def corpus(corpus_factory) -> Corpus:
    store = corpus_factory()
    report = store.upsert(DOCS)
    assert not report.failed
    return store


def _where(chunk: Chunk) -> tuple[str, Any]:
    return chunk.doc_id, chunk.metadata.get("page", chunk.metadata.get("section"))


def _expected(corpus: Corpus, spec: Filter) -> set[tuple[str, Any]]:
    """What `matches`, the semantics of record, keeps of every stored chunk."""
    chunks = [c for d in DOCS for c in corpus.read(d.id)]
    assert len(chunks) == 15  # one chunk per page and per section
    return {
        _where(c)
        for c in chunks
        if matches(spec, {**c.metadata, "doc_id": c.doc_id, "title": c.title})
    }


CASES: list[tuple[dict[str, Any], set[tuple[str, Any]]]] = [
    (
        {"page": {"gte": 3, "lte": 4}},
        {
            ("reports/annual.pdf", 3),
            ("reports/annual.pdf", 4),
            ("reports/決算.pdf", 3),
            ("reports/決算.pdf", 4),
        },
    ),
    (
        {"page": {"gte": 3, "lte": 4}, "lang": "ja"},
        {("reports/決算.pdf", 3), ("reports/決算.pdf", 4)},
    ),
    ({"page": 6, "lang": "en"}, {("reports/annual.pdf", 6)}),
    (
        {"page": [1, 6], "format": "pdf", "doc_id": "reports/決算.pdf"},
        {("reports/決算.pdf", 1), ("reports/決算.pdf", 6)},
    ),
    ({"section": "Results > 売上高"}, {("guide.md", "Results > 売上高")}),
    ({"section": ["Results", "Outlook"]}, {("guide.md", "Results"), ("guide.md", "Outlook")}),
    # A page range says nothing of a document without pages, and a section of one
    # without sections: neither holds there.
    ({"page": {"lt": 100}, "section": "Outlook"}, set()),
]


@pytest.mark.parametrize(("spec", "expected"), CASES, ids=[str(s) for s, _ in CASES])
def test_page_and_section_filters_keep_exactly_those_passages(
    corpus: Corpus, spec: dict[str, Any], expected: set[tuple[str, Any]]
) -> None:
    checked = Filter.of(spec)
    assert checked is not None
    assert _expected(corpus, checked) == expected
    grep = corpus.grep("revenue", k=50, filters=checked)
    assert {_where(h.chunk) for h in grep.hits} == expected
    for mode in ("bm25", "dense", "hybrid"):
        hits = corpus.search("revenue 売上高", k=50, mode=mode, filters=checked)  # type: ignore[arg-type]
        assert {_where(h.chunk) for h in hits} == expected, mode


def test_a_selective_page_filter_still_fills_k(corpus: Corpus) -> None:
    """Most chunks fail the filter: the store fetches more rather than return fewer."""
    hits = corpus.search("revenue", k=2, mode="bm25", filters=Filter.of({"page": 5}))
    assert sorted(_where(h.chunk) for h in hits) == [
        ("reports/annual.pdf", 5),
        ("reports/決算.pdf", 5),
    ]
