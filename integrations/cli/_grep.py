"""`sift grep`: the harness's regex tool from the command line (RE2 syntax, linear time)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console

from sift.integrations.cli._options import FilterOption, JsonOption, StoreOption
from sift.integrations.cli._render import printable, safe, say_nothing_matched
from sift.integrations.cli._search import parse_filters
from sift.integrations.stores import open_store

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    @app.command("grep")
    def grep(
        pattern: Annotated[str, typer.Argument(help="Regular expression (RE2 syntax).")],
        store: StoreOption = None,
        limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="Most hits.")] = 5,
        filters: FilterOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Chunks whose text matches a regular expression."""
        spec = parse_filters(filters or [])  # a bad filter is refused before the store opens
        corpus = open_store(store, create=False)
        try:
            result = corpus.grep(pattern, k=limit, filters=spec)
        finally:
            corpus.close()
        if not result.hits:
            say_nothing_matched(f"passage matches /{pattern}/", filters)
        if as_json:
            sys.stdout.write(result.model_dump_json() + "\n")
            return
        out = Console(soft_wrap=True)
        for hit in result.hits:
            chunk = hit.chunk
            out.print(
                f"[bold]{safe(chunk.chunk_id)}[/bold] [dim]{safe(chunk.title)}[/dim]",
                highlight=False,
            )
            out.print(printable(chunk.text), highlight=False, markup=False)
            out.print()
        if result.note:
            out.print(f"[yellow]{result.note}[/yellow]", highlight=False)
        if not result.hits:
            out.print("No results found")
