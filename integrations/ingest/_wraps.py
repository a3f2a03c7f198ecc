"""A PDF page's lines put back together: line wraps joined, blocks separated.

PDFium gives a page's text line by line, as laid out. A line that reaches the right edge
of the text (or would have had no room for the next line's first word) wrapped: it is
joined to the next line,
- without a break when either side is CJK (Japanese puts no space at a wrap),
- without a break when the line ends inside a URL,
- a word hyphenated at the wrap (`configu-` / `ration`) as the word (`configuration`)
  when the document spells it so elsewhere, else with its hyphen (`command-line`),
- else with a line break (an English wrap: a space to every reader of the text).
A line that ends short ends its block (a paragraph, a list item, a heading, a line of
code): a paragraph break follows, except that a short line whose next lines are indented
under it (a definition or an option with its description) keeps them in the same block,
so that a term travels with its description.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["SOFT_HYPHEN", "Line", "join_lines", "vocabulary"]

# Where PDFium joined a line ending in a hyphen to the next (a private-use character).
SOFT_HYPHEN = "\ue000"
_SOFT = re.compile(f"([A-Za-z]*){SOFT_HYPHEN}\\s*([A-Za-z]*)")

# Kana, kanji and the CJK punctuation and full-width forms: no space at a wrap next to them.
_CJK = re.compile(
    "[\u2e80-\u2fff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
)
_HYPHENATED = re.compile(r"([A-Za-z]+)-$")
_WORD_HEAD = re.compile(r"^([a-z]+)")
_URL_TAIL = re.compile(r"(?:(?:https?|ftp)://|www\.)[^\s<>\"]*$|\(?h(?:t(?:t(?:ps?)?)?)?:?/{0,2}$")
_URL_END = tuple(".,;:!?)]}>\"'")
_WORDS = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")


@dataclass(frozen=True, slots=True)
class Line:
    """One laid-out line: its text (no line break), where its text starts and ends on
    the page, its font size, and the width of its first word (None: no geometry)."""

    text: str
    left: float | None = None
    right: float | None = None
    em: float | None = None
    first_word: float | None = None


def vocabulary(texts: Iterable[str]) -> set[str]:
    """The lower-cased Latin words (and hyphenated compounds) of a document."""
    out: set[str] = set()
    for text in texts:
        out.update(w.lower() for w in _WORDS.findall(text))
    return out


def _wrapped(line: Line, following: Line, edge: float | None, justified: bool = False) -> bool:
    """Whether `line` ends because the text ran out of room (a wrap): it reaches the
    right edge of a justified column, or (ragged right) the next line's first word
    would not have fitted after it."""
    if edge is None or line.right is None or line.em is None:
        # No geometry: only CJK text between two CJK letters is taken as a wrap.
        return bool(line.text and _CJK.match(line.text[-1]) and _CJK.match(following.text[:1]))
    room = edge - line.right
    if justified:
        return room < 1.5 * line.em
    # A CJK line may break before any character: its first "word" is one character.
    first = line.em if _CJK.match(following.text[:1]) else following.first_word or 0.0
    needed = first + 0.3 * line.em
    return room < max(1.5 * line.em, needed)


def _indented_under(term: Line, body: Line) -> bool:
    if term.left is None or body.left is None or term.em is None:
        return False
    return body.left >= term.left + 1.5 * term.em


def _join(left: str, right: str, words: set[str]) -> str:
    """The separator (possibly taking back `left`'s hyphen) at a wrap between two lines."""
    if not right:
        return "\n"
    if _CJK.match(left[-1:]) or _CJK.match(right[:1]):
        return ""
    url = _URL_TAIL.search(left)
    if url and url.group(0) and not left.endswith(_URL_END) and not right[:1].isspace():
        tail = url.group(0)
        # A bare "h" or "(" is not a URL's start unless the next line carries it on.
        if "/" in tail or "." in tail or re.match(r"[a-z]*:?//", right):
            return ""
    hyphen = _HYPHENATED.search(left)
    head = _WORD_HEAD.match(right)
    if hyphen and head:
        joined = (hyphen.group(1) + head.group(1)).lower()
        compound = f"{hyphen.group(1)}-{head.group(1)}".lower()
        return "\x00" if joined in words and compound not in words else ""
    return "\n"


def _unhyphenate(text: str, words: set[str]) -> str:
    def word(match: re.Match[str]) -> str:
        left, right = match.group(1), match.group(2)
        joined, compound = f"{left}{right}", f"{left}-{right}"
        if joined.lower() in words and compound.lower() not in words:
            return joined
        return compound

    return _SOFT.sub(word, text)


def join_lines(lines: list[Line], words: set[str]) -> str:
    """A page's text from its lines: wraps joined, blocks separated by a blank line."""
    if not lines:
        return ""
    return _unhyphenate(_joined(lines, words), words)


def _joined(lines: list[Line], words: set[str]) -> str:
    edge, justified = _right_edge(lines)
    parts: list[str] = [lines[0].text]
    # The left edge of the term whose description is being read, if any.
    entry: float | None = None
    for at in range(1, len(lines)):
        previous, line = lines[at - 1], lines[at]
        if (
            entry is not None
            and line.left is not None
            and line.left <= entry + 0.25 * (previous.em or 0.0)
        ):
            entry = None
        if _wrapped(previous, line, edge, justified):
            separator = _join(parts[-1], line.text, words)
            if separator == "\x00":  # a hyphenated word: its hyphen goes
                parts[-1] = parts[-1][:-1]
                separator = ""
            parts.append(separator)
        elif entry is not None or _opens_entry(lines, at - 1, edge, justified):
            if entry is None:
                entry = previous.left
            parts.append("\n")
        else:
            parts.append("\n\n")
        parts.append(line.text)
    return "".join(parts)


def _right_edge(lines: list[Line]) -> tuple[float | None, bool]:
    """The right edge of the page's text and whether the text is justified: the
    rightmost edge that three lines or more reach (a line of code or a URL running into
    the margin is not the column), else the rightmost line's (ragged right)."""
    placed = sorted(
        ((line.right, line.em) for line in lines if line.right is not None and line.em),
        reverse=True,
    )
    for right, em in placed:
        if sum(1 for other, _ in placed if abs(other - right) <= 0.5 * em) >= 3:
            return right, True
    return (placed[0][0], False) if placed else (None, False)


def _opens_entry(lines: list[Line], at: int, edge: float | None, justified: bool) -> bool:
    """Whether the short line `at` is a term whose description follows, indented under
    it (and not the first line of an indented paragraph: the description's next line,
    if any, keeps the indent)."""
    term = lines[at]
    if at + 1 >= len(lines) or not _indented_under(term, lines[at + 1]):
        return False
    if at + 2 >= len(lines):
        return True
    body, after = lines[at + 1], lines[at + 2]
    short_body = not _wrapped(body, after, edge, justified)
    return short_body or (
        after.left is not None
        and term.left is not None
        and term.em is not None
        and after.left > term.left + 0.5 * term.em
    )
