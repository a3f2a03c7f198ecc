"""A document's own title: what a person set in the file's metadata, never what a template
or a converter put there when nobody did ("Word Document", "PowerPoint Presentation",
"Microsoft Word - report.docx", "Untitled-1", the file's own name...). The readers fall
back on the first heading, then the file name."""

from __future__ import annotations

import re

__all__ = ["own_title"]

# Titles templates and writers set by default, compared case-insensitively.
_DEFAULTS = frozenset(
    {
        "untitled",
        "untitled document",
        "unknown",
        "title",
        "no title",
        "document",
        "word document",
        "microsoft word document",
        "presentation",
        "powerpoint presentation",
        "microsoft powerpoint presentation",
        "slide 1",
        "click to add title",
        "workbook",
        "pdf document",
        "タイトルなし",
        "無題",
        "無題のドキュメント",
        "ドキュメント",
        "プレゼンテーション",
        "powerpoint プレゼンテーション",
    }
)
# Names numbered by the application ("Document1", "Presentation2", "Untitled-3",
# "Book1") and the "Microsoft Word - x.docx" titles that printing to PDF leaves.
_NUMBERED = re.compile(
    r"(document|presentation|untitled|book|doc|文書|ドキュメント|プレゼンテーション)[-_ ]?\d+",
    re.IGNORECASE,
)
_PRINTED = re.compile(
    r"microsoft\s+(word|powerpoint|excel)\s+-\s+.*"
    r"|(word|powerpoint|excel)\s+-\s+.+\.(docx?|pptx?|xlsx?|rtf)",
    re.IGNORECASE,
)
_FILE_NAME = re.compile(r".+\.(docx?|pptx?|xlsx?|pdf|odt|odp|rtf|txt|md|tex|dvi|ps)", re.IGNORECASE)


def own_title(candidate: str | None) -> str:
    """`candidate` with its white space collapsed, or "" when it is not a person's title
    (empty, a template default, an application's numbered name, a printed-from-Office
    label or a file name)."""
    title = " ".join((candidate or "").split())
    folded = title.casefold()
    if (
        not title
        or folded in _DEFAULTS
        or _NUMBERED.fullmatch(title)
        or _PRINTED.fullmatch(title)
        or _FILE_NAME.fullmatch(title)
    ):
        return ""
    return title
