"""Index pages: a plain table of questions, each row linked to its trace page (no script)."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from urllib.parse import quote

from pydantic import BaseModel

from sift.integrations.traceview._page import page

__all__ = ["IndexRow", "page_file_name", "render_index_html"]

_UNSAFE = re.compile(r"[^\w.-]+")
_RELATIVE_PAGE = re.compile(r"^[^:?#\\]+\.html$")

Cell = bool | str | int | float | None


class IndexRow(BaseModel):
    """One row: its cells (plain text or numbers), the trace page the `link_column` cell
    links to (a relative file name), and the episode's stop reason, shown as a badge."""

    cells: list[Cell]
    link: str | None = None
    stopped_because: str | None = None
    error: str | None = None


def page_file_name(number: int, key: str | None = None) -> str:
    """`0007-<key>.html`: numbered so names stay unique and in input order; the key keeps
    letters of any script, digits, `.`, `-` and `_` (anything else becomes `-`)."""
    slug = _UNSAFE.sub("-", key or "").strip("-.")[:60]
    return f"{number:04d}-{slug}.html" if slug else f"{number:04d}.html"


def _cell(value: Cell) -> str:
    if value is None:
        return '<td class="muted">–</td>'
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, int):
        return f'<td class="num">{value:,}</td>'
    if isinstance(value, float):
        return f'<td class="num">{value:.3f}</td>'
    return f"<td>{html.escape(value)}</td>"


def render_index_html(
    title: str,
    columns: Sequence[str],
    rows: Sequence[IndexRow],
    *,
    intro: str = "",
    link_column: int = 0,
) -> str:
    """A self-contained index page. Every text is escaped; links must be relative pages."""
    with_stop = any(row.stopped_because for row in rows)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    if with_stop:
        head += "<th>stopped because</th>"
    lines = []
    for row in rows:
        if len(row.cells) != len(columns):
            raise ValueError(f"an index row has {len(row.cells)} cells for {len(columns)} columns")
        cells = [_cell(value) for value in row.cells]
        if row.link is not None:
            if not _RELATIVE_PAGE.match(row.link):
                raise ValueError(f"index links must be relative .html files; got {row.link!r}")
            text = html.escape(str(row.cells[link_column] or row.link))
            cells[link_column] = f'<td><a href="{html.escape(quote(row.link))}">{text}</a></td>'
        if with_stop:
            reason = row.stopped_because or ""
            badge = (
                f'<span class="stop {html.escape(reason)}">{html.escape(reason)}</span>'
                if reason
                else ""
            )
            error = ""
            if row.error:
                error = f' <span class="stop-error">{html.escape(row.error)}</span>'

            cells.append(f"<td>{badge}{error}</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    body = (
        f'<main class="index"><h1>{html.escape(title)}</h1>\n'
        + (f'<p class="muted">{html.escape(intro)}</p>\n' if intro else "")
        + f'<table class="index"><thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(lines)
        + "\n</tbody></table></main>"
    )
    document, _ = page(title=title, body=body, scripts=[])
    return document
