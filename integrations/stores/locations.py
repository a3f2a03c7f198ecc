"""Where a chunk sits in its document: the page(s) and the section it comes from.

An extractor that knows a document's layout records it in the document's metadata as
tables of character offsets into `Document.text`:

- `page_starts`: where each page begins (page 1 first, ascending, the first one 0). PDF
  pages and PowerPoint slides are pages.
- `section_starts` and `section_titles`: where each section begins and its title (the
  heading path, e.g. `Results > Revenue`), one title per start, ascending.

Chunks are cut later, by the store, never across a page or section start
(`boundaries`): each chunk's metadata then gets, from its offsets, `page` (the page its
text is on) and `pages` ([first, last]: one page, except for chunks stored before chunks
were cut at pages, which are read as they were stored), and `section` (the heading path
its text sits under). The tables stay on the document (they are part of what it is, so a
changed layout re-indexes it) and are left out of chunk metadata, where a 300-page table
would ride along with every search result.

`location_label` says where a chunk sits for people (`p. 3 · § Results > Revenue`): the
CLI's search results and `sift show` print it; the trace pages and /ui draw the same label
with the trace viewer's script (`locationLabel` in traceview/static/trace.js).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

__all__ = [
    "CHUNK_KEYS",
    "LOCATION_KEYS",
    "PAGE_STARTS",
    "SECTION_STARTS",
    "SECTION_TITLES",
    "boundaries",
    "check_locations",
    "chunk_metadata",
    "location_label",
    "page_number",
]

PAGE_STARTS = "page_starts"
SECTION_STARTS = "section_starts"
SECTION_TITLES = "section_titles"
LOCATION_KEYS = frozenset({PAGE_STARTS, SECTION_STARTS, SECTION_TITLES})
# What `chunk_metadata` adds: a chunk's own, not its document's, so a filter on one of
# them is judged chunk by chunk (`--filter '{"page": {"gte": 3, "lte": 5}}'`).
CHUNK_KEYS = frozenset({"page", "pages", "section"})


def _offsets(value: object) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
        and all(a <= b for a, b in pairwise(value))
    )


def check_locations(metadata: Mapping[str, Any], text_length: int) -> str | None:
    """What is wrong with a document's location tables, or None when they are usable."""
    pages = metadata.get(PAGE_STARTS)
    if pages is not None and not (
        _offsets(pages) and pages and pages[0] == 0 and pages[-1] <= text_length
    ):
        return (
            f"metadata {PAGE_STARTS!r} must be ascending character offsets into the text, "
            "one per page, the first one 0"
        )
    starts = metadata.get(SECTION_STARTS)
    titles = metadata.get(SECTION_TITLES)
    if (starts is None) != (titles is None):
        return f"metadata {SECTION_STARTS!r} and {SECTION_TITLES!r} come together"
    if starts is not None:
        if not (_offsets(starts) and (not starts or starts[-1] <= text_length)):
            return f"metadata {SECTION_STARTS!r} must be ascending character offsets into the text"
        if not (
            isinstance(titles, list)
            and len(titles) == len(starts)
            and all(isinstance(t, str) for t in titles)
        ):
            return f"metadata {SECTION_TITLES!r} must be one string per section start"
    return None


def boundaries(metadata: Mapping[str, Any]) -> list[int]:
    """The offsets at which a page or a section begins (a chunk never spans one); empty
    when the document has no location tables."""
    if not LOCATION_KEYS & metadata.keys():
        return []
    out: set[int] = set()
    for key in (PAGE_STARTS, SECTION_STARTS):
        value = metadata.get(key)
        if isinstance(value, list):
            out.update(v for v in value if isinstance(v, int) and not isinstance(v, bool))
    return sorted(out)


def chunk_metadata(metadata: Mapping[str, Any], start: int, end: int) -> dict[str, Any]:
    """A chunk's metadata: the document's, less the location tables, plus the chunk's
    `page`, `pages` and `section` when the document has the tables."""
    if not LOCATION_KEYS & metadata.keys():
        return dict(metadata)
    out = {k: v for k, v in metadata.items() if k not in LOCATION_KEYS}
    pages = metadata.get(PAGE_STARTS)
    if isinstance(pages, list) and pages:
        first = max(bisect_right(pages, start), 1)
        # The chunk's last character is at end - 1.
        last = max(bisect_right(pages, max(end - 1, start)), first)
        out["page"] = first
        out["pages"] = [first, last]
    starts = metadata.get(SECTION_STARTS)
    titles = metadata.get(SECTION_TITLES)
    if isinstance(starts, list) and isinstance(titles, list):
        at = bisect_right(starts, start) - 1
        if 0 <= at < len(titles) and titles[at]:
            out["section"] = titles[at]
    return out


def page_number(value: object) -> int | None:
    """A page number from chunk metadata (an int, or digits as text), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def location_label(metadata: Mapping[str, Any], *, title: str | None = None) -> str:
    """Where a chunk sits, for people: its page (`p. 3`, or `pp. 3-4` when it spans two or
    more) and its section (`§ Results > Revenue`), joined by ` · `; empty when its
    metadata has neither (a JSONL passage, a plain-text file). A section that is only the
    document's `title` (a Markdown file's one top heading) is left out: it says nothing
    the title beside it does not."""
    raw = metadata.get("pages")
    candidates = [metadata.get("page"), *(raw if isinstance(raw, list | tuple) else [])]
    pages = [p for p in map(page_number, candidates) if p is not None]
    parts = []
    if pages:
        first, last = min(pages), max(pages)
        parts.append(f"p. {first}" if first == last else f"pp. {first}-{last}")
    section = metadata.get("section")
    section = section.strip() if isinstance(section, str) else ""
    if section and section != (title or "").strip():
        parts.append(f"§ {section}")
    return " · ".join(parts)
