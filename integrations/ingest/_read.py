"""Reading the planned files into documents, in plan order, with PDF and Office files
read ahead in worker processes while the caller (a store's upsert: chunking, embedding,
writing) consumes the documents already read.

Worker processes, not threads: PDFium is not thread-safe, and the readers are CPU-bound
Python. A reader that crashes its worker (a malformed file can make a native library
fail hard) costs that one file, reported; the pool is replaced and the others go on.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from pydantic import ValidationError

from sift.integrations.ingest._csv import table_file
from sift.integrations.ingest._detect import Refused
from sift.integrations.ingest._html import html_document
from sift.integrations.ingest._jsonl import jsonl_file
from sift.integrations.ingest._office import docx_file, pptx_file
from sift.integrations.ingest._pdf import pdf_file
from sift.integrations.ingest._results import ExtractedFile, InputProblem
from sift.integrations.ingest._text import markdown_document, text_document
from sift.integrations.ingest._walk import HEAVY_KINDS, FileKind, InputFile
from sift.integrations.interpreters import safe_path_children
from sift.text import guess_language
from sift.types import Document

__all__ = ["FileRead", "extract", "read_files"]

_DOCUMENT_READERS = {"text": text_document, "markdown": markdown_document, "html": html_document}
_FILE_READERS = {
    "pdf": pdf_file,
    "docx": docx_file,
    "pptx": pptx_file,
    "csv": table_file,
    "tsv": table_file,
}


@dataclass(frozen=True, slots=True)
class FileRead:
    """One file done: what a progress display shows."""

    source: str
    documents: int
    pages: int
    skipped: bool


def _described(document: Document, kind: FileKind) -> Document:
    """The document with metadata `format` (how its file was read: `pdf`, `markdown`,
    `jsonl`...) and `lang` (`sift.text.guess_language` of its text), what files can
    be filtered on. A `format` or `lang` the record already holds (a JSONL line's own
    metadata) is kept as given: the user knows better than a guess."""
    added: dict[str, str] = {}
    if "format" not in document.metadata:
        added["format"] = kind
    if "lang" not in document.metadata:
        added["lang"] = guess_language(document.text)
    if not added:
        return document
    return document.model_copy(update={"metadata": {**document.metadata, **added}})


def _read(file: InputFile) -> ExtractedFile:
    meta = {"source": str(file.absolute)}
    if file.kind == "jsonl":
        result = jsonl_file(file.path, file.source)
        # A stream: each line is described as it is read.
        result.documents = (_described(d, file.kind) for d in result.documents)
        return result
    if file.kind in _FILE_READERS:
        result = _FILE_READERS[file.kind](file.path, file.doc_id, meta, file.source)
        result.documents = [_described(d, file.kind) for d in result.documents]
        return result
    document = _DOCUMENT_READERS[file.kind](file.path, file.doc_id, meta)
    return ExtractedFile(file.source, [_described(document, file.kind)])


def extract(file: InputFile) -> ExtractedFile:
    """The file's documents, or the reason it was skipped. Never raises for a bad file:
    one unreadable file must not stop an ingest of thousands."""
    try:
        result = _read(file)
    except Refused as exc:
        return ExtractedFile.skipped(file.source, exc.reason, exc.message)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "document"
        return ExtractedFile.skipped(
            file.source, "invalid document", f"cannot be a document ({field}: {first['msg']})"
        )
    except Exception as exc:  # a reader library failing on a malformed file
        return ExtractedFile.skipped(
            file.source, "malformed", f"could not be read ({type(exc).__name__}: {exc})"
        )
    if isinstance(result.documents, list):
        empty = [d for d in result.documents if not d.text.strip()]
        if empty and len(empty) == len(result.documents):
            return ExtractedFile.skipped(file.source, "empty", "no text")
    return result


def _quiet_worker() -> None:
    # Ctrl-C is the parent's to handle: it stops the pool and reports what was kept.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _Pool:
    """Worker processes for the heavy readers, replaced when a reader crashes one."""

    def __init__(self, jobs: int) -> None:
        self._jobs = jobs
        self._executor: ProcessPoolExecutor | None = None

    def submit(self, file: InputFile) -> Future[ExtractedFile]:
        # A submit may start a worker (spawn adds one while none is idle, up to `jobs`):
        # none may import from the folder the user runs sift in.
        with safe_path_children():
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    self._jobs,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_quiet_worker,
                )
            return self._executor.submit(extract, file)

    def reset(self) -> None:
        self.close()

    def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is None:
            return
        # Taken before shutdown, which forgets them. A worker still reading a large file
        # would hold the process's exit until it ends; nothing it produces is wanted now.
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()


# Worker processes take about half a second to start (a Python each, importing sift):
# they start once reading PDF and Office files in this process has taken that long and
# more of them remain, so a few small files never pay for them.
POOL_PAYBACK_S = 0.5

_Window = deque[tuple[InputFile, "Future[ExtractedFile] | None"]]


def read_files(
    files: list[InputFile],
    sink: list[InputProblem],
    *,
    jobs: int = 1,
    on_file: Callable[[FileRead], None] | None = None,
    payback_s: float = POOL_PAYBACK_S,
) -> Iterator[Document]:
    """Documents of the files in order; skipped files and lines go to `sink`.

    With `jobs` > 1, PDF and Office files are read in `jobs` worker processes, up to
    2 x `jobs` files ahead of the consumer, once reading them here has taken
    `payback_s` seconds (0: from the first file) and at least two remain.
    """
    reader = _Reader(files, sink, jobs=jobs, on_file=on_file, payback_s=payback_s)
    try:
        yield from reader.documents()
    finally:
        reader.close()


class _Reader:
    def __init__(
        self,
        files: list[InputFile],
        sink: list[InputProblem],
        *,
        jobs: int,
        on_file: Callable[[FileRead], None] | None,
        payback_s: float,
    ) -> None:
        self._files = files
        self._sink = sink
        self._jobs = jobs
        self._on_file = on_file
        self._payback_s = payback_s
        self._heavy_left = sum(1 for f in files if f.kind in HEAVY_KINDS)
        self._heavy_seconds = 0.0
        self._pool: _Pool | None = None
        self._window: _Window = deque()

    def documents(self) -> Iterator[Document]:
        ahead = 2 * self._jobs
        self._maybe_start_pool()
        for file in self._files:
            future = self._pool.submit(file) if self._pool and file.kind in HEAVY_KINDS else None
            self._window.append((file, future))
            while len(self._window) > ahead:
                yield from self._emit(*self._window.popleft())
        while self._window:
            yield from self._emit(*self._window.popleft())

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()

    def _maybe_start_pool(self) -> None:
        if (
            self._pool is None
            and self._jobs > 1
            and self._heavy_left > 1
            and self._heavy_seconds >= self._payback_s
        ):
            self._pool = _Pool(min(self._jobs, self._heavy_left))
            for index, (queued, pending) in enumerate(self._window):
                if pending is None and queued.kind in HEAVY_KINDS:
                    self._window[index] = (queued, self._pool.submit(queued))

    def _emit(self, file: InputFile, future: Future[ExtractedFile] | None) -> Iterator[Document]:
        heavy = file.kind in HEAVY_KINDS
        if future is not None:
            result = self._result(file, future)
        else:
            started = time.perf_counter()
            result = extract(file)
            if heavy:
                self._heavy_seconds += time.perf_counter() - started
        if heavy:
            self._heavy_left -= 1
            self._maybe_start_pool()
        count = 0
        for document in result.documents:
            count += 1
            yield document
        self._sink += result.problems
        if self._on_file is not None:
            skipped = any(p.skipped and p.line is None for p in result.problems)
            self._on_file(FileRead(file.source, count, result.pages, skipped))

    def _result(self, file: InputFile, future: Future[ExtractedFile]) -> ExtractedFile:
        try:
            return future.result()
        except BrokenProcessPool:
            pass
        # A worker died (every pending read of that pool is lost): a new pool reads this
        # file alone first, so a second crash is this file's, then the files behind it.
        pool = self._pool
        assert pool is not None
        pool.reset()
        try:
            result = pool.submit(file).result()
        except BrokenProcessPool:
            pool.reset()
            result = ExtractedFile.skipped(
                file.source, "malformed", "its reader crashed on it (a malformed file?)"
            )
        for index, (queued, pending) in enumerate(self._window):
            if pending is not None:
                self._window[index] = (queued, pool.submit(queued))
        return result
