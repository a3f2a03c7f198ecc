"""Plain text and Markdown files. Markdown headings (ATX `# Title` and setext `Title`
over `===`/`---`, outside fenced code) become the sections of the document."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sift.integrations.ingest._detect import read_text
from sift.integrations.ingest._layout import HeadingPath
from sift.integrations.stores.locations import SECTION_STARTS, SECTION_TITLES
from sift.types import Document

__all__ = ["markdown_document", "markdown_sections", "text_document"]

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def text_document(path: Path, doc_id: str, meta: dict[str, Any]) -> Document:
    text, encoding = read_text(path)
    return Document(
        id=doc_id,
        title=path.stem,
        text=text,
        metadata={**meta, "format": "text", "encoding": encoding},
    )


def markdown_sections(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """The document's title (its first level-1 heading) and its headings as
    (offset, level, title), in order."""
    headings: list[tuple[int, int, str]] = []
    offset = 0
    fenced = False
    previous: tuple[int, str] | None = None  # the last non-blank line: (offset, text)
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if _FENCE.match(body):
            fenced = not fenced
            previous = None
        elif not fenced:
            atx = _ATX.match(body)
            setext = _SETEXT.match(body)
            if atx:
                headings.append(
                    (offset + len(body) - len(body.lstrip()), len(atx.group(1)), atx.group(2))
                )
                previous = None
            elif setext and previous is not None and not _ATX.match(previous[1]):
                level = 1 if setext.group(1)[0] == "=" else 2
                headings.append((previous[0], level, previous[1].strip()))
                previous = None
            else:
                previous = (offset, body) if body.strip() else None
        offset += len(line)
    title = next((t for _, level, t in headings if level == 1), "")
    return title, headings


def markdown_document(path: Path, doc_id: str, meta: dict[str, Any]) -> Document:
    text, encoding = read_text(path)
    title, headings = markdown_sections(text)
    path_of = HeadingPath()
    layout: dict[str, Any] = {}
    if headings:
        layout = {
            SECTION_STARTS: [offset for offset, _, _ in headings],
            SECTION_TITLES: [path_of.enter(level, t) for _, level, t in headings],
        }
    return Document(
        id=doc_id,
        title=title or path.stem,
        text=text,
        metadata={**meta, "format": "markdown", "encoding": encoding, **layout},
    )
