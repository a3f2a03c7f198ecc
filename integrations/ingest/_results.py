"""What reading an input produces: documents, and a report of everything that was not
read (or read only in part), each with its reason."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from sift.errors import SiftError
from sift.types import Document

__all__ = ["ExtractedFile", "InputError", "InputProblem", "SkipReason"]

# Why a file or a line was skipped (or, for `partial`, read only in part).
SkipReason = Literal[
    "unsupported type",
    "binary content",
    "encoding",
    "empty",
    "unreadable",
    "encrypted",
    "no text layer",
    "malformed",
    "invalid document",
    "partial",
]


class InputError(SiftError):
    """An input path is missing, unreadable, or of an unsupported kind."""


class InputProblem(BaseModel):
    """A line or file that was skipped, and why; ingestion carries on past it.

    `skipped` is False for a warning about a file that was still ingested (a PDF with
    some pages lacking a text layer)."""

    source: str
    line: int | None = None
    reason: SkipReason = "malformed"
    error: str
    skipped: bool = True

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.error}"


@dataclass(slots=True)
class ExtractedFile:
    """One input file read: its documents (a list, or a stream for JSONL), what went
    wrong, and the page count of paged formats."""

    source: str
    documents: Iterable[Document] = ()
    problems: list[InputProblem] = field(default_factory=list)
    pages: int = 0

    @classmethod
    def skipped(cls, source: str, reason: SkipReason, error: str) -> ExtractedFile:
        return cls(source, problems=[InputProblem(source=source, reason=reason, error=error)])
