"""Building a document's text while keeping its layout: where each page and each section
starts, as the character-offset tables of `sift.integrations.stores.locations`."""

from __future__ import annotations

from typing import Any

from sift.integrations.stores.locations import PAGE_STARTS, SECTION_STARTS, SECTION_TITLES

__all__ = ["HeadingPath", "TextBuilder", "clean_text"]

_MAX_TITLE_CHARS = 200
_SEPARATORS = ("", " ", "\n", "\n\n")


def clean_text(text: str) -> str:
    """Text without the control characters extractors leave behind (PDF fonts emit
    \\x02 for hyphens, \\ufffe, ...); tabs and newlines stay, CRLF becomes LF."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(
        c
        for c in text
        if c in "\t\n" or not (c < " " or "\x7f" <= c < "\xa0" or c in "\ufffe\uffff")
    )


class HeadingPath:
    """The titles of the headings enclosing the current position, outermost first."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, str]] = []

    def enter(self, level: int, title: str) -> str:
        """Records a heading of `level` (1 is outermost); returns the section's title path."""
        title = " ".join(title.split())[:_MAX_TITLE_CHARS]
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, title))
        return " > ".join(t for _, t in self._stack if t)


class TextBuilder:
    """Appends text pieces with the separators asked for between them (a space, a line
    break or a paragraph break, never doubled, never leading), and records the offset at
    which each page and each section begins."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._size = 0
        self._pending = 0  # index into _SEPARATORS
        self._pages_waiting = 0  # pages begun that have no text yet
        self._section_pending: int | None = None  # heading level awaiting its first text
        self._section_level = 0
        self._headings = HeadingPath()
        self.page_starts: list[int] = []
        self.section_starts: list[int] = []
        self.section_titles: list[str] = []

    @property
    def size(self) -> int:
        return self._size

    def _ask(self, separator: int) -> None:
        self._pending = max(self._pending, separator)

    def space(self) -> None:
        self._ask(1)

    def line(self) -> None:
        self._ask(2)

    def block(self) -> None:
        self._ask(3)

    def page(self) -> None:
        """A new page begins: at the next text written (after a paragraph break). A page
        with no text at all begins where the next one does."""
        self.block()
        self._pages_waiting += 1

    def begin_section(self, level: int) -> None:
        """The next text written is a heading of `level`; `end_section` gives its title."""
        self.block()
        self._section_pending = level

    def end_section(self, title: str) -> None:
        if self._section_pending is not None:
            # The heading had no text: no section.
            self._section_pending = None
            return
        if self._section_level and self.section_titles and not self.section_titles[-1]:
            self.section_titles[-1] = self._headings.enter(self._section_level, title)
        self._section_level = 0
        self.block()

    def write(self, text: str) -> None:
        if not text:
            return
        if self._size and self._pending:
            separator = _SEPARATORS[self._pending]
            self._parts.append(separator)
            self._size += len(separator)
        self._pending = 0
        self._flush_pages()
        if self._section_pending is not None:
            self.section_starts.append(self._size)
            self.section_titles.append("")
            self._section_level = self._section_pending
            self._section_pending = None
        self._parts.append(text)
        self._size += len(text)

    def write_words(self, data: str) -> None:
        """Inline text with its runs of whitespace collapsed to single spaces (HTML)."""
        if data[:1].isspace():
            self.space()
        words = data.split()
        if words:
            self.write(" ".join(words))
            if data[-1:].isspace():
                self.space()

    def _flush_pages(self) -> None:
        self.page_starts += [self._size] * self._pages_waiting
        self._pages_waiting = 0

    def text(self) -> str:
        return "".join(self._parts)

    def metadata(self) -> dict[str, Any]:
        """The location tables for the document's metadata (none that are empty)."""
        out: dict[str, Any] = {}
        self._flush_pages()
        if self.page_starts:
            out[PAGE_STARTS] = list(self.page_starts)
        kept = [(s, t) for s, t in zip(self.section_starts, self.section_titles, strict=True) if t]
        if kept:
            out[SECTION_STARTS] = [s for s, _ in kept]
            out[SECTION_TITLES] = [t for _, t in kept]
        return out
