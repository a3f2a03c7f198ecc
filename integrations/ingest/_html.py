"""HTML files: the page's main content, read by trafilatura, blocks as paragraphs,
headings (h1-h6) as sections.

What is not content goes before trafilatura reads the page: the heading link marks of
documentation generators (Sphinx's `¶` headerlinks, texinfo's copiable links), and the
navigation, header, footer and sidebar blocks that they mark as such (`_FURNITURE`);
trafilatura's own rules take the rest. A definition's term and its description, and the
paragraphs of one list item, stay in one block (a line break between them, a blank line
after), so that a chunk holds a term with its description.

The encoding is the one the page declares (`<meta charset>`), else detected like any
text file; scripts, styles and templates are not text.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Any

from sift.integrations.ingest._detect import Refused, decode_bytes, looks_binary, read_bytes
from sift.integrations.ingest._layout import TextBuilder
from sift.integrations.ingest._titles import own_title
from sift.types import Document

__all__ = ["html_document", "html_text"]

_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_HEADING = re.compile(r"h([1-6])")
# The marks a generator puts in a heading to link to it: never part of its title.
_LINK_MARKS = frozenset({"¶", "§", "#", "🔗", "¶¶"})
_LINK_MARK_CLASSES = ("headerlink", "copiable-link", "copiable-anchor", "anchor-link")


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


# Navigation, headers, footers and sidebars as HTML5, ARIA and the generators of Debian's
# documentation mark them: Sphinx (sphinxsidebar, related, footer), DocBook XSL
# (navheader, navfooter), Publican, the DocBook toolchain of the Debian Administrator's
# Handbook (docnav lists, the banner and the #title logos: left in, every page began with
# "戻る Debian 管理者ハンドブック" and ranked for questions naming the book), texinfo
# (nav-panel, header), Doxygen (top, nav-path, footer), gtk-doc (navigation tables).
_FURNITURE = " | ".join(
    [
        "//nav",
        "//header",
        "//footer",
        "//aside",
        "//*[@role='navigation' or @role='banner' or @role='contentinfo' or @role='search'"
        " or @role='complementary']",
        *(
            f"//*[{_has_class(name)}]"
            for name in (
                "sphinxsidebar",
                "related",
                "footer",
                "navheader",
                "navfooter",
                "nav-panel",
                "navigation",
                "bd-sidebar",
                "bd-toc",
                "prev-next-area",
                "docnav",
            )
        ),
        "//div[@class='header'][not(.//*[@class='headertitle'])]",
        "//*[@id='top' or @id='nav-path' or @id='MSearchBox' or @id='side-nav']",
        "//div[@id='banner'] | //p[@id='title'][not(normalize-space())]",
    ]
)


def _without_furniture(root: Any) -> None:
    for element in root.xpath(_FURNITURE):
        if element.getparent() is not None:
            _drop(element)
    marks = root.xpath(
        "//a[" + " or ".join(_has_class(c) for c in _LINK_MARK_CLASSES) + "]"
        " | //a[starts-with(@href, '#')]"
    )
    for mark in marks:
        text = "".join(mark.itertext()).strip()
        if text in _LINK_MARKS or (not text and mark.get("href", "").startswith("#")):
            _drop(mark)
    # Empty anchors (DocBook's `<a id>` in every heading) read as links to trafilatura,
    # which drops a heading that is all link.
    for anchor in root.xpath("//a[not(@href) and not(*) and not(normalize-space())]"):
        _drop(anchor)


_INLINE_OR_HEADING = (
    "h1", "h2", "h3", "h4", "h5", "h6", "span", "a", "strong", "em", "b", "i", "code",
    "kbd", "tt", "var", "samp", "cite", "dfn", "abbr",
)  # fmt: skip


def _framed(root: Any) -> None:
    """The page's content in a `<main>` (the one it marks, else its whole body), with no
    class or id left on headings and inline elements: trafilatura reads headings only
    inside a frame it recognises (texinfo and DocBook pages mark none), and its class
    rules, written for web pages, would take documentation for furniture (DocBook's
    `guimenu` spans and `title` headings)."""
    marked = root.xpath("//main | //article | //*[@role='main']")
    for element in root.iter(*_INLINE_OR_HEADING):
        for name in ("class", "id"):
            element.attrib.pop(name, None)
    if marked:
        marked[0].tag = "main"
        return
    body = root.find("body")
    if body is None:
        return
    main = body.makeelement("main", {})
    main.text, body.text = body.text, None
    for child in list(body):
        main.append(child)
    body.append(main)


def _drop(element: Any) -> None:
    """Removes an element but keeps the text that follows it."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail or ""
    previous = element.getprevious()
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


