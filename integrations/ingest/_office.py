"""Word (.docx, python-docx) and PowerPoint (.pptx, python-pptx) files.

DOCX: paragraphs and tables in document order; `Title` and `Heading N` paragraphs become
sections. PPTX: one page per slide (chunks say which slides they come from), the slide's
title as its section, then its text boxes, tables (groups included) and speaker notes.
A password-protected Office file is an encrypted OLE container, not a ZIP: refused as
encrypted; a legacy .doc/.ppt renamed is refused with what to do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from sift.integrations.ingest._detect import Refused, read_bytes, sniff_binary
from sift.integrations.ingest._layout import TextBuilder, clean_text
from sift.integrations.ingest._results import ExtractedFile
from sift.integrations.ingest._titles import own_title
from sift.types import Document

__all__ = ["docx_file", "pptx_file"]

T = TypeVar("T")
_HEADING = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")


def _check_container(path: Path, kind: str) -> None:
    head = read_bytes(path, limit=1 << 20)
    if not head.strip():
        raise Refused("empty", "empty file")
    if head.startswith(_OLE):
        if _ENCRYPTED_STREAM in head or _ENCRYPTED_STREAM in read_bytes(path):
            raise Refused(
                "encrypted", f"encrypted: the {kind} file needs a password; save it without one"
            )
        raise Refused(
            "malformed",
            f"a legacy binary Office file, not {kind}: save it as {kind} (Office or LibreOffice)",
        )
    if not head.startswith(b"PK"):
        what = sniff_binary(head[:16])
        raise Refused(
            "malformed",
            f"not a {kind} file (a {kind} file is a ZIP archive)"
            + (f": this is {what}" if what else ""),
        )


def _open(path: Path, kind: str, reader: Callable[[str], T]) -> T:
    """The file opened by its library, after the container checks; a file the library
    cannot read is refused as malformed, with the library's reason."""
    _check_container(path, kind)
    try:
        return reader(str(path))
    except Exception as exc:
        raise Refused(
            "malformed", f"not a readable {kind} file ({type(exc).__name__}: {exc})"
        ) from None


def _row_cells(cells: Iterable[Any]) -> list[str]:
    """A table row's cell texts; a merged cell (repeated by the libraries) counts once."""
    out: list[str] = []
    last: object = None
    for cell in cells:
        if cell is last:
            continue
        last = cell
        out.append(" ".join(clean_text(cell.text).split()))
    return out


def _write_table(out: TextBuilder, rows: Iterable[Iterable[Any]]) -> None:
    out.block()
    for row in rows:
        cells = _row_cells(row)
        if any(cells):
            out.line()
            out.write(" | ".join(cells))
    out.block()


def docx_file(path: Path, doc_id: str, meta: dict[str, Any], source: str) -> ExtractedFile:
    import docx  # a heavy import, only where Word files are read

    document = _open(path, "DOCX", docx.Document)
    out = TextBuilder()
    first_title = ""
    # `Paragraph.style` resolves an unstyled paragraph's default style by scanning every
    # style, each time (3 s for 2,000 paragraphs): names are looked up by id here instead.
    names = {style.style_id: style.name or "" for style in document.styles}
    for block in document.iter_inner_content():
        if hasattr(block, "rows"):
            _write_table(out, (row.cells for row in block.rows))
            continue
        text = clean_text(block.text).strip()
        style_id = block._p.style  # the paragraph's own style id; None: the default
        style = names.get(style_id, style_id or "") if style_id else ""
        heading = _HEADING.match(style)
        level = 1 if style.lower() == "title" else int(heading.group(1)) if heading else 0
        if level and text:
            out.begin_section(level)
            out.write(text)
            out.end_section(text)
            first_title = first_title or text
        elif text:
            out.block()
            out.write(text)
    if not out.size:
        raise Refused("empty", "no text in the document")
    return ExtractedFile(
        source,
        [
            Document(
                id=doc_id,
                title=own_title(document.core_properties.title) or first_title or path.stem,
                text=out.text(),
                metadata={**meta, "format": "docx", **out.metadata()},
            )
        ],
    )


def _shapes(shapes: Iterable[Any]) -> Iterator[Any]:
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            yield from _shapes(shape.shapes)
        else:
            yield shape


def pptx_file(path: Path, doc_id: str, meta: dict[str, Any], source: str) -> ExtractedFile:
    import pptx  # a heavy import, only where PowerPoint files are read

    deck = _open(path, "PPTX", pptx.Presentation)
    out = TextBuilder()
    first_title = ""
    count = 0
    for slide in deck.slides:
        count += 1
        out.page()
        title_shape = slide.shapes.title
        title = clean_text(title_shape.text_frame.text).strip() if title_shape is not None else ""
        if title:
            out.begin_section(1)
            out.write(" ".join(title.split()))
            out.end_section(title)
            first_title = first_title or " ".join(title.split())
        for shape in _shapes(slide.shapes):
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            if getattr(shape, "has_table", False):
                _write_table(out, (row.cells for row in shape.table.rows))
            elif getattr(shape, "has_text_frame", False):
                out.block()
                for paragraph in shape.text_frame.paragraphs:
                    line = clean_text("".join(run.text for run in paragraph.runs)).strip()
                    if line:
                        out.line()
                        out.write(line)
        if slide.has_notes_slide:
            notes = clean_text(slide.notes_slide.notes_text_frame.text).strip()
            if notes:
                out.block()
                out.write(f"Notes: {notes}")
    if not out.size:
        raise Refused("empty", "no text on any slide" if count else "the deck has no slides")
    return ExtractedFile(
        source,
        [
            Document(
                id=doc_id,
                title=own_title(deck.core_properties.title) or first_title or path.stem,
                text=out.text(),
                metadata={**meta, "format": "pptx", "page_count": count, **out.metadata()},
            )
        ],
        pages=count,
    )
