"""Each format on real files: what text comes out, with which title, pages and sections,
and what is refused with which reason."""

from __future__ import annotations

import csv
import gzip
import json
import zipfile
from pathlib import Path

import pytest

from sift.integrations.ingest import ExtractedFile, InputProblem, extract, plan_inputs, read_inputs
from sift.integrations.stores.locations import chunk_metadata
from sift.types import Document

from .conftest import (
    JAPANESE_LINES,
    encrypt_pdf,
    numbered_pages,
    write_docx,
    write_pdf,
    write_pptx,
)


def _read(path: Path) -> ExtractedFile:
    (file,) = plan_inputs([path]).files
    result = extract(file)
    result.documents = list(result.documents)
    return result


def _one(path: Path) -> Document:
    result = _read(path)
    assert result.problems == [], result.problems
    (document,) = result.documents
    return document


def _page_of(document: Document, needle: str) -> int:
    at = document.text.index(needle)
    return chunk_metadata(document.metadata, at, at + len(needle))["page"]


@pytest.mark.parametrize("font", ["HeiseiMin-W3", "IPAGothic"])
def test_japanese_pdf_text_and_pages(tmp_path: Path, font: str) -> None:
    """Adobe's CID font (no glyphs embedded: ToUnicode by CMap) and an embedded TrueType
    subset both extract as the exact Japanese text, page by page."""
    path = write_pdf(tmp_path / "決算.pdf", numbered_pages(3), font=font, title="決算説明資料")
    document = _one(path)
    assert document.title == "決算説明資料"
    assert document.metadata["format"] == "pdf" and document.metadata["page_count"] == 3
    for line in JAPANESE_LINES:
        assert line in document.text
    assert _page_of(document, "2ページ目") == 2
    assert _page_of(document, "Marker page 3") == 3
    assert document.metadata["page_starts"][0] == 0


def test_pdf_without_a_title_is_named_for_its_file(tmp_path: Path) -> None:
    document = _one(write_pdf(tmp_path / "q3-report.pdf", numbered_pages(1)))
    assert document.title == "q3-report"  # reportlab's "untitled" is no title


def test_encrypted_pdf_is_refused_as_encrypted_unless_it_opens_without_a_password(
    tmp_path: Path,
) -> None:
    plain = write_pdf(tmp_path / "plain" / "p.pdf", numbered_pages(2))
    locked = encrypt_pdf(plain, tmp_path / "locked.pdf", password="user-secret")
    result = _read(locked)
    assert result.documents == []
    (problem,) = result.problems
    assert problem.reason == "encrypted" and "password" in problem.error
    # Encrypted with an empty user password (only editing restricted): it opens.
    opened = encrypt_pdf(plain, tmp_path / "restricted.pdf", password="")
    assert "Marker page 2" in _one(opened).text


def test_image_only_pdf_has_no_text_layer_and_partial_scans_warn(tmp_path: Path) -> None:
    scan = _read(write_pdf(tmp_path / "scan.pdf", [None, None]))
    assert scan.documents == []
    (problem,) = scan.problems
    assert problem.reason == "no text layer" and problem.skipped
    assert "OCR" in problem.error

    pages = numbered_pages(4)
    mixed = _read(write_pdf(tmp_path / "mixed.pdf", [pages[0], None, None, pages[3]]))
    (document,) = mixed.documents
    (warning,) = mixed.problems
    assert warning.reason == "partial" and not warning.skipped
    assert "page(s) 2-3 of 4" in warning.error
    # Pages with no text still count: the last page's text says page 4.
    assert _page_of(document, "Marker page 4") == 4


def test_malformed_pdf_is_refused_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.7\n" + b"garbage " * 100)
    result = _read(path)
    (problem,) = result.problems
    assert problem.reason == "malformed" and "not a readable PDF" in problem.error


def test_docx_headings_become_sections_and_tables_rows(tmp_path: Path) -> None:
    document = _one(write_docx(tmp_path / "report.docx"))
    assert document.title == "統合報告書 2024"
    assert "地域 | 売上\n日本 | 4,820" in document.text
    assert document.metadata["section_titles"] == [
        "統合報告書 2024",
        "Results",
        "Results > 売上高",
        "Outlook",
    ]
    at = document.text.index(JAPANESE_LINES[0])
    assert chunk_metadata(document.metadata, at, at + 10)["section"] == "Results > 売上高"
    at = document.text.index("lithography")
    assert chunk_metadata(document.metadata, at, at + 5)["section"] == "Outlook"