class _Writer:
    """trafilatura's XML body (head, p, list/item, table/row/cell, code, quote, hi, lb)
    into a TextBuilder."""

    def __init__(self) -> None:
        self.out = TextBuilder()
        self.first_h1 = ""

    def blocks(self, element: Any, inside_item: bool = False) -> None:
        for child in element:
            self.block(child, inside_item)

    def _break(self, inside_item: bool) -> None:
        self.out.line() if inside_item else self.out.block()

    def block(self, element: Any, inside_item: bool) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag == "head":
            heading = _HEADING.fullmatch(element.get("rend", ""))
            level = int(heading.group(1)) if heading else 2
            title = " ".join("".join(element.itertext()).split())
            if not title:
                return
            if level == 1 and not self.first_h1:
                self.first_h1 = title
            self.out.begin_section(level)
            self.out.write(title)
            self.out.end_section(title)
        elif tag == "list":
            self._break(inside_item)
            for item in element:
                rend = item.get("rend", "")
                if rend.startswith("dd"):
                    self.out.line()  # a description stays with its term
                else:
                    self._break(inside_item)
                self.inline_or_blocks(item, inside_item=True)
            self._break(inside_item)
        elif tag == "table":
            self._break(inside_item)
            for row in element.iter("row"):
                self.out.line()
                for cell in row:
                    self.out.space()
                    self.inline(cell)
            self._break(inside_item)
        elif tag == "code":
            self._break(inside_item)
            self.out.write("".join(element.itertext()).strip("\n"))
            self._break(inside_item)
        elif tag in ("quote", "div", "item", "cell"):
            self._break(inside_item)
            self.inline_or_blocks(element, inside_item)
            self._break(inside_item)
        else:  # p and anything inline at block level
            self._break(inside_item)
            self.inline(element)
            self._break(inside_item)
        if element.tail and element.tail.strip():
            self.out.write_words(element.tail)

    def inline_or_blocks(self, element: Any, inside_item: bool) -> None:
        if any(child.tag in _BLOCK_TAGS for child in element):
            if element.text and element.text.strip():
                self.out.write_words(element.text)
            self.blocks(element, inside_item)
        else:
            self.inline(element)

    def inline(self, element: Any) -> None:
        if element.text:
            self.out.write_words(element.text)
        for child in element:
            if child.tag == "lb":
                self.out.line()
            elif child.tag in _BLOCK_TAGS and child.tag != "code":
                self.block(child, inside_item=True)
                continue  # block() wrote the tail
            else:
                self.inline(child)
            if child.tail:
                self.out.write_words(child.tail)


_BLOCK_TAGS = frozenset({"head", "p", "list", "table", "code", "quote", "div", "item"})


def html_text(markup: str) -> tuple[str, str, dict[str, Any]]:
    """(title, text, location tables) of an HTML page's main content."""
    import lxml.html  # heavy imports, only where HTML is read
    from lxml.etree import ParserError
    from trafilatura import bare_extraction

    markup = _XML_DECLARATION.sub("", markup, count=1)
    try:
        root = lxml.html.document_fromstring(markup)
    except (ParserError, ValueError):
        return "", "", {}
    page_title = " ".join((root.findtext(".//title") or "").split())
    _without_furniture(root)
    _framed(root)
    extracted = bare_extraction(
        root,
        favor_recall=True,
        include_comments=False,
        include_tables=True,
        include_formatting=True,
        include_images=False,
        include_links=False,
        deduplicate=False,
        with_metadata=False,
        config=_config(),
    )
    writer = _Writer()
    body = getattr(extracted, "body", None)
    if body is not None:
        writer.blocks(body)
    title = own_title(page_title) or writer.first_h1
    return title, writer.out.text(), writer.out.metadata()


def _config() -> Any:
    from trafilatura.settings import use_config

    global _CONFIG
    if _CONFIG is None:
        _CONFIG = use_config()
        # A short page is content too (a manual's page of two lines): no minimum size
        # before trafilatura gives up on its own extraction, no wait for a signal.
        _CONFIG.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")
        _CONFIG.set("DEFAULT", "MIN_OUTPUT_SIZE", "1")
        _CONFIG.set("DEFAULT", "EXTRACTION_TIMEOUT", "0")
    return _CONFIG


_CONFIG: Any = None


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
