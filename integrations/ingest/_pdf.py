"""PDF files, through PDFium (pypdfium2): the text layer of every page, and where each
page starts, so that every chunk knows its page(s).

PDFium reads CID-keyed fonts (Japanese reports, Adobe-Japan1) and embedded TrueType
subsets through their ToUnicode maps. A PDF that needs a password is refused as
encrypted; one whose pages have no text at all (a scan) is refused with a hint to OCR
it; one where only some pages lack text is ingested with a warning naming them.

Each page's lines are put back together (`_wraps`): a word, a CJK sentence or a URL
wrapped at a line end is joined, and a blank line ends each block (a paragraph, a list
item, a heading), a term and its indented description kept in one block.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sift.integrations.ingest._detect import Refused
from sift.integrations.ingest._layout import TextBuilder, clean_text
from sift.integrations.ingest._results import ExtractedFile, InputProblem
from sift.integrations.ingest._titles import own_title
from sift.integrations.ingest._wraps import SOFT_HYPHEN, Line, join_lines, vocabulary
from sift.types import Document

__all__ = ["pdf_file", "ranges"]

_PASSWORD_ERROR = 4  # FPDF_ERR_PASSWORD


def ranges(numbers: list[int]) -> str:
    """`1-3, 7, 9-10` for [1, 2, 3, 7, 9, 10]."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)


def _lines(textpage: Any) -> list[Line]:
    """The page's lines, each with where it starts and ends (PDF units), its font size
    and the width of its first word; without them where PDFium's characters do not line
    up with its text (a character outside the BMP)."""
    raw = textpage.get_text_range()
    geometry = len(raw) == textpage.count_chars()
    out: list[Line] = []
    offset = 0
    for piece in raw.split("\r\n"):
        start, end = offset, offset + len(piece)
        offset = end + 2
        # PDFium joins a line ending in a hyphen to the next, the hyphen and the line
        # break replaced by \ufffe (or \x02): kept as SOFT_HYPHEN for join_lines.
        text = clean_text(re.sub("[\x02\ufffe]", SOFT_HYPHEN, piece)).strip()
        if not text:
            continue
        if not geometry:
            out.append(Line(text))
            continue
        first = start + len(piece) - len(piece.lstrip())
        last = start + len(piece.rstrip()) - 1
        left, _, _, _ = textpage.get_charbox(first)
        _, _, right, _ = textpage.get_charbox(last)
        _, bottom, _, top = textpage.get_charbox(first, loose=True)
        space = piece.find(" ", first - start)
        word_end = (start + space - 1) if space > 0 else last
        _, _, word_right, _ = textpage.get_charbox(word_end)
        out.append(Line(text, left, right, max(top - bottom, 1.0), max(word_right - left, 0.0)))
    return out


def pdf_file(path: Path, doc_id: str, meta: dict[str, Any], source: str) -> ExtractedFile:
    import pypdfium2 as pdfium  # a heavy import, only where PDFs are read

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _PASSWORD_ERROR:
            raise Refused(
                "encrypted", "encrypted: the PDF needs a password to open; decrypt it first"
            ) from None
        raise Refused("malformed", f"not a readable PDF ({exc})") from None
    except OSError as exc:
        raise Refused("unreadable", f"cannot read: {exc.strerror or exc}") from None
    try:
        count = len(pdf)
        pages: list[list[Line]] = []
        for number in range(count):
            page = pdf[number]
            textpage = page.get_textpage()
            try:
                pages.append(_lines(textpage))
            finally:
                textpage.close()
                page.close()
        info = pdf.get_metadata_dict()
    finally:
        pdf.close()
    if count == 0:
        raise Refused("empty", "the PDF has no pages")
    words = vocabulary(line.text for lines in pages for line in lines)
    out = TextBuilder()
    blank: list[int] = []
    for number, lines in enumerate(pages):
        text = join_lines(lines, words).strip()
        out.page()
        if text:
            out.write(text)
        else:
            blank.append(number + 1)
    if len(blank) == count:
        raise Refused(
            "no text layer",
            f"no text layer on any of its {count} page(s): a scanned or image-only PDF; "
            "run OCR on it first (e.g. ocrmypdf) to make its text searchable",
        )
    title = own_title(info.get("Title"))
    document = Document(
        id=doc_id,
        title=title or path.stem,
        text=out.text(),
        metadata={**meta, "format": "pdf", "page_count": count, **out.metadata()},
    )
    problems = []
    if blank:
        problems.append(
            InputProblem(
                source=source,
                reason="partial",
                skipped=False,
                error=f"ingested without page(s) {ranges(blank)} of {count}: no text layer "
                "there (scanned pages?)",
            )
        )
    return ExtractedFile(source, [document], problems, pages=count)
