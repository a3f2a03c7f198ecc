"""Terminal rendering shared by the CLI commands: live progress and result tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from sift.integrations.stores.locations import location_label
from sift.integrations.subagent import not_found_note
from sift.types import SearchResult

if TYPE_CHECKING:
    from sift.progress import ProgressEvent

__all__ = ["EpisodeProgress", "err_console", "print_result", "printable", "safe"]

# Soft wrap: a message (a skipped line, a failed question) stays one line whatever the
# width, so logs of piped stderr can be searched by file and line.
err_console = Console(stderr=True, soft_wrap=True)


_CONTROLS = dict.fromkeys([*range(0x20), 0x7F, *range(0x80, 0xA0)], "\ufffd")
_CONTROLS.update({ord("\t"): " ", ord("\n"): "\n"})


def printable(text: str) -> str:
    """Text safe for a terminal: control characters (escape sequences from a binary file
    or a hostile document) shown as U+FFFD instead of acted on."""
    return text.translate(_CONTROLS)


def safe(text: str) -> str:
    """Text to put inside a rich markup string: control characters neutralised and
    brackets escaped, so a file named `[red]x` prints as it is named."""
    return escape(printable(text))


def say_nothing_matched(what: str, filters: list[str] | None = None) -> None:
    """On stderr: nothing matched, and the filters that may be why (an empty answer on
    stdout alone looks like a broken store)."""
    given = " ".join(f"--filter {f}" for f in filters or [])
    hint = (
        f" with {given}: check the metadata keys and values (`sift show <id> --json` "
        "shows a document's)"
        if given
        else ""
    )
    err_console.print(f"[yellow]nothing found[/yellow]: no {what}{safe(hint)}", highlight=False)


def _short(value: object, width: int = 60) -> str:
    """One line of at most `width` terminal cells: a Japanese character takes two, so
    cutting by characters would make Japanese lines twice as wide as English ones."""
    text = " ".join(printable(str(value)).split())
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, width - 1).rstrip() + "…"


class EpisodeProgress:
    """Turns the harness's progress events into one status line per tool call."""

    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self._console = console
        self._enabled = enabled

    def __call__(self, typed: ProgressEvent) -> None:
        if not self._enabled:
            return
        if typed["event"] == "sift.turn_started":
            self._console.print(f"[bold]turn {typed.get('turn')}[/bold]", highlight=False)
        elif typed["event"] == "sift.tool_call":
            args = typed.get("arguments") or {}
            argument = next(iter(args.values()), "") if isinstance(args, dict) else args
            error = typed.get("error")
            suffix = f"  [red]{_short(error, 60)}[/red]" if error else ""
            self._console.print(
                f"  {typed.get('tool')}([cyan]{_short(argument, 60)!r}[/cyan]){suffix}",
                highlight=False,
            )
        elif typed["event"] == "sift.chunks_added":
            added = typed.get("chunk_ids") or []
            self._console.print(
                f"    [green]+{len(added)}[/green] from {typed.get('tool')}"
                f"([cyan]{_short(typed.get('argument', ''), 40)!r}[/cyan])",
                highlight=False,
            )
        elif typed["event"] == "sift.chunks_pruned":
            pruned = typed.get("chunk_ids") or []
            self._console.print(
                f"  [yellow]pruned {len(pruned)} chunks[/yellow] by {typed.get('by', 'policy')}"
            )
        elif typed["event"] == "sift.token_usage":
            used, threshold = typed.get("used"), typed.get("threshold")
            if used is not None:
                self._console.print(f"  [dim]tokens {used}/{threshold}[/dim]", highlight=False)


def print_result(console: Console, result: SearchResult, *, gold: set[str] | None = None) -> None:
    """Evidence as a numbered list: title, page and section (where the document has them)
    and chunk id, provenance, justification, text. A list reads at any terminal width,
    where a wide table would wrap into columns. A result flagged `not_found` says so
    before its evidence, which is then only the nearest text."""
    console.print(Text(printable(result.question), style="bold"))
    missing = result.not_found
    if missing is not None:
        note = Text("not found: ", style="bold yellow")
        note.append(printable(not_found_note(missing)))
        if result.evidence:
            note.append("; the passages below are only the nearest text")
        console.print(note)
    for rank, item in enumerate(result.evidence, start=1):
        line = Text(f"{rank:>2}. ", style="bold")
        line.append(printable(item.title or item.doc_id), style="bold")
        place = location_label(item.metadata, title=item.title)
        if place:
            line.append(f"  {_short(place, 80)}", style="yellow")
        line.append(f"  {printable(item.chunk_id)}", style="dim")
        if gold is not None and item.doc_id in gold:
            line.append("  ✔ gold", style="bold green")
        console.print(line)
        calls = [f for f in item.found_by if f.tool != "entity_graph"][:2]
        graph = [f for f in item.found_by if f.tool == "entity_graph"][:1]
        found = ", ".join(
            [
                *(
                    f"{f.tool.removesuffix('_corpus')}({_short(f.argument, 40)!r}) turn {f.turn}"
                    for f in calls
                ),
                *(f"entity graph via {_short(f.argument, 40)!r}" for f in graph),
            ]
        )
        if found:
            console.print(Text(f"    found by {found}", style="cyan"))
        if item.justification:
            console.print(Text(f"    {_short(item.justification, 200)}", style="italic"))
        console.print(Text(f"    {_short(item.text, 200)}"))
    usage = result.usage
    console.print(
        f"[dim]{result.mode}: {usage.turns} turns, {usage.tool_calls} tool calls, "
        f"peak {usage.peak_context_tokens:,} context tokens, "
        f"{usage.final_evidence_tokens:,} evidence tokens, "
        f"stopped because {result.stopped_because}"
        + (f" ({result.error})" if result.error else "")
        + "[/dim]",
        highlight=False,
    )
