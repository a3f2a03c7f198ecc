"""PDF files, through PDFium (pypdfium2): the text layer of every page, and where each
page starts, so that every chunk knows its page(s).

PDFium reads CID-keyed fonts (Japanese reports, Adobe-Japan1) and embedded TrueType
subsets through their ToUnicode maps. A PDF that needs a password is refused as
encrypted; one whose pages have no text at all (a scan) is refused with a hint to OCR
it; one where only some pages lack text is ingested with a warning naming them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sift.integrations.ingest._detect import Refused
from sift.integrations.ingest._layout import TextBuilder, clean_text
from sift.integrations.ingest._results import ExtractedFile, InputProblem
from sift.integrations.ingest._titles import own_title
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
        out = TextBuilder()
        blank: list[int] = []
        count = len(pdf)
        for number in range(count):
            page = pdf[number]
            textpage = page.get_textpage()
            try:
                text = clean_text(textpage.get_text_range()).strip()
            finally:
                textpage.close()
                page.close()
            out.page()
            if text:
                out.write(text)
            else:
                blank.append(number + 1)
        info = pdf.get_metadata_dict()
    finally:
        pdf.close()
    if count == 0:
        raise Refused("empty", "the PDF has no pages")
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
