"""`sift demo`: index the shipped 2Wiki passages and answer a two-hop question, offline.

The demo keeps a store of its own (`~/.sift/demo`), apart from the store `sift index`
fills by default (`~/.sift/store`): a new user's own documents should not come back
mixed with 300 Wikipedia passages they never indexed. So the demo ends by saying where
its store is and the command that searches it again; the README's examples use it."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sift.integrations.cli._index import index_documents
from sift.integrations.cli._options import QuietOption, StoreOption
from sift.integrations.cli._render import EpisodeProgress, err_console, print_result
from sift.integrations.demo import DEFAULT_QUESTION, demo_documents, demo_questions
from sift.integrations.stores import open_store
from sift.paths import default_store_location, demo_store_path

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        question: Annotated[str | None, typer.Argument(help="Another question to ask.")] = None,
        store: StoreOption = None,
        quiet: QuietOption = False,
    ) -> None:
        """Index ~300 real 2WikiMultihopQA passages and answer a two-hop question."""
        from sift import graphs

        text = question or DEFAULT_QUESTION
        location = store or str(demo_store_path())
        corpus = open_store(location)
        out = Console(soft_wrap=True)
        try:
            documents = list(demo_documents())
            report, seconds = index_documents(
                corpus,
                documents,
                total=len(documents),
                label="indexing demo corpus",
                quiet=quiet,
            )
            err_console.print(
                f"[dim]{len(documents)} passages ({report.added} new) in {seconds:.1f}s[/dim]"
            )
            # The dataset's questions are oddly cased ("Boden'S Boy"): match them loosely.
            known = {q.question.casefold(): q for q in demo_questions()}
            entry = known.get(text.casefold())
            gold = set(entry.supporting_doc_ids) if entry is not None else None
            baseline = graphs.single_shot(text, corpus, top_k=10)
            result = asyncio.run(
                graphs.asearch(
                    text, corpus, top_k=10, on_event=EpisodeProgress(err_console, enabled=not quiet)
                )
            )
            # The first five carry the answer; the rest are in `sift search --json`.
            print_result(
                out, result.model_copy(update={"evidence": result.evidence[:5]}), gold=gold
            )
            if entry is not None and gold is not None:
                found = {e.doc_id for e in result.evidence} & gold
                base = {e.doc_id for e in baseline.evidence} & gold
                out.print(
                    f"gold passages in the top 10: sift {len(found)}/{len(gold)}, "
                    f"single-shot hybrid {len(base)}/{len(gold)}; answer: "
                    f"[bold]{entry.answers[0]}[/bold]"
                )
        finally:
            corpus.close()
        _say_where(out, location, store is None)


def _shown(location: str) -> str:
    """The location as a user would type it: `~/...` under the home folder."""
    home = str(Path.home())
    if location.startswith(home + "/"):
        return "~/" + shlex.quote(location[len(home) + 1 :])
    return shlex.quote(location)


def _say_where(out: Console, location: str, own: bool) -> None:
    where = _shown(location)
    note = (
        f" (its own; `sift index` fills your default store, {_shown(default_store_location())})"
        if own
        else ""
    )
    out.print(f"\nThe demo's store is {where}{note}. Search it again:", highlight=False)
    out.print(
        f'  sift search --store {where} "Where did Timothy Shriver\'s father study?"',
        highlight=False,
        markup=False,
    )
