"""The structured results of `read_document` and `grep` (their output schemas), and the
text an orchestrating model reads beside them. `search` answers a `SearchReport`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from sift.integrations.subagent import page_label, page_numbers
from sift.types import Chunk

__all__ = ["ChunkItem", "DocumentReport", "GrepReport", "document_uri"]

URI_PREFIX = "sift://doc/"


def document_uri(doc_id: str) -> str:
    """The resource URI of a document: `sift://doc/` and the id, its slashes as they are
    (the template is `sift://doc/{+doc_id}`), everything a URI cannot hold (non-ASCII,
    spaces, `?`, `#`, `%`) percent-encoded, and a `.` or `..` segment encoded so that no
    client resolves it away."""
    from urllib.parse import quote

    segments = quote(doc_id, safe="/").split("/")
    return URI_PREFIX + "/".join(s.replace(".", "%2E") if s in (".", "..") else s for s in segments)


class ChunkItem(BaseModel):
    """A stored passage."""

    doc_id: str
    chunk_id: str
    index: int = Field(description="Position of the passage in its document (0-based).")
    title: str
    text: str
    page: int | None = Field(None, description="First page of the passage, where known.")
    pages: list[int] = Field(default_factory=list, description="Every page it spans.")
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, chunk: Chunk) -> ChunkItem:
        pages = page_numbers(chunk.metadata)
        return cls(
            doc_id=chunk.doc_id,
            chunk_id=chunk.chunk_id,
            index=chunk.index,
            title=chunk.title,
            text=chunk.text,
            page=pages[0] if pages else None,
            pages=pages,
            metadata=dict(chunk.metadata),
        )


def _location(item: ChunkItem) -> str:
    where = f"chunk {item.chunk_id}"
    if item.pages:
        where += f"; {page_label(item.pages)}"
    return where


class DocumentReport(BaseModel):
    """Part of a document: `chunks` from `start_chunk`; `next_chunk` is where the next
    read starts (null when the document is complete)."""

    doc_id: str
    title: str
    uri: str = Field(description="The document as an MCP resource.")
    total_chunks: int
    start_chunk: int
    next_chunk: int | None
    chunks: list[ChunkItem]

    @classmethod
    def of(cls, doc_id: str, chunks: Sequence[Chunk], start: int, limit: int) -> DocumentReport:
        part = chunks[start : start + limit]
        end = start + len(part)
        return cls(
            doc_id=doc_id,
            title=chunks[0].title if chunks else "",
            uri=document_uri(doc_id),
            total_chunks=len(chunks),
            start_chunk=start,
            next_chunk=end if end < len(chunks) else None,
            chunks=[ChunkItem.of(c) for c in part],
        )

    def to_text(self) -> str:
        shown = (
            f"chunks {self.start_chunk}-{self.start_chunk + len(self.chunks) - 1}"
            if self.chunks
            else "no chunks"
        )
        lines = [
            f"# {self.title or self.doc_id} (doc {self.doc_id}; {shown} of {self.total_chunks})"
        ]
        for item in self.chunks:
            lines += ["", f"[{_location(item)}]", item.text]
        if self.next_chunk is not None:
            lines += [
                "",
                f"(the document goes on: call read_document with start_chunk={self.next_chunk})",
            ]
        return "\n".join(lines)


class GrepReport(BaseModel):
    """Passages whose text matches the pattern, in store order."""

    pattern: str
    hits: list[ChunkItem]
    note: str | None = Field(None, description="Set when the scan was bounded.")

    def to_text(self) -> str:
        count = len(self.hits)
        lines = [f"{count} passage{'s' if count != 1 else ''} match /{self.pattern}/."]
        if self.note:
            lines.append(f"note: {self.note}")
        for item in self.hits:
            lines += ["", f"{item.title or item.doc_id} (doc {item.doc_id}; {_location(item)})"]
            lines.append(item.text)
        return "\n".join(lines)
