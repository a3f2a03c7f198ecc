"""`sift search`: one question, or a batch from a JSONL file, agentic by default."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sift.errors import InvalidFilterError, SiftError
from sift.filters import Filter, parse_filter
from sift.integrations.cli._options import (
    FilterOption,
    JsonOption,
    MaxTurnsOption,
    ModelOption,
    ModeOption,
    OllamaHostOption,
    PolicyOption,
    QuestionsOption,
    QuietOption,
    RolloutsOption,
    SeedOption,
    SingleShotOption,
    StoreOption,
    ThinkOption,
    TopKOption,
)
from sift.integrations.cli._overrides import Overrides, SetOption, parse_overrides
from sift.integrations.cli._render import (
    EpisodeProgress,
    err_console,
    print_result,
    safe,
    say_nothing_matched,
)
from sift.integrations.ingest import iter_json_lines
from sift.integrations.stores import default_store_location, open_store
from sift.integrations.traceview import RolloutRun, TraceFolder, asearch_rollouts, write_trace_html
from sift.protocols import Corpus, Policy

if TYPE_CHECKING:
    from sift.graphs import HarnessConfig

__all__ = ["EXIT_INTERRUPTED", "EXIT_PARTIAL", "parse_filters", "register"]

# An episode stopped on an error (its model server failed): the result is partial.
EXIT_PARTIAL = 1
EXIT_FAILED = 2
EXIT_INTERRUPTED = 130

PolicyName = Literal["heuristic", "ollama"]
ModeName = Literal["hybrid", "bm25", "dense"]

HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html",
        help="Also write the trace as a self-contained HTML page; with --questions, a "
        "folder of pages (one per question) and its index.html.",
    ),
]


def parse_filters(items: list[str]) -> Filter | None:
    """`--filter` options, and-ed: `key=value` pairs (values parsed as JSON when they can
    be) or JSON objects, checked by `sift.filters.parse_filter` as HTTP and MCP check
    theirs. A bad one is InvalidFilterError naming the option, which `sift` prints as
    one `sift: error:` line (exit code 2), never a search that finds nothing."""
    if not items:
        return None
    spec: dict[str, Any] = {}
    for item in items:
        part = _filter_item(item)
        try:
            parse_filter(part)
        except InvalidFilterError as exc:
            raise InvalidFilterError(f"--filter {item!r}: {exc}") from None
        spec.update(part)
    try:
        return parse_filter(spec)
    except InvalidFilterError as exc:  # together, too many conditions or mixed forms
        raise InvalidFilterError(f"--filter: {exc}") from None


def _filter_item(item: str) -> dict[str, Any]:
    if item.lstrip().startswith("{"):
        try:
            data: dict[str, Any] = json.loads(item)  # an object: it starts with "{"
        except json.JSONDecodeError as exc:
            raise InvalidFilterError(f"--filter {item!r} is not valid JSON: {exc.msg}") from None
        return data
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise InvalidFilterError(f"--filter {item!r}: expected KEY=VALUE or a JSON object")
    try:
        return {key: json.loads(raw)}
    except json.JSONDecodeError:
        return {key: raw}


def _policy(
    name: PolicyName,
    *,
    model: str | None,
    host: str | None,
    think: str | None,
    seed: int | None,
    overrides: Overrides,
) -> Policy:
    overrides.require_planner_policy(name)
    if name == "heuristic":
        from sift.graphs.policies import HeuristicPlanner

        planner: Policy = HeuristicPlanner(overrides.planner_config())
        return planner
    from sift.integrations.ollama import policy_from_settings

    given: dict[str, Any] = {}
    for key, value in (("model", model), ("host", host), ("think", think), ("seed", seed)):
        if value is not None:
            given[key] = value
    return policy_from_settings(**given)


async def _run_one(
    question: str,
    corpus: Corpus,
    *,
    single_shot: bool,
    mode: ModeName | None,
    config: HarnessConfig,
    filters: Filter | None,
    policy: Policy | None,
    rollouts: int,
    progress: EpisodeProgress | None,
    keep_rollouts: bool = False,
) -> RolloutRun:
    from sift import graphs

    if single_shot:
        result = await asyncio.to_thread(
            graphs.single_shot, question, corpus, config=config, mode=mode, filters=filters
        )
        return RolloutRun(fused=result)
    try:
        if keep_rollouts and rollouts > 1:
            # A trace page shows each rollout beside the fusion: keep their own results.
            return await asearch_rollouts(
                question,
                corpus,
                rollouts=rollouts,
                policy=policy,
                config=config,
                filters=filters,
                top_k=config.top_k,
                on_event=progress,
            )
        result = await graphs.asearch(
            question,
            corpus,
            policy=policy,
            config=config,
            filters=filters,
            top_k=config.top_k,
            rollouts=rollouts,
            on_event=progress,
        )
        return RolloutRun(fused=result)
    finally:
        # A model client's connections belong to this question's event loop.
        close = getattr(policy, "aclose", None) if policy is not None else None
        if close is not None:
            await close()


def _batch(path: Path) -> list[tuple[int, dict[str, Any] | str]]:
    """(line number, record) pairs; a record that cannot be used is an error string."""
    out: list[tuple[int, dict[str, Any] | str]] = []
    for number, record in iter_json_lines(path):
        if isinstance(record, dict) and not isinstance(record.get("question"), str):
            record = "expected an object with a string 'question' (and an 'id')"
        out.append((number, record))
    return out


def _record_key(record: dict[str, Any], number: int) -> str:
    key = record.get("id")
    return str(key) if key is not None else f"line {number}"


def _failed(
    questions: Path,
    number: int,
    record: dict[str, Any] | None,
    error: str,
    pages: TraceFolder | None,
) -> int:
    """Reports a question that got no answer: on stderr, and as its own output line
    `{"id", "error"}` so that every line of the batch has an answer line. Returns 1."""
    err_console.print(f"[red]{questions}:{number}[/red]: {safe(error)}", highlight=False)
    key = record.get("id") if record is not None else None
    sys.stdout.write(json.dumps({"id": key, "error": error}, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    if pages is not None:
        label = _record_key(record, number) if record is not None else f"line {number}"
        pages.add_failure(label, error)
    return 1


def _trace_pages(html: Path | None, questions: Path | None) -> TraceFolder | None:
    """The batch's page folder; for one question, checks that `html` can be a file."""
    if html is None:
        return None
    if questions is None:
        if html.is_dir():
            raise typer.BadParameter(f"--html {html}: is a folder; give a file name")
        return None
    try:
        return TraceFolder(html, title=f"sift search: {questions}")
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _run_batch(
    questions: Path,
    run: Callable[[str, EpisodeProgress | None], Coroutine[Any, Any, RolloutRun]],
    pages: TraceFolder | None,
    *,
    quiet: bool,
) -> int:
    """Answers every question of the batch, one JSON line each on stdout, with a progress
    bar on stderr. A question that gets no answer (an unusable line, a refused query, any
    error) is reported on stderr and as its own line `{"id", "error"}`, so every input
    line has an output line. The exit code is 2 when any question got no answer, else 1
    when an episode stopped on an error (a model server failing), else 0. Ctrl-C stops
    after the lines written so far and says so."""
    batch = _batch(questions)
    failed = errored = done = 0
    progress = Progress(
        TextColumn("[bold]questions"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=quiet,
        transient=True,
    )
    task = progress.add_task("questions", total=len(batch))
    try:
        with progress:
            for number, record in batch:
                progress.advance(task)
                if isinstance(record, str):
                    failed += _failed(questions, number, None, record, pages)
                    continue
                try:
                    run_ = asyncio.run(run(record["question"], None))
                except Exception as exc:  # one question never ends the batch
                    why = str(exc) if isinstance(exc, SiftError) else f"{type(exc).__name__}: {exc}"
                    failed += _failed(questions, number, record, why, pages)
                    continue
                result = run_.fused
                if result.stopped_because == "error":
                    errored += 1
                    progress.console.print(
                        f"[red]{questions}:{number}[/red]: the search stopped on an error: "
                        f"{safe(result.error or '')}",
                        highlight=False,
                    )
                if pages is not None:
                    pages.add(_record_key(record, number), run_.rollouts or result, fused=result)
                line = {"id": record.get("id"), **result.model_dump(mode="json")}
                sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
                sys.stdout.flush()
                done += 1
    except KeyboardInterrupt:
        kept = f"; their trace pages: {pages.write_index()}" if pages is not None else ""
        err_console.print(
            f"[yellow]interrupted[/yellow]: {done} of {len(batch)} questions answered, their "
            f"results written to stdout{kept}",
            highlight=False,
        )
        return EXIT_INTERRUPTED
    if pages is not None:
        err_console.print(f"trace pages: {pages.write_index()}", highlight=False)
    if failed:
        return EXIT_FAILED
    return EXIT_PARTIAL if errored else 0


def register(app: typer.Typer) -> None:
    @app.command("search")
    def search(
        question: Annotated[str | None, typer.Argument(help="The question.")] = None,
        store: StoreOption = None,
        as_json: JsonOption = False,
        top_k: TopKOption = None,
        single_shot: SingleShotOption = False,
        mode: ModeOption = None,
        questions: QuestionsOption = None,
        filters: FilterOption = None,
        policy: PolicyOption = "heuristic",
        model: ModelOption = None,
        ollama_host: OllamaHostOption = None,
        think: ThinkOption = None,
        rollouts: RolloutsOption = 1,
        max_turns: MaxTurnsOption = None,
        seed: SeedOption = None,
        settings: SetOption = None,
        quiet: QuietOption = False,
        html: HtmlOption = None,
    ) -> None:
        """Search the store: agentic multi-step search by default."""

        if mode is not None and mode not in ("hybrid", "bm25", "dense"):
            raise typer.BadParameter(f"--mode {mode!r}: valid modes are hybrid, bm25, dense")
        if policy not in ("heuristic", "ollama"):
            raise typer.BadParameter(f"--policy {policy!r}: valid policies are heuristic, ollama")
        if (question is None) == (questions is None):
            raise typer.BadParameter("give either a QUESTION or --questions FILE, not both or none")
        spec = parse_filters(filters or [])
        overrides = parse_overrides(settings, max_turns=max_turns, top_k=top_k)
        config = overrides.harness_config()
        chosen: Policy | None = None
        if single_shot:
            # One search, no policy: nothing of a model client or the graph is loaded.
            overrides.require_planner_policy(policy)
        else:
            chosen = _policy(
                policy,  # type: ignore[arg-type]
                model=model,
                host=ollama_host,
                think=think,
                seed=seed,
                overrides=overrides,
            )
        pages = _trace_pages(html, questions)
        corpus = open_store(
            store, create=False, **overrides.store_options(store or default_store_location())
        )

        def run(text: str, progress: EpisodeProgress | None) -> Any:
            return _run_one(
                text,
                corpus,
                single_shot=single_shot,
                mode=mode,  # type: ignore[arg-type]
                config=config,
                filters=spec,
                policy=chosen,
                rollouts=rollouts,
                progress=progress,
                keep_rollouts=html is not None,
            )

        out = Console(soft_wrap=True)
        try:
            if questions is None:
                text = question or ""
                progress = EpisodeProgress(err_console, enabled=not quiet and not single_shot)
                run_ = asyncio.run(run(text, progress))
                result = run_.fused
                if html is not None:
                    page = write_trace_html(html, run_.rollouts or result, fused=result)
                    err_console.print(f"trace page: {page}", highlight=False)
                if as_json:
                    sys.stdout.write(result.model_dump_json() + "\n")
                else:
                    print_result(out, result)
                if not result.evidence and result.stopped_because != "error":
                    say_nothing_matched("passage matches the question", filters)
                if result.stopped_because == "error":
                    reason = safe(result.error or "")
                    err_console.print(
                        f"[red]the search stopped on an error[/red]: {reason}", highlight=False
                    )
                    raise typer.Exit(code=EXIT_PARTIAL)
                return
            code = _run_batch(questions, run, pages, quiet=quiet)
            if code:
                raise typer.Exit(code=code)
        finally:
            corpus.close()
