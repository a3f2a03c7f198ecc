"""`sift stats`, `sift ls`, `sift show` and `sift delete`: what a store holds, from the
command line, each with `--json`. Every one opens the store for reading: a path with no
store is an error naming it, never an empty store made on the spot."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from itertools import islice
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from sift.errors import CorpusError, InvalidFilterError
from sift.filters import matches
from sift.integrations.cli._options import FilterOption, StoreOption
from sift.integrations.cli._render import err_console, safe, say_nothing_matched
from sift.integrations.cli._search import parse_filters
from sift.integrations.stores import open_store
from sift.integrations.stores.catalog import DocumentCatalog, DocumentInfo
from sift.integrations.stores.locations import CHUNK_KEYS, location_label
from sift.protocols import Corpus
from sift.text import guess_language

__all__ = ["register"]

# Documents whose first chunk `sift stats` reads to tell the store's languages.
_LANGUAGE_SAMPLE = 1_000


def _catalog(corpus: Corpus, command: str) -> DocumentCatalog:
    if not isinstance(corpus, DocumentCatalog):
        kind = type(corpus).__name__
        raise CorpusError(f"sift {command}: this store ({kind}) cannot list its documents")
    return corpus


def _languages(corpus: Corpus, documents: int) -> tuple[dict[str, int], int]:
    """Documents per language among an even sample of up to 1,000 documents (metadata
    `lang` when a document has one, as every file `sift index` reads has; else the guess
    `sift index` makes, from its first chunk)."""
    if not isinstance(corpus, DocumentCatalog) or documents == 0:
        return {}, 0
    stride = max(1, documents // _LANGUAGE_SAMPLE)
    sample = list(islice(corpus.documents(), 0, None, stride))[:_LANGUAGE_SAMPLE]
    firsts = {c.doc_id: c for c in corpus.get_chunks([f"{d.doc_id}_0" for d in sample])}
    counts: Counter[str] = Counter()
    for info in sample:
        lang = info.metadata.get("lang")
        if not isinstance(lang, str) or not lang:
            chunk = firsts.get(info.doc_id)
            lang = guess_language(chunk.text if chunk is not None else info.title)
        counts[lang] += 1
    return dict(counts.most_common()), len(sample)


def _size(value: Any) -> str:
    if not isinstance(value, int):
        return "-"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{value} B"


def _stats(corpus: Corpus) -> dict[str, Any]:
    # Here, not at the top: `sift --help` must not load numpy (the embedders' package).
    from sift.integrations.embedders import static_native

    stats = corpus.stats()
    languages, sampled = _languages(corpus, stats.documents)
    extra = stats.extra
    return {
        "location": stats.location,
        "backend": stats.backend,
        "documents": stats.documents,
        "chunks": stats.chunks,
        "embedder": stats.embedder,
        "dim": stats.dim,
        "analyzer": extra.get("analyzer"),
        "languages": languages,
        "languages_sampled": sampled,
        "size_bytes": extra.get("size_bytes"),
        "chunk_tokens": extra.get("chunk_tokens"),
        "source_root": extra.get("source_root"),
        # None: the store keeps no entity graph (or, not embedded, cannot keep one).
        "entity_graph_chunks": extra.get("entity_graph_chunks"),
        "schema_version": stats.schema_version,
        # The static embedder's C part: built, or its numpy path runs (slower).
        "native_embedder": static_native(),
        "extra": extra,
    }


def _stats_table(data: dict[str, Any]) -> Table:
    table = Table(show_header=False, title=safe(data["location"]))
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    languages = ", ".join(f"{k} {v:,}" for k, v in data["languages"].items()) or "-"
    if data["languages_sampled"] and data["languages_sampled"] < data["documents"]:
        languages += f" (of {data['languages_sampled']:,} sampled documents)"
    rows = [
        ("backend", data["backend"]),
        ("documents", f"{data['documents']:,}"),
        ("chunks", f"{data['chunks']:,}"),
        ("embedder", f"{data['embedder']} ({data['dim']} dimensions)"),
        ("analyzer", data["analyzer"] or "-"),
        ("languages", languages),
        ("size on disk", _size(data["size_bytes"])),
        ("chunk tokens", str(data["chunk_tokens"] or "-")),
        ("source root", data["source_root"] or "-"),
        ("entity graph", _entity_graph(data)),
        (
            "embedder's C part",
            "built"
            if data["native_embedder"]
            else "not built (numpy, slower): install a C compiler and reinstall sift",
        ),
    ]
    for name, value in rows:
        table.add_row(name, safe(str(value)))
    return table


def _entity_graph(data: dict[str, Any]) -> str:
    chunks = data["entity_graph_chunks"]
    if chunks is not None:
        return f"kept, {chunks:,} chunk{'' if chunks == 1 else 's'}"
    if data["backend"] == "sqlite":
        return "not kept (sift index --entity-graph keeps one)"
    return "not offered by this store"


def _listing(
    catalog: DocumentCatalog, prefix: str | None, spec: Any, limit: int | None
) -> Iterator[DocumentInfo]:
    found = (
        info
        for info in catalog.documents(prefix=prefix)
        if spec is None
        or matches(spec, {**info.metadata, "doc_id": info.doc_id, "title": info.title})
    )
    return islice(found, limit)


def register(app: typer.Typer) -> None:
    @app.command("stats")
    def stats(
        store: StoreOption = None,
        as_json: Annotated[bool, typer.Option("--json", help="The figures as JSON.")] = False,
    ) -> None:
        """What a store holds: documents, chunks, languages, embedder, analyzer, size."""
        corpus = open_store(store, create=False)
        try:
            data = _stats(corpus)
        finally:
            corpus.close()
        if as_json:
            sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
        else:
            Console(soft_wrap=True).print(_stats_table(data))

    @app.command("ls")
    def ls(
        store: StoreOption = None,
        prefix: Annotated[
            str | None, typer.Option("--prefix", help="Only ids starting with this.")
        ] = None,
        filters: FilterOption = None,
        limit: Annotated[
            int | None, typer.Option("--limit", min=1, help="At most this many.")
        ] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="One JSON object per document (JSON lines).")
        ] = False,
    ) -> None:
        """The stored documents by id: title, chunk count and source; filterable."""
        spec = parse_filters(filters or [])
        fields = {c.field for c in spec.conditions} if spec is not None else set()
        located = sorted(fields & CHUNK_KEYS)
        if located:
            # A page or section belongs to a chunk, not to a document: listing documents
            # by it would match nothing and read as "no such page".
            raise InvalidFilterError(
                f"--filter on {', '.join(located)}: sift ls lists documents, and a page or "
                "section belongs to their chunks; search with it (sift search --filter ...)"
            )
        corpus = open_store(store, create=False)
        try:
            found = _listing(_catalog(corpus, "ls"), prefix, spec, limit)
            out = Console(soft_wrap=True)
            count = 0
            for info in found:
                count += 1
                if as_json:
                    record = {**info.model_dump(), "source": info.source}
                    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
                    continue
                line = f"[bold]{safe(info.doc_id)}[/bold]  {info.chunks} chunk(s)"
                if info.title:
                    line += f"  {safe(info.title)}"
                out.print(line, highlight=False)
                if info.source:
                    out.print(f"    [dim]{safe(info.source)}[/dim]", highlight=False)
        finally:
            corpus.close()
        if not count and (filters or prefix):
            what = "document" + (f" id starts with {prefix!r}" if prefix else "")
            say_nothing_matched(what if prefix else "document matches", filters)
        elif not as_json:
            err_console.print(f"[dim]{count:,} document(s)[/dim]", highlight=False)

    @app.command("show")
    def show(
        doc_id: Annotated[str, typer.Argument(help="The document's id (see `sift ls`).")],
        store: StoreOption = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="The document and its chunks as JSON.")
        ] = False,
        full: Annotated[bool, typer.Option("--full", help="Print whole chunks.")] = False,
    ) -> None:
        """One document: its metadata and its chunks (with their pages and sections)."""
        corpus = open_store(store, create=False)
        try:
            chunks = corpus.read(doc_id)
            info = None
            if isinstance(corpus, DocumentCatalog):
                listed = corpus.documents(prefix=doc_id)
                info = next((d for d in listed if d.doc_id == doc_id), None)
        finally:
            corpus.close()
        if not chunks:
            raise CorpusError(f"no document {doc_id!r} in this store; `sift ls` lists them")
        if info is None:
            info = DocumentInfo(doc_id=doc_id, title=chunks[0].title, chunks=len(chunks))
        if as_json:
            record = {
                "document": {**info.model_dump(), "source": info.source},
                "chunks": [c.model_dump() for c in chunks],
            }
            sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
            return
        out = Console(soft_wrap=True)
        out.print(f"[bold]{safe(info.title or doc_id)}[/bold]  {safe(doc_id)}", highlight=False)
        for key, value in sorted(info.metadata.items()):
            text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
            if len(text) > 120:
                text = text[:119] + "…"
            out.print(f"  [cyan]{safe(key)}[/cyan]: {safe(text)}", highlight=False)
        for chunk in chunks:
            place = location_label(chunk.metadata, title=chunk.title)
            out.print(
                f"[bold]{safe(chunk.chunk_id)}[/bold]  [dim]{chunk.start}-{chunk.end}"
                f"{'  ' + safe(place) if place else ''}[/dim]",
                highlight=False,
            )
            text = chunk.text
            if not full:
                text = " ".join(text.split())
                text = text if len(text) <= 200 else text[:199] + "…"
            out.print(f"    {safe(text)}", highlight=False)

    @app.command("delete")
    def delete(
        doc_ids: Annotated[list[str], typer.Argument(help="Ids of the documents to remove.")],
        store: StoreOption = None,
        as_json: Annotated[
            bool, typer.Option("--json", help='{"deleted": [...], "not_found": [...]}')
        ] = False,
    ) -> None:
        """Remove documents (and their chunks) from the store. Exit code 1 when some id
        was not found (the others are removed)."""
        corpus = open_store(store, create=False)
        try:
            wanted = list(dict.fromkeys(doc_ids))
            present = {c.doc_id for c in corpus.get_chunks([f"{d}_0" for d in wanted])}
            deleted = [d for d in wanted if d in present]
            missing = [d for d in wanted if d not in present]
            if deleted:
                corpus.delete(deleted)
        finally:
            corpus.close()
        if as_json:
            record = {"deleted": deleted, "not_found": missing}
            sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        for doc_id in deleted:
            err_console.print(f"[cyan]deleted[/cyan] {safe(doc_id)}", highlight=False)
        for doc_id in missing:
            err_console.print(f"[yellow]not found[/yellow] {safe(doc_id)}", highlight=False)
        if missing:
            raise typer.Exit(code=1)
