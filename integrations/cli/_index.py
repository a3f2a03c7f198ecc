"""`sift index`: ingest files and folders into a store, with progress and a summary."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sift.integrations.cli._options import StoreOption
from sift.integrations.cli._render import err_console
from sift.integrations.ingest import InputProblem, count_documents, read_inputs
from sift.integrations.stores import open_store
from sift.protocols import Corpus
from sift.types import Document, UpsertReport

__all__ = ["index_documents", "register"]


def _counted(documents: Iterable[Document], advance: Callable[[], None]) -> Iterator[Document]:
    for document in documents:
        yield document
        advance()


def index_documents(
    corpus: Corpus, documents: Iterable[Document], *, total: int | None, label: str, quiet: bool
) -> tuple[UpsertReport, float]:
    """Upserts with a progress bar on stderr; returns the report and the seconds taken."""
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


def _summary(report: UpsertReport, seconds: float, problems: list[InputProblem]) -> Table:
    seen = report.added + report.updated + report.unchanged + len(report.failed)
    table = Table(title="indexed", show_header=False)
    table.add_row(
        "documents",
        f"{seen:,} ({report.added:,} added, {report.updated:,} updated, "
        f"{report.unchanged:,} unchanged, {len(report.failed):,} failed)",
    )
    table.add_row("chunks written", f"{report.chunks_written:,}")
    table.add_row("seconds", f"{seconds:.2f}")
    table.add_row("passages/s", f"{seen / seconds:,.0f}" if seconds > 0 else "-")
    if problems:
        table.add_row("skipped lines/files", f"{len(problems):,}")
    return table


def register(app: typer.Typer) -> None:
    @app.command("index")
    def index(
        inputs: Annotated[list[Path], typer.Argument(help="Files or folders (txt md jsonl html)")],
        store: StoreOption = None,
        embedder: Annotated[
            str | None,
            typer.Option(help="Embedder for a new store: static, minilm, hash or ollama:<model>"),
        ] = None,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar")] = False,
    ) -> None:
        """Ingest documents; re-running with the same inputs adds nothing."""
        problems: list[InputProblem] = []
        documents = read_inputs(inputs, problems)
        options = {"embedder": embedder} if embedder else {}
        corpus = open_store(store, **options)
        try:
            report, seconds = index_documents(
                corpus, documents, total=count_documents(inputs), label="indexing", quiet=quiet
            )
        finally:
            corpus.close()
        for problem in problems:
            err_console.print(f"[yellow]skipped[/yellow] {problem}", highlight=False)
        for failure in report.failed:
            err_console.print(
                f"[red]failed[/red] {failure.doc_id}: {failure.error}", highlight=False
            )
        err_console.print(_summary(report, seconds, problems))
        if problems or report.failed:
            raise typer.Exit(code=1)
