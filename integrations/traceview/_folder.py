"""A folder of trace pages, one per question of a batch, with an index.html linking them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sift.integrations.traceview._index import IndexRow, page_file_name, render_index_html
from sift.integrations.traceview._trace import TokenTiers, episode_results, write_trace_html
from sift.types import SearchResult

__all__ = ["INDEX_PAGE", "TraceFolder"]

INDEX_PAGE = "index.html"
_COLUMNS = ("#", "id", "question", "turns", "tool calls", "evidence", "first evidence")


class TraceFolder:
    """Writes each question's page as it is answered; `write_index()` writes the index
    (call it at the end, also after failures: the pages written so far stay linked)."""

    def __init__(self, folder: str | Path, *, title: str, tiers: TokenTiers | None = None):
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise ValueError(f"--html {self.folder}: exists and is not a folder")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.title = title
        self.tiers = tiers
        self._rows: list[IndexRow] = []

    def add(
        self,
        key: str | None,
        result: SearchResult | Sequence[SearchResult],
        *,
        fused: SearchResult | None = None,
    ) -> Path:
        """The page of one question (`result`: one result, or its rollouts' results)."""
        number = len(self._rows) + 1
        name = page_file_name(number, key)
        shown, rollouts = episode_results(result, fused)
        path = write_trace_html(
            self.folder / name,
            rollouts or shown,
            fused=shown,
            tiers=self.tiers,
            back_link=INDEX_PAGE,
        )
        first = shown.evidence[0].title or shown.evidence[0].doc_id if shown.evidence else None
        self._rows.append(
            IndexRow(
                cells=[
                    number,
                    key,
                    shown.question,
                    shown.usage.turns,
                    shown.usage.tool_calls,
                    len(shown.evidence),
                    first,
                ],
                link=name,
                stopped_because=shown.stopped_because,
                error=shown.error,
            )
        )
        return path

    def add_failure(self, key: str | None, message: str) -> None:
        """A question that produced no page (bad input line, invalid question)."""
        number = len(self._rows) + 1
        self._rows.append(
            IndexRow(
                cells=[number, key, None, None, None, None, None],
                stopped_because="error",
                error=message,
            )
        )

    def write_index(self) -> Path:
        path = self.folder / INDEX_PAGE
        pages = sum(1 for row in self._rows if row.link)
        intro = f"{pages} trace pages" + (
            f", {len(self._rows) - pages} questions without one" if pages < len(self._rows) else ""
        )
        path.write_text(
            render_index_html(self.title, _COLUMNS, self._rows, intro=intro, link_column=2),
            encoding="utf-8",
        )
        return path
