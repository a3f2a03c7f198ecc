"""Reading documents from files and folders.

Formats: .txt, .md, .html, PDF (each chunk knows its page), DOCX, PPTX (a slide is a
page), CSV/TSV (rows with their headers), and JSONL (`.jsonl`, `.jsonl.gz`: a document per
line with its own `id`). Markdown, HTML and DOCX headings become sections. Text encodings
are detected (UTF-8, UTF-16/32 with a BOM, Shift_JIS/CP932, EUC-JP) and binary content
under a text name is refused. Every document carries metadata `format` (the kind its file
was read as: `pdf`, `docx`, `pptx`, `html`, `markdown`, `text`, `csv`, `tsv`, `jsonl`) and
`lang` (`sift.text.guess_language` of its text), unless it holds its own (a JSONL
line's metadata): what `--filter format=pdf` and `--filter lang=ja` select on.

Nothing is skipped silently: every file or line not read is an `InputProblem` with its
reason (`SkipReason`). Ids are stable across runs and spellings (`SourceNaming`), so
re-indexing is an idempotent upsert.

    plan = plan_inputs(["reports/"])            # checks every input first
    documents = read_files(plan.files, problems, jobs=4)   # PDFs read in 4 processes
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

from sift.integrations.ingest._jsonl import iter_json_lines
from sift.integrations.ingest._read import POOL_PAYBACK_S, FileRead, extract, read_files
from sift.integrations.ingest._results import ExtractedFile, InputError, InputProblem, SkipReason
from sift.integrations.ingest._walk import (
    SUPPORTED_SUFFIXES,
    InputFile,
    InputPlan,
    SourceNaming,
    default_root,
    file_kind,
    plan_inputs,
    stale_documents,
)
from sift.types import Document

__all__ = [
    "POOL_PAYBACK_S",
    "SUPPORTED_SUFFIXES",
    "ExtractedFile",
    "FileRead",
    "InputError",
    "InputFile",
    "InputPlan",
    "InputProblem",
    "SkipReason",
    "SourceNaming",
    "default_root",
    "extract",
    "file_kind",
    "iter_json_lines",
    "plan_inputs",
    "read_files",
    "read_inputs",
    "stale_documents",
]


def read_inputs(
    paths: Iterable[str | os.PathLike[str]],
    problems: list[InputProblem] | None = None,
    *,
    naming: SourceNaming | None = None,
    jobs: int = 1,
    on_file: Callable[[FileRead], None] | None = None,
) -> Iterator[Document]:
    """Documents from files and folders, in a stable order.

    Every path is checked here, before the first document is produced, so a typo in the
    last argument fails (InputError) before anything is ingested. Skipped files and
    lines go to `problems`. Ids are relative to `default_root(paths)` unless `naming`
    says otherwise (a store records its root: pass it for ids that do not depend on
    which folders were given).
    """
    plan = plan_inputs(paths, naming)
    sink = problems if problems is not None else []
    sink += plan.problems
    return read_files(plan.files, sink, jobs=jobs, on_file=on_file)
