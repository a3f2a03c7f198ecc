"""HTML files: the visible text, blocks as paragraphs, headings (h1-h6) as sections.

The encoding is the one the page declares (`<meta charset>`), else detected like any
text file; scripts, styles and templates are not text.
"""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from sift.integrations.ingest._detect import Refused, decode_bytes, looks_binary, read_bytes
from sift.integrations.ingest._layout import TextBuilder
from sift.integrations.ingest._titles import own_title
from sift.types import Document

__all__ = ["html_document", "html_text"]

_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


class _HtmlText(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "template", "head", "svg"})
    _BLOCK = frozenset(
        {
            "p", "div", "li", "tr", "section", "article", "blockquote", "pre", "table", "ul",
            "ol", "header", "footer", "main", "nav", "aside", "dl", "dt", "dd", "figure",
            "figcaption", "hr", "form", "fieldset", "address",
        }
    )  # fmt: skip
    _LINE = frozenset({"br", "td", "th"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out = TextBuilder()
        self.title = ""
        self._skip = 0
        self._in_title = False
        self._pre = 0
        self._heading: str | None = None
        self._heading_text: list[str] = []
        self.first_h1 = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skip += 1
        elif tag in _HEADINGS and self._heading is None and not self._skip:
            self._heading, self._heading_text = tag, []
            self.out.begin_section(_HEADINGS[tag])
        elif tag in self._BLOCK:
            self.out.block()
        elif tag in self._LINE:
            self.out.line() if tag == "br" else self.out.space()
        if tag == "pre":
            self._pre += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "hr"):
            self.out.line() if tag == "br" else self.out.block()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self._SKIP and self._skip:
            self._skip -= 1
        elif tag == self._heading:
            title = " ".join("".join(self._heading_text).split())
            if tag == "h1" and not self.first_h1:
                self.first_h1 = title
            self.out.end_section(title)
            self._heading = None
        elif tag in self._BLOCK:
            self.out.block()
        if tag == "pre" and self._pre:
            self._pre -= 1
        if tag == "tr":
            self.out.line()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip:
            return
        if self._heading is not None:
            self._heading_text.append(data)
        if self._pre:
            self.out.write(data.strip("\n"))
        else:
            self.out.write_words(data)


def html_text(markup: str) -> tuple[str, str, dict[str, Any]]:
    """(title, text, location tables) of an HTML page."""
    parser = _HtmlText()
    parser.feed(markup)
    parser.close()
    title = own_title(parser.title) or parser.first_h1
    return title, parser.out.text(), parser.out.metadata()


def _decode(data: bytes) -> tuple[str, str]:
    declared = _CHARSET.search(data[:4096])
    if declared is not None and not data.startswith(
        (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    ):
        name = declared.group(1).decode("ascii").lower()
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            codec = None
        if codec is not None:
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                pass  # the declaration is wrong; detect instead
            else:
                if looks_binary(text):
                    raise Refused("binary content", "binary content under an HTML name")
                return text, codec
    return decode_bytes(data, name="HTML")


def html_document(path: Path, doc_id: str, meta: dict[str, Any]) -> Document:
    data = read_bytes(path)
    if not data.strip():
        raise Refused("empty", "empty file")
    markup, encoding = _decode(data)
    title, text, layout = html_text(markup)
    return Document(
        id=doc_id,
        title=title or path.stem,
        text=text,
        metadata={**meta, "format": "html", "encoding": encoding, **layout},
    )
