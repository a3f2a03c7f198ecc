"""`sift index`: ingest files and folders into a store, with per-file progress, a summary
of everything skipped (with its reason) and, with `--sync`, removal of documents whose
files are gone.

Ids (docs/decisions/0019): paths relative to the store's recorded root; a folder given
from outside it is named by its name, then the path below it, never `../...`; a document
an earlier sift stored under another id for the same file (`../...`, a non-NFC spelling,
or in a store that records no root, an id without the folder's name) is renamed when its
file is indexed again, and every rename is reported (`renamed` in `--json`).

Exit codes: 0 everything was indexed; 1 some files, lines or documents were skipped or
failed (the rest is stored); 2 nothing was done (a bad argument, input or store); 130
interrupted (what was stored stays, each document whole).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from pydantic import BaseModel, Field
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from sift.errors import NotAStoreError, SiftError, StoreFullError
from sift.integrations.cli._options import QuietOption, StoreOption
from sift.integrations.cli._render import err_console, safe
from sift.integrations.ingest import (
    SUPPORTED_SUFFIXES,
    FileRead,
    InputError,
    InputPlan,
    InputProblem,
    SourceNaming,
    default_root,
    plan_inputs,
    read_files,
    stale_documents,
)
from sift.integrations.stores import open_store
from sift.integrations.stores.catalog import DocumentCatalog, SourceRoots
from sift.protocols import Corpus, EntityGraphCorpus
from sift.types import Document, DocumentFailure, UpsertReport

__all__ = ["EXIT_INTERRUPTED", "EXIT_SKIPPED", "IndexSummary", "index_documents", "register"]

EXIT_SKIPPED = 1
EXIT_INTERRUPTED = 130


class Renamed(BaseModel):
    """A stored document whose id changed: `former` (an earlier sift's id) is now `id`."""

    former: str
    id: str


class IndexSummary(BaseModel):
    """What `sift index --json` prints: every count, every skipped file or line with its
    reason, every failed document, every document `--sync` removed."""

    store: str
    source_root: str | None = None
    source_prefix: str | None = None
    files: int = 0
    pages: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks_written: int = 0
    skipped: list[InputProblem] = Field(default_factory=list)
    warnings: list[InputProblem] = Field(default_factory=list)
    failed: list[DocumentFailure] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    renamed: list[Renamed] = Field(default_factory=list)
    hidden: int = 0
    seconds: float = 0.0
    exit_code: int = 0


def _counted(documents: Iterable[Document], advance: Callable[[], None]) -> Iterator[Document]:
    for document in documents:
        yield document
        advance()


def index_documents(
    corpus: Corpus, documents: Iterable[Document], *, total: int | None, label: str, quiet: bool
) -> tuple[UpsertReport, float]:
    """Upserts with a progress bar over documents on stderr; the report and the seconds."""
    started = time.perf_counter()
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=quiet,
        transient=False,
    ) as progress:
        task = progress.add_task(label, total=total)
        report = corpus.upsert(_counted(documents, lambda: progress.advance(task)))
    return report, time.perf_counter() - started


@dataclass
class _Tally:
    """Documents of this run stored so far: what an interruption reports, wherever in
    the command it comes."""

    stored: int = 0


class _FileProgress:
    """Files done of the plan's, the file just read (and its pages), documents stored."""

    def __init__(self, progress: Progress, files: int, tally: _Tally) -> None:
        self._progress = progress
        self._files: TaskID = progress.add_task("files", total=files, detail="")
        self._stored: TaskID = progress.add_task("documents stored", total=None, detail="")
        self._tally = tally
        self.pages = 0

    @property
    def stored(self) -> int:
        return self._tally.stored

    def file_read(self, event: FileRead) -> None:
        self.pages += event.pages
        detail = safe(Path(event.source).name) + (f" ({event.pages} pages)" if event.pages else "")
        self._progress.update(self._files, advance=1, detail=detail)

    def documents_stored(self, count: int) -> None:
        self._tally.stored += count
        self._progress.update(self._stored, completed=self.stored)


def _naming(corpus: Corpus, inputs: list[Path], prefix: str | None) -> SourceNaming:
    if prefix is not None:
        return SourceNaming(prefix=prefix)
    recorded = corpus.source_root() if isinstance(corpus, SourceRoots) else None
    if recorded:
        return SourceNaming(root=Path(recorded))
    if isinstance(corpus, SourceRoots):
        root = default_root(inputs)
        corpus.record_source_root(str(root))
        return SourceNaming(root=root)
    # Each run picks its own root; one picked the way sift did before
    # docs/decisions/0019 is the former one, so those documents are renamed, not doubled.
    naming = SourceNaming.unrecorded(inputs)
    err_console.print(
        f"[yellow]note[/yellow] this store does not record a source root: ids are paths "
        f"relative to {safe(str(naming.root))}; give --source-prefix for ids that do not "
        "depend on the folders given",
        highlight=False,
    )
    return naming


