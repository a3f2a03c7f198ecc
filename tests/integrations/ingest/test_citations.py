"""Citations a reader can act on: through a real store, every chunk of a PDF or a deck is
on one page or slide (a short page is a chunk of its own), every chunk of a Word or
Markdown file under one heading, and `page` / `section` say which; titles are the
document's own, never a template's default."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from sift.integrations.chunking import chunk_spans_within
from sift.integrations.ingest import plan_inputs, read_inputs
from sift.integrations.ingest._titles import own_title
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Chunk

from .conftest import JAPANESE_LINES, numbered_pages, write_docx, write_pdf, write_pptx


def _store_and_read(tmp_path: Path, path: Path) -> tuple[SqliteCorpus, list[Chunk]]:
    corpus = SqliteCorpus(tmp_path / "store", embedder="hash")
    problems: list[object] = []
    (document,) = read_inputs([path], problems)  # type: ignore[arg-type]
    assert problems == []
    corpus.upsert([document])
    return corpus, corpus.read(document.id)


def _chunk_with(chunks: list[Chunk], needle: str) -> Chunk:
    (chunk,) = [c for c in chunks if needle in c.text]
    return chunk


@pytest.mark.parametrize("count", [3, 4])
def test_a_fact_on_page_two_is_cited_as_page_two(tmp_path: Path, count: int) -> None:
    """Short pages are chunks of their own: the issue's 4-page (and 3-page) PDF whose
    fact is on page 2 came back as `page: 1, pages: [1, 4]`."""
    pages = numbered_pages(count)
    pages[1].append("The kestrel nests on the north tower.")
    corpus, chunks = _store_and_read(tmp_path, write_pdf(tmp_path / f"r{count}.pdf", pages))
    try:
        assert len(chunks) == count
        for number, chunk in enumerate(chunks, start=1):
            assert chunk.metadata["page"] == number
            assert chunk.metadata["pages"] == [number, number]
            assert f"Marker page {number} " in chunk.text
        fact = _chunk_with(chunks, "kestrel")
        assert fact.metadata["page"] == 2 and fact.metadata["pages"] == [2, 2]
        (hit,) = corpus.grep("kestrel nests", k=5).hits
        assert hit.chunk.metadata["page"] == 2
    finally:
        corpus.close()


def test_a_japanese_pdf_page_is_cited_by_its_own_number(tmp_path: Path) -> None:
    """Japanese text in Adobe's CID font (HeiseiMin-W3), three short pages."""
    pages = [[f"{n}ページ目", JAPANESE_LINES[n % 2]] for n in range(1, 4)]
    pages[1].append("ハヤブサは北の塔に巣を作ります。")
    path = write_pdf(tmp_path / "決算.pdf", pages, font="HeiseiMin-W3", title="決算説明資料")
    corpus, chunks = _store_and_read(tmp_path, path)
    try:
        assert [c.metadata["page"] for c in chunks] == [1, 2, 3]
        fact = _chunk_with(chunks, "ハヤブサは北の塔")
        assert fact.metadata["pages"] == [2, 2] and fact.text.startswith("2ページ目")
        assert fact.title == "決算説明資料"
    finally:
        corpus.close()


def test_a_long_page_still_splits_but_never_into_the_next(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "long.pdf", numbered_pages(2, filler=40))
    corpus, chunks = _store_and_read(tmp_path, path)
    try:
        by_page = [c.metadata["page"] for c in chunks]
        assert by_page.count(1) >= 2 and by_page.count(2) >= 2
        assert by_page == sorted(by_page)
        assert all(c.metadata["pages"] == [c.metadata["page"]] * 2 for c in chunks)
        assert all("(p2x" not in c.text for c in chunks if c.metadata["page"] == 1)
    finally:
        corpus.close()


def test_slides_are_chunks_of_their_own(tmp_path: Path) -> None:
    corpus, chunks = _store_and_read(tmp_path, write_pptx(tmp_path / "deck.pptx", slides=3))
    try:
        assert [c.metadata["page"] for c in chunks] == [1, 2, 3]
        second = chunks[1]
        assert second.metadata["section"] == "スライド 2: Topic 2"
        assert "Body of slide 2." in second.text and "Speaker note 2" in second.text
        assert "slide 3" not in second.text
    finally:
        corpus.close()


def test_word_chunks_never_span_two_headings(tmp_path: Path) -> None:
    """The issue's Word file with three headings came back as one chunk labelled with
    the first heading; each heading's text is now its own chunk, under its path."""
    corpus, chunks = _store_and_read(tmp_path, write_docx(tmp_path / "report.docx"))
    try:
        sections = [c.metadata.get("section") for c in chunks]
        assert sections == [
            "統合報告書 2024",
            "Results",
            "Results > 売上高",
            "Outlook",
        ]
        assert JAPANESE_LINES[0] in chunks[2].text and "4,820" in chunks[2].text
        assert "twelve percent" in chunks[1].text and "売上高" not in chunks[1].text
        assert chunks[3].text.startswith("Outlook")
    finally:
        corpus.close()