def test_pptx_slides_are_pages_with_their_titles_as_sections(tmp_path: Path) -> None:
    document = _one(write_pptx(tmp_path / "deck.pptx", slides=3))
    assert document.title == "スライド 1: Topic 1"
    assert document.metadata["page_count"] == 3
    at = document.text.index("Body of slide 3")
    meta = chunk_metadata(document.metadata, at, at + 5)
    assert meta["page"] == 3 and meta["section"] == "スライド 3: Topic 3"
    assert "Notes: Speaker note 2" in document.text


def test_broken_and_password_protected_office_files_are_refused(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.docx"
    with zipfile.ZipFile(garbage, "w") as archive:
        archive.writestr("hello.txt", "not a word document")
    (problem,) = _read(garbage).problems
    assert problem.reason == "malformed" and "DOCX" in problem.error
    # A password-protected Office file is an OLE container holding "EncryptedPackage".
    locked = tmp_path / "locked.pptx"
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500)
    locked.write_bytes(header + "EncryptedPackage".encode("utf-16-le") + bytes(100))
    (problem,) = _read(locked).problems
    assert problem.reason == "encrypted"
    legacy = tmp_path / "old.docx"
    legacy.write_bytes(header + bytes(100))
    (problem,) = _read(legacy).problems
    assert problem.reason == "malformed" and "legacy" in problem.error


def test_csv_and_tsv_rows_carry_their_headers(tmp_path: Path) -> None:
    path = tmp_path / "tickets.csv"
    with path.open("w", encoding="cp932", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ticket", "件名", "status"])
        writer.writerow(["T-1", "ログインできない", "open"])
        writer.writerow(["T-2", "Printer jams, often", ""])
    document = _one(path)
    assert document.metadata["encoding"] == "shift_jis" and document.metadata["rows"] == 2
    assert document.text == (
        "ticket: T-1\n件名: ログインできない\nstatus: open\n\n"
        "ticket: T-2\n件名: Printer jams, often"
    )
    tsv = tmp_path / "sales.tsv"
    tsv.write_text("region\tsales\n日本\t4,820\n", encoding="utf-8")
    assert _one(tsv).text == "region: 日本\nsales: 4,820"
    header_only = tmp_path / "empty.csv"
    header_only.write_text("a,b\n", encoding="utf-8")
    (problem,) = _read(header_only).problems
    assert problem.reason == "empty"


def test_jsonl_gz_streams_like_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "a", "text": "English passage."}) + "\n")
        handle.write("{broken\n")
        handle.write(json.dumps({"id": "b", "text": "日本語の文。"}, ensure_ascii=False) + "\n")
    problems: list[InputProblem] = []
    documents = list(read_inputs([path], problems))
    assert [d.id for d in documents] == ["a", "b"] and documents[1].text == "日本語の文。"
    assert [(p.line, p.reason) for p in problems] == [(2, "malformed")]
    truncated = tmp_path / "cut.jsonl.gz"
    truncated.write_bytes(path.read_bytes()[:30])
    problems = []
    assert list(read_inputs([truncated], problems)) == []
    assert problems[0].reason == "malformed" and "decompress" in problems[0].error


def test_markdown_and_html_headings_become_sections(tmp_path: Path) -> None:
    markdown = tmp_path / "guide.md"
    markdown.write_text(
        "# Guide\n\nIntro.\n\n## 設置\n\nBolt it down.\n\n```\n# not a heading\n```\n\n"
        "Usage\n-----\n\nTurn it on.\n",
        encoding="utf-8",
    )
    document = _one(markdown)
    assert document.title == "Guide"
    assert document.metadata["section_titles"] == ["Guide", "Guide > 設置", "Guide > Usage"]
    at = document.text.index("Bolt")
    assert chunk_metadata(document.metadata, at, at + 4)["section"] == "Guide > 設置"

    page = tmp_path / "page.html"
    page.write_bytes(
        '<html><head><meta charset="shift_jis"><title>製品情報</title>'
        "<style>p{}</style></head><body><h1>概要</h1><p>First   para.</p>"
        "<h2>仕様</h2><p>Second &amp; last.</p><script>var x=1;</script></body></html>".encode(
            "cp932"
        )
    )
    document = _one(page)
    assert document.title == "製品情報" and document.metadata["encoding"] == "shift_jis"
    assert document.text == "概要\n\nFirst para.\n\n仕様\n\nSecond & last."
    at = document.text.index("Second")
    assert chunk_metadata(document.metadata, at, at + 6)["section"] == "概要 > 仕様"