def _sync(corpus: Corpus, plan: InputPlan) -> list[str]:
    if not plan.folders:
        err_console.print("[yellow]note[/yellow] --sync: no folder was given, nothing to remove")
        return []
    if not isinstance(corpus, DocumentCatalog):
        raise typer.BadParameter("--sync: this store cannot list its documents")
    try:
        stored = [(d.doc_id, d.source) for d in corpus.documents()]
    except NotAStoreError:
        return []  # nothing was ever stored: nothing to remove
    stale = stale_documents(stored, plan.folders)
    if stale:
        corpus.delete(stale)
    return stale


def _rename_former(corpus: Corpus, plan: InputPlan, failed: list[DocumentFailure]) -> list[Renamed]:
    """Deletes the documents stored under the former ids of files just stored under
    their new ones; the renames, to report."""
    lost = {f.doc_id for f in failed}
    moves = [(f.former_id, f.doc_id) for f in plan.files if f.former_id and f.doc_id not in lost]
    if not moves or not isinstance(corpus, DocumentCatalog):
        return []
    renamed = [
        Renamed(former=former, id=new)
        for former, new in moves
        if any(d.doc_id == former for d in corpus.documents(prefix=former))
    ]
    if renamed:
        corpus.delete([r.former for r in renamed])
    return renamed


def _summary_table(summary: IndexSummary) -> Table:
    table = Table(title="indexed", show_header=False)
    seen = summary.added + summary.updated + summary.unchanged + len(summary.failed)
    table.add_row(
        "documents",
        f"{seen:,} ({summary.added:,} added, {summary.updated:,} updated, "
        f"{summary.unchanged:,} unchanged, {len(summary.failed):,} failed)",
    )
    table.add_row("chunks written", f"{summary.chunks_written:,}")
    files = f"{summary.files:,}" + (f" ({summary.pages:,} pages)" if summary.pages else "")
    table.add_row("files read", files)
    if summary.skipped:
        reasons = Counter(p.reason for p in summary.skipped)
        table.add_row(
            "skipped",
            f"{len(summary.skipped):,} ("
            + ", ".join(f"{reason} {n:,}" for reason, n in reasons.most_common())
            + ")",
        )
    if summary.warnings:
        table.add_row("warnings", f"{len(summary.warnings):,}")
    if summary.removed:
        table.add_row("removed (--sync)", f"{len(summary.removed):,}")
    if summary.renamed:
        table.add_row("renamed", f"{len(summary.renamed):,}")
    if summary.hidden:
        table.add_row("hidden entries not read", f"{summary.hidden:,}")
    table.add_row("seconds", f"{summary.seconds:.2f}")
    if summary.pages and summary.seconds > 0:
        table.add_row("pages/s", f"{summary.pages / summary.seconds:,.0f}")
    return table


def _report(summary: IndexSummary, as_json: bool) -> None:
    for problem in summary.skipped:
        err_console.print(f"[yellow]skipped[/yellow] {safe(str(problem))}", highlight=False)
    for problem in summary.warnings:
        err_console.print(f"[yellow]warning[/yellow] {safe(str(problem))}", highlight=False)
    for failure in summary.failed:
        err_console.print(
            f"[red]failed[/red] {safe(failure.doc_id)}: {safe(failure.error)}", highlight=False
        )
    for doc_id in summary.removed:
        err_console.print(f"[cyan]removed[/cyan] {safe(doc_id)}", highlight=False)
    for move in summary.renamed:
        err_console.print(
            f"[cyan]renamed[/cyan] {safe(move.former)} -> {safe(move.id)} (the id sift "
            "gives this file now: no `..`, NFC, named by its folder; update any reference "
            "to the former id)",
            highlight=False,
        )
    err_console.print(_summary_table(summary))
    if as_json:
        sys.stdout.write(summary.model_dump_json() + "\n")