def test_markdown_chunks_follow_the_heading_path(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text(
        "Preface before any heading.\n\n# ガイド\n\nIntro.\n\n## 設置\n\n"
        "インストールは一行です。\n\n### 要件\n\nPython 3.11.\n\n## Usage\n\nRun it.\n",
        encoding="utf-8",
    )
    corpus, chunks = _store_and_read(tmp_path, path)
    try:
        assert [(c.text.splitlines()[0], c.metadata.get("section")) for c in chunks] == [
            ("Preface before any heading.", None),
            ("# ガイド", "ガイド"),
            ("## 設置", "ガイド > 設置"),
            ("### 要件", "ガイド > 設置 > 要件"),
            ("## Usage", "ガイド > Usage"),
        ]
        assert chunks[0].title == "ガイド"
    finally:
        corpus.close()


def test_spans_within_boundaries_keep_offsets_and_skip_blank_parts() -> None:
    text = "Page one.\n\nPage two.   \n\n\n富士山は日本一高い山です。"
    cuts = [0, text.index("Page two"), text.index("Page two") + 12, text.index("富士山")]
    spans = chunk_spans_within(text, cuts, 64)
    assert [text[s:e] for s, e, _ in spans] == [
        "Page one.",
        "Page two.",
        "富士山は日本一高い山です。",
    ]
    assert chunk_spans_within("no boundaries here", [], 64)[0][:2] == (0, 18)


def test_reindexing_a_store_chunked_across_pages_rechunks_it(tmp_path: Path) -> None:
    """A store written before chunks were cut at pages holds the document under the
    hash of its text and metadata alone; indexing the file again updates it."""
    path = write_pdf(tmp_path / "r.pdf", numbered_pages(3))
    corpus, _ = _store_and_read(tmp_path, path)
    try:
        (document,) = read_inputs([path])
        former = json.dumps(
            [document.id, document.title, document.text, document.metadata],
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
            default=str,
        )
        import hashlib

        old_hash = hashlib.sha256(former.encode()).hexdigest()
        with sqlite3.connect(corpus.location + "/sift.db") as db:
            db.execute("UPDATE documents SET hash = ? WHERE doc_id = ?", (old_hash, document.id))
        corpus.close()
        corpus = SqliteCorpus(tmp_path / "store")
        report = corpus.upsert([document])
        assert report.updated == 1 and report.chunks_written == 3
        assert corpus.upsert([document]).unchanged == 1  # and only once
    finally:
        corpus.close()


@pytest.mark.parametrize(
    ("candidate", "own"),
    [
        ("Word Document", ""),
        ("PowerPoint Presentation", ""),
        ("Microsoft Word - 決算短信.docx", ""),
        ("Microsoft PowerPoint - deck.pptx", ""),
        ("Document1", ""),
        ("Untitled-3", ""),
        ("report.docx", ""),
        ("無題のドキュメント", ""),
        ("  ", ""),
        (None, ""),
        ("統合報告書  2024", "統合報告書 2024"),
        ("R Installation and Administration", "R Installation and Administration"),
        ("Word - the magazine of words", "Word - the magazine of words"),
    ],
)
def test_titles_are_a_persons_not_a_templates(candidate: str | None, own: str) -> None:
    assert own_title(candidate) == own


def test_untitled_office_files_take_their_first_heading_then_their_name(tmp_path: Path) -> None:
    import docx

    untitled = docx.Document()
    untitled.core_properties.title = "Word Document"
    untitled.add_heading("梅雨の記録", 1)
    untitled.add_paragraph("梅雨入りは六月です。")
    untitled.save(str(tmp_path / "notes.docx"))
    bare = docx.Document()
    bare.core_properties.title = "Microsoft Word - bare.docx"
    bare.add_paragraph("No heading at all.")
    bare.save(str(tmp_path / "bare.docx"))
    printed = write_pdf(tmp_path / "printed.pdf", [["text"]], title="Microsoft Word - x.docx")
    titles = {d.id: d.title for d in read_inputs([tmp_path])}
    folder = tmp_path.name  # a folder given from elsewhere names its files' ids
    assert titles == {
        f"{folder}/notes.docx": "梅雨の記録",
        f"{folder}/bare.docx": "bare",
        f"{folder}/printed.pdf": "printed",
    }
    assert plan_inputs([printed]).files[0].doc_id == f"{folder}/printed.pdf"
