"""JSONL files (`.jsonl`, and gzip-compressed `.jsonl.gz`): one document per line, as
`{"id", "title", "text", "metadata"}`. A line that is not such an object is reported
with its line number and skipped; the other lines still ingest. Lines are read as they
are stored, so a corpus of any size streams."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from sift.integrations.ingest._detect import Refused, sniff_binary
from sift.integrations.ingest._results import ExtractedFile, InputError, InputProblem, SkipReason
from sift.types import Document

__all__ = ["is_jsonl", "iter_json_lines", "jsonl_file"]


def is_jsonl(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith((".jsonl", ".jsonl.gz"))


def _open(path: Path) -> IO[bytes] | gzip.GzipFile:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rb")
    return path.open("rb")


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line); Refused for content that is not JSONL at all."""
    try:
        handle = _open(path)
    except OSError as exc:
        raise Refused("unreadable", f"cannot read: {exc.strerror or exc}") from None
    with handle:
        try:
            first = True
            for number, line in enumerate(handle, start=1):
                if first:
                    first = False
                    kind = sniff_binary(line[:16])
                    if kind is not None or b"\x00" in line[:65536]:
                        what = f": this is {kind}" if kind else ""
                        raise Refused("binary content", f"binary content under a JSONL name{what}")
                yield number, line
        except (OSError, EOFError, zlib.error) as exc:
            # gzip.BadGzipFile is an OSError; a truncated archive ends in EOFError.
            raise Refused("malformed", f"cannot decompress: {exc}") from None


def _parse(raw: bytes) -> tuple[dict[str, Any] | str, SkipReason]:
    """A line's object, or what is wrong with it and the reason's category."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return f"not UTF-8 (byte {exc.start})", "encoding"
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg})", "malformed"
    if not isinstance(record, dict):
        return "a line must be a JSON object", "malformed"
    return record, "malformed"


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, object) for each non-blank line of a JSONL file; a line that is not
    a JSON object comes as (line number, what is wrong with it), so callers can name it."""
    try:
        for number, raw in _lines(path):
            if raw.strip():
                yield number, _parse(raw)[0]
    except Refused as exc:
        raise InputError(f"{path}: {exc.message}") from None


def _documents(path: Path, source: str, sink: list[InputProblem]) -> Iterator[Document]:
    try:
        for number, raw in _lines(path):
            if not raw.strip():
                continue
            record, reason = _parse(raw)
            if isinstance(record, str):
                sink.append(InputProblem(source=source, line=number, reason=reason, error=record))
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
                sink.append(
                    InputProblem(
                        source=source,
                        line=number,
                        reason="invalid document",
                        error=f"field {field!r}: {first['msg']}",
                    )
                )
    except Refused as exc:
        sink.append(InputProblem(source=source, reason=exc.reason, error=exc.message))


def jsonl_file(path: Path, source: str) -> ExtractedFile:
    result = ExtractedFile(source)
    result.documents = _documents(path, source, result.problems)
    return result