def _default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def register(app: typer.Typer) -> None:
    @app.command("index")
    def index(
        inputs: Annotated[
            list[Path],
            typer.Argument(
                help=f"Files or folders ({' '.join(s.lstrip('.') for s in SUPPORTED_SUFFIXES)})"
            ),
        ],
        store: StoreOption = None,
        embedder: Annotated[
            str | None,
            typer.Option(help="Embedder for a new store: static, minilm, hash or ollama:<model>"),
        ] = None,
        sync: Annotated[
            bool,
            typer.Option(
                "--sync",
                help="Also remove stored documents whose files are gone from the folders "
                "given (only under those folders).",
            ),
        ] = False,
        source_prefix: Annotated[
            str | None,
            typer.Option(
                "--source-prefix",
                help="Ids are this prefix + the path below the folder given (default: the "
                "path relative to the store's recorded root; for a file outside it, the "
                "folder given's name, then the path below it).",
            ),
        ] = None,
        jobs: Annotated[
            int,
            typer.Option(
                "--jobs", "-j", min=1, max=64, help="Processes reading PDF and Office files."
            ),
        ] = _default_jobs(),
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the summary as JSON on stdout.")
        ] = False,
        entity_graph: Annotated[
            bool,
            typer.Option(
                "--entity-graph",
                help="Keep the entity graph of the chunks in the embedded store "
                "(docs/entity-graph.md): single-shot searches then reach second hops "
                "through it. Recorded: every later open keeps it. Adds 30-36 % to an "
                "English ingest on 2 cores.",
            ),
        ] = False,
        quiet: QuietOption = False,
    ) -> None:
        """Ingest documents; re-running with the same inputs adds nothing.

        Exit code 0: all indexed; 1: something was skipped or failed (the rest is
        stored); 2: nothing was done; 130: interrupted (what was stored stays).
        """
        options: dict[str, Any] = {"embedder": embedder} if embedder else {}
        tally = _Tally()
        try:
            # The inputs are looked at before the store is opened: with nothing to index
            # the command fails having made no store and changed none (even to record
            # a source root). With --sync an empty folder is an answer (its documents
            # are gone), for a store that exists.
            preview = plan_inputs(inputs, SourceNaming(prefix=source_prefix))
            if not preview.files and not sync:
                _refuse_nothing(inputs, preview.problems, preview.hidden)
            corpus = open_store(store, **options) if preview.files else _existing(store)
            if entity_graph:
                corpus = _with_entity_graph(corpus, store, options)
            try:
                naming = _naming(corpus, inputs, source_prefix)
                plan = plan_inputs(inputs, naming)
                summary = _run(corpus, plan, jobs=jobs, sync=sync, quiet=quiet, tally=tally)
            except SiftError as exc:
                # A store failing part-way (its disk full) after batches were
                # committed: partial work, not "nothing was done".
                if tally.stored == 0:
                    raise
                _say_partial(exc, tally.stored, as_json)
                raise typer.Exit(code=EXIT_SKIPPED) from None
            finally:
                corpus.close()
        except KeyboardInterrupt:
            # Wherever Ctrl-C lands (opening, reading, storing, closing): one line, never
            # a traceback, and what of this run is kept.
            _say_interrupted(tally.stored)
            raise typer.Exit(code=EXIT_INTERRUPTED) from None
        if _nothing_stored(summary):
            _refuse_nothing(inputs, summary.skipped, summary.hidden)
        _report(summary, as_json)
        if summary.exit_code:
            raise typer.Exit(code=summary.exit_code)


def _with_entity_graph(corpus: Corpus, store: str | None, options: dict[str, Any]) -> Corpus:
    """The store opened again keeping the entity graph; a clear error for a store that
    cannot keep one (Weaviate: its searches go without)."""
    if not isinstance(corpus, EntityGraphCorpus):
        corpus.close()
        err_console.print(
            f"[red]error[/red]: --entity-graph: {safe(str(store or 'the store'))} is a "
            f"{type(corpus).__name__}, which keeps no entity graph (only the embedded "
            "store does); nothing was indexed"
        )
        raise typer.Exit(code=2)
    if corpus.entity_graph:
        return corpus
    corpus.close()
    return open_store(store, entity_graph=True, **options)


class _StopBetweenDocuments:
    """Ctrl-C while storing stops the ingest before the next document is handed to the
    store, not in the middle of a batch's write: each batch is then written, its derived
    indexes brought up to date and counted, or not begun, and the interruption's line
    says exactly how many documents were stored. A second Ctrl-C stops at once."""

    def __init__(self) -> None:
        self.asked = False
        self._previous: Any = None

    def __enter__(self) -> _StopBetweenDocuments:
        # Signal handlers belong to the main thread; elsewhere Ctrl-C is not ours.
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._ask)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None
        if self.asked and exc[0] is None:
            raise KeyboardInterrupt  # pressed as the last batch was written

    def _ask(self, signum: int, frame: Any) -> None:
        self.asked = True
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def feed(self, documents: Iterable[Document]) -> Iterator[Document]:
        for document in documents:
            if self.asked:
                raise KeyboardInterrupt
            yield document


