"""What a store holds, document by document: an optional capability beside `Corpus`.

`DocumentCatalog` lists documents with their titles, sources and chunk counts (the CLI's
`sift ls`, `show` and `index --sync` use it); `SourceRoots` lets a store record the folder
its files' ids are relative to (`sift index`). Both stores list documents; the embedded
store also records a source root. Check with `isinstance(corpus, DocumentCatalog)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

__all__ = ["DocumentCatalog", "DocumentInfo", "SourceRoots"]


class DocumentInfo(BaseModel):
    """One stored document: id, title, chunk count and metadata (`source` among it for
    documents read from files)."""

    doc_id: str
    title: str = ""
    chunks: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def source(self) -> str | None:
        value = self.metadata.get("source")
        return value if isinstance(value, str) else None


@runtime_checkable
class DocumentCatalog(Protocol):
    def documents(self, *, prefix: str | None = None) -> Iterator[DocumentInfo]:
        """Every stored document, by id; with `prefix`, those whose id starts with it.
        Read lazily: a store of a million documents is never held in memory."""
        ...


@runtime_checkable
class SourceRoots(Protocol):
    def source_root(self) -> str | None:
        """The folder ids of files are relative to, once recorded."""
        ...

    def record_source_root(self, root: str) -> None:
        """Records the root; a store keeps the first one it is given."""
        ...
