"""`sift eval`: Context-1's retrieval metrics on a benchmark folder, every mode side by side."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from sift.integrations.cli._options import TopKOption
from sift.integrations.cli._overrides import SetOption, parse_overrides

__all__ = ["register"]


def _headline(run: Any) -> list[Table]:
    """The summary as two narrow tables, quality then cost, each readable at 80 columns
    (one table of eleven columns wraps its cells there)."""
    report = run.report
    quality = Table(
        title=f"{report.dataset.name}: {report.dataset.questions} questions", box=box.SIMPLE_HEAD
    )
    cost = Table(box=box.SIMPLE_HEAD)
    for table, columns in (
        (quality, ("mode", "R@2", "R@10", "R@30", "all-gold@10", "F1", "answer found")),
        (cost, ("mode", "trajectory R", "turns", "peak tokens", "p50 s")),
    ):
        for column in columns:
            table.add_column(column, justify="left" if column == "mode" else "right")
    for s in report.summaries:
        quality.add_row(
            s.mode,
            *(f"{s.recall_at.get(k, float('nan')):.3f}" for k in (2, 10, 30)),
            f"{s.all_gold_at.get(10, float('nan')):.3f}",
            f"{s.f1:.3f}",
            f"{s.answer_found_rate:.3f}",
        )
        cost.add_row(
            s.mode,
            f"{s.trajectory_recall:.3f}",
            f"{s.turns:.1f}",
            f"{s.peak_context_tokens:,.0f}",
            f"{s.latency_p50_s or 0:.3f}",
        )
    return [quality, cost]


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        dataset: Annotated[
            Path,
            typer.Option("--dataset", help="Folder holding corpus.jsonl and questions.jsonl."),
        ],
        limit: Annotated[
            int | None, typer.Option(min=1, help="Evaluate only the first N questions.")
        ] = None,
        modes: Annotated[
            list[str] | None,
            typer.Option(
                "--modes",
                help="Modes, comma-separated or repeated: bm25, dense, hybrid, agentic "
                "(default: all).",
            ),
        ] = None,
        policy: Annotated[
            str, typer.Option(help="Agentic policy: heuristic (no model) or ollama.")
        ] = "heuristic",
        model: Annotated[
            str | None, typer.Option(help="Ollama model (with --policy ollama).")
        ] = None,
        ollama_host: Annotated[
            str | None,
            typer.Option("--ollama-host", help="Ollama address (default: $OLLAMA_HOST)."),
        ] = None,
        rollouts: Annotated[
            int, typer.Option(min=1, max=16, help="Agentic rollouts fused by RRF.")
        ] = 1,
        out: Annotated[
            Path | None, typer.Option(help="Report folder (default: ./sift-eval/<dataset>).")
        ] = None,
        store_cache: Annotated[
            Path | None,
            typer.Option(
                "--store-cache",
                help="Where indexed corpora are cached (default: ~/.sift/eval-cache).",
            ),
        ] = None,
        embedder: Annotated[
            str, typer.Option(help="Embedder of the cached store: static or hash.")
        ] = "static",
        top_k: TopKOption = None,
        concurrency: Annotated[
            int, typer.Option(min=1, max=64, help="Questions in flight at once.")
        ] = 4,
        settings: SetOption = None,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    ) -> None:
        """Evaluate retrieval on a benchmark folder: single-shot baselines vs agentic."""
        from sift.integrations.eval import (
            POLICIES,
            EvalConfig,
            EvalError,
            default_store_cache,
            parse_modes,
            require_matplotlib,
            run_eval,
        )

        if policy not in POLICIES:
            raise EvalError(f"unknown policy {policy!r}; valid policies: {', '.join(POLICIES)}")
        if (model or ollama_host) and policy != "ollama":
            raise EvalError("--model and --ollama-host apply to --policy ollama only")
        chosen = parse_modes(modes)
        overrides = parse_overrides(settings, command="eval", top_k=top_k)
        overrides.require_planner_policy(policy)
        overrides.refuse_store("eval")
        harness = overrides.harness_config()
        require_matplotlib()
        config = EvalConfig(
            dataset=dataset,
            modes=chosen,
            limit=limit,
            policy=policy,  # type: ignore[arg-type]
            model=model,
            policy_options={"host": ollama_host} if ollama_host else {},
            harness=overrides.harness,
            planner=overrides.planner,
            rollouts=rollouts,
            top_k=harness.top_k,
            embedder=embedder,
            store_cache=store_cache or default_store_cache(),
            out=out,
            concurrency=concurrency,
        )
        command = shlex.join(["sift", *sys.argv[1:]]) if sys.argv[1:2] == ["eval"] else None
        run = run_eval(config, command=command, progress=not quiet)
        console = Console(soft_wrap=True)
        if not console.is_terminal:
            # Piped or captured output has no width of its own: that of a terminal.
            console = Console(soft_wrap=True, width=80)
        for table in _headline(run):
            console.print(table)
        absent = run.report.dataset
        if absent.absent_gold_ids:
            console.print(
                f"[yellow]{absent.absent_gold_ids} gold ids in "
                f"{absent.questions_with_absent_gold} questions are not in the corpus "
                "(counted as missed; listed in report.json).[/yellow]"
            )
        for summary in run.report.summaries:
            if summary.errors:
                first = next(
                    (o.error for o in run.outcomes[summary.mode] if o.error), "unknown error"
                )
                console.print(
                    f"[red]{summary.errors} of {summary.questions} questions failed in mode "
                    f"{summary.mode} (first: {first})[/red]",
                    highlight=False,
                )
        for kind, path in run.files.items():
            console.print(f"{kind}: {path}", highlight=False)
