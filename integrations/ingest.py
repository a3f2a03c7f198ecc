"""Reading documents from files and folders: .txt, .md, .jsonl and .html.

Ids are stable across runs so re-indexing is an idempotent upsert: a file's id is its path
relative to the folder it was found in (or its name when given directly); a JSONL line
carries its own `id`. A malformed JSONL line is reported with its line number and skipped;
the other lines still ingest.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from sift.errors import SiftError
from sift.types import Document

__all__ = [
    "SUPPORTED_SUFFIXES",
    "InputError",
    "InputProblem",
    "count_documents",
    "iter_json_lines",
    "read_inputs",
]

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".jsonl", ".html", ".htm")


class InputError(SiftError):
    """An input path is missing, unreadable, or of an unsupported kind."""


class InputProblem(BaseModel):
    """A line or file that was skipped, and why; ingestion carries on past it."""

    source: str
    line: int | None = None
    error: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.error}"


class _HtmlText(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "template", "head"})
    _BLOCK = frozenset(
        {
            "p",
            "div",
            "br",
            "li",
            "tr",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "section",
            "article",
            "blockquote",
            "pre",
            "table",
            "ul",
            "ol",
            "header",
            "footer",
        }
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False
        self._h1: str | None = None
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skip += 1
        elif tag == "h1" and self._h1 is None:
            self._in_h1, self._h1 = True, ""
        if tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self._SKIP and self._skip:
            self._skip -= 1
        elif tag == "h1":
            self._in_h1 = False
        if tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip:
            return
        if self._in_h1 and self._h1 is not None:
            self._h1 += data
        self.parts.append(data)

    def result(self) -> tuple[str, str]:
        text = "".join(self.parts)
        text = re.sub(r"[ \t\r\f\v]+", " ", text)
        text = re.sub(r" ?\n ?", "\n", text)
        text = re.sub(r"\n{3,}", "\n\n", text).strip()
        title = " ".join((self.title or self._h1 or "").split())
        return title, text


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def _markdown_title(text: str) -> str:
    for line in text.splitlines()[:50]:
        match = re.match(r"#\s+(.+?)\s*#*\s*$", line)
        if match:
            return match.group(1)
    return ""


def _file_document(path: Path, doc_id: str) -> Document:
    suffix = path.suffix.lower()
    raw = _read_text(path)
    if suffix in (".html", ".htm"):
        parser = _HtmlText()
        parser.feed(raw)
        parser.close()
        title, text = parser.result()
        return Document(
            id=doc_id, title=title or path.stem, text=text, metadata={"source": str(path)}
        )
    if suffix in (".md", ".markdown"):
        return Document(
            id=doc_id,
            title=_markdown_title(raw) or path.stem,
            text=raw,
            metadata={"source": str(path)},
        )
    return Document(id=doc_id, title=path.stem, text=raw, metadata={"source": str(path)})


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, object) for each non-blank line of a JSONL file; a line that is not
    a JSON object comes as (line number, what is wrong with it), so callers can name it."""
    try:
        handle = path.open(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, f"not valid JSON ({exc.msg})"
                continue
            yield number, record if isinstance(record, dict) else "a line must be a JSON object"


def _jsonl_documents(path: Path, problems: list[InputProblem]) -> Iterator[Document]:
    for number, record in iter_json_lines(path):
        if isinstance(record, str):
            problems.append(InputProblem(source=str(path), line=number, error=record))
            continue
        try:
            yield Document(
                id=str(record["id"]) if "id" in record else "",
                title=str(record.get("title") or ""),
                text=record.get("text"),  # type: ignore[arg-type]
                metadata=record.get("metadata") or {},
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "record"
            problems.append(
                InputProblem(
                    source=str(path), line=number, error=f"field {field!r}: {first['msg']}"
                )
            )


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and Path(name).suffix.lower() in SUPPORTED_SUFFIXES:
                yield Path(folder) / name


def _check(path: Path) -> None:
    if not path.exists():
        raise InputError(f"input not found: {path}")
    if not os.access(path, os.R_OK):
        raise InputError(f"input not readable: {path}")
    if path.is_file() and path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise InputError(
            f"unsupported input {path}: expected one of {', '.join(SUPPORTED_SUFFIXES)}"
        )


def read_inputs(
    paths: Iterable[str | os.PathLike[str]], problems: list[InputProblem] | None = None
) -> Iterator[Document]:
    """Documents from files and folders, in a stable order.

    Every path is checked here, before the first document is produced, so a typo in the
    last argument fails before anything is ingested. Skipped lines go to `problems`.
    """
    roots = [Path(p) for p in paths]
    for root in roots:
        _check(root)
    return _documents(roots, problems if problems is not None else [])


def _documents(roots: list[Path], sink: list[InputProblem]) -> Iterator[Document]:
    for root in roots:
        files = (
            [(root, root.name)]
            if root.is_file()
            else [(f, f.relative_to(root).as_posix()) for f in _walk(root)]
        )
        for path, doc_id in files:
            if path.suffix.lower() == ".jsonl":
                yield from _jsonl_documents(path, sink)
            else:
                try:
                    yield _file_document(path, doc_id)
                except ValidationError as exc:
                    sink.append(InputProblem(source=str(path), error=str(exc.errors()[0]["msg"])))


def count_documents(paths: Iterable[str | os.PathLike[str]]) -> int | None:
    """A cheap upper bound of the documents `read_inputs` yields (JSONL lines counted),
    for a progress bar's total; None when the inputs cannot be read."""
    total = 0
    try:
        for root in map(Path, paths):
            files = [root] if root.is_file() else list(_walk(root))
            for path in files:
                if path.suffix.lower() == ".jsonl":
                    with path.open("rb") as handle:
                        total += sum(1 for line in handle if line.strip())
                else:
                    total += 1
    except OSError:
        return None
    return total