def _existing(store: str | None) -> Corpus:
    """The store, which must exist: --sync over folders with no file only removes."""
    return open_store(store, create=False)


def _nothing_stored(summary: IndexSummary) -> bool:
    """Every file of the run was skipped as it was read: nothing stored, nothing kept
    as it was, nothing removed or renamed."""
    seen = summary.added + summary.updated + summary.unchanged + len(summary.failed)
    return bool(summary.skipped) and not (seen or summary.removed or summary.renamed)


def _refuse_nothing(inputs: list[Path], skipped: list[InputProblem], hidden: int) -> NoReturn:
    """Inputs that hold nothing to index are an error naming them (exit code 2), after
    each skipped file with its reason."""
    for problem in skipped:
        err_console.print(f"[yellow]skipped[/yellow] {safe(str(problem))}", highlight=False)
    where = ", ".join(str(p) for p in inputs)
    if not skipped:
        entries = "entry" if hidden == 1 else "entries"
        unread = f" ({hidden:,} hidden {entries} not read)" if hidden else ""
        raise InputError(f"nothing to index in {where}: no files{unread}")
    # Files or lines (JSONL, CSV): whatever was skipped, by reason.
    reasons = sorted(Counter(p.reason for p in skipped).items(), key=lambda r: (-r[1], r[0]))
    why = ", ".join(f"{reason} {n:,}" for reason, n in reasons)
    raise InputError(f"nothing indexed from {where}: everything was skipped ({why})")


def _say_partial(error: SiftError, stored: int, as_json: bool) -> None:
    """The store's error, and what of this run it kept (exit code 1, as for skipped or
    failed files: the rest is stored)."""
    message = str(error)
    if not (isinstance(error, StoreFullError) and error.stored == stored):
        # (A full disk's message already says what this run stored and what to do.)
        message += (
            f"; {stored:,} document(s) stored before the error; run the same command "
            "again to finish (what is stored is skipped)"
        )
    print(f"sift: error: {message}", file=sys.stderr, flush=True)
    if as_json:
        # Where a program reading --json looks for the outcome, as for other errors.
        print(
            json.dumps(
                {"error": message, "stored": stored, "exit_code": EXIT_SKIPPED},
                ensure_ascii=False,
            ),
            flush=True,
        )


def _say_interrupted(stored: int) -> None:
    kept = (
        "no document of this run was stored"
        if stored == 0
        else f"{stored:,} document(s) of this run were stored, each whole, and nothing "
        "of the others"
    )
    print(
        f"sift: interrupted: {kept}; run the same command again to finish (what is "
        "stored is skipped)",
        file=sys.stderr,
        flush=True,
    )


def _run(
    corpus: Corpus, plan: InputPlan, *, jobs: int, sync: bool, quiet: bool, tally: _Tally
) -> IndexSummary:
    problems: list[InputProblem] = list(plan.problems)
    started = time.perf_counter()
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=err_console,
        disable=quiet,
        transient=False,
    ) as progress:
        tracker = _FileProgress(progress, len(plan.files), tally)
        documents = read_files(plan.files, problems, jobs=jobs, on_file=tracker.file_read)
        # Ctrl-C here leaves this block (its live display stopped) for the command's one
        # line, once the batch being written is written and counted.
        with _StopBetweenDocuments() as stop:
            report = corpus.upsert(stop.feed(documents), on_progress=tracker.documents_stored)
    renamed = _rename_former(corpus, plan, report.failed)
    removed = _sync(corpus, plan) if sync else []
    naming = plan.naming
    summary = IndexSummary(
        store=_location(corpus),
        source_root=str(naming.root) if naming.root is not None else None,
        source_prefix=naming.prefix,
        files=len(plan.files),
        pages=tracker.pages,
        added=report.added,
        updated=report.updated,
        unchanged=report.unchanged,
        chunks_written=report.chunks_written,
        skipped=[p for p in problems if p.skipped],
        warnings=[p for p in problems if not p.skipped],
        failed=report.failed,
        removed=removed,
        renamed=renamed,
        hidden=plan.hidden,
        seconds=round(time.perf_counter() - started, 3),
    )
    summary.exit_code = EXIT_SKIPPED if summary.skipped or summary.failed else 0
    return summary


def _location(corpus: Corpus) -> str:
    location = getattr(corpus, "location", None)
    return location if isinstance(location, str) else repr(corpus)
