"""Terminal rendering shared by the CLI commands: live progress and result tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sift.types import SearchResult

__all__ = ["EpisodeProgress", "err_console", "print_result"]

err_console = Console(stderr=True)


def _short(value: object, width: int = 60) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


class EpisodeProgress:
    """Turns the harness's progress events into one status line per tool call."""

    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self._console = console
        self._enabled = enabled

    def __call__(self, event: dict[str, Any]) -> None:
        if not self._enabled:
            return
        kind = event.get("event", "")
        if kind == "sift.turn_started":
            self._console.print(f"[bold]turn {event.get('turn')}[/bold]", highlight=False)
        elif kind == "sift.tool_call":
            args = event.get("arguments") or {}
            argument = next(iter(args.values()), "") if isinstance(args, dict) else args
            added = event.get("added")
            suffix = f"  [green]+{len(added)}[/green]" if isinstance(added, list) else ""
            error = event.get("error")
            if error:
                suffix += f"  [red]{_short(error, 50)}[/red]"
            self._console.print(
                f"  {event.get('tool')}([cyan]{_short(argument, 50)!r}[/cyan]){suffix}",
                highlight=False,
            )
        elif kind == "sift.chunks_pruned":
            pruned = event.get("chunk_ids") or event.get("pruned") or []
            self._console.print(f"  [yellow]pruned {len(pruned)} chunks[/yellow]")
        elif kind == "sift.token_usage":
            used, threshold = event.get("used"), event.get("threshold")
            if used is not None:
                self._console.print(f"  [dim]tokens {used}/{threshold}[/dim]", highlight=False)


def print_result(console: Console, result: SearchResult, *, gold: set[str] | None = None) -> None:
    table = Table(title=_short(result.question, 100), show_lines=False, expand=True)
    table.add_column("#", justify="right", width=3)
    table.add_column("chunk", no_wrap=True)
    table.add_column("title", max_width=28)
    table.add_column("found by", max_width=36)
    table.add_column("text", ratio=1)
    for rank, item in enumerate(result.evidence, start=1):
        found = "; ".join(
            f"{f.tool.removesuffix('_corpus')}({_short(f.argument, 24)!r})@{f.turn}"
            for f in item.found_by[:2]
        )
        title = Text(item.title)
        if gold is not None and item.doc_id in gold:
            title.append(" ✔", style="bold green")
        table.add_row(str(rank), item.chunk_id, title, found, _short(item.text, 160))
    console.print(table)
    usage = result.usage
    console.print(
        f"[dim]{result.mode}: {usage.turns} turns, {usage.tool_calls} tool calls, "
        f"peak {usage.peak_context_tokens} context tokens, "
        f"stopped because {result.stopped_because}"
        + (f" ({result.error})" if result.error else "")
        + "[/dim]",
        highlight=False,
    )
