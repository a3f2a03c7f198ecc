"""The evaluation run: index the corpus once (cached), run every question in every mode.

Single-shot modes call `sift.graphs.single_shot`; the agentic mode calls
`sift.graphs.asearch` with the configured policy (the no-model planner unless told
otherwise). Questions run concurrently: the stores release the GIL in their native search
code, so a few questions in flight keep both cores busy.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shlex
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sift.errors import ModelServerError
from sift.integrations.eval import metrics as m
from sift.integrations.eval._dataset import Dataset, EvalError, Question, load_dataset
from sift.integrations.eval._outcome import QuestionOutcome, score, summarize
from sift.integrations.eval._report import DatasetInfo, EvalReport, machine_info, write_report
from sift.paths import eval_cache_path
from sift.types import Document, SearchMode, SearchResult

if TYPE_CHECKING:
    from rich.progress import Progress

    from sift.graphs import HarnessConfig
    from sift.protocols import Corpus, Policy

__all__ = [
    "MODES",
    "POLICIES",
    "EvalConfig",
    "EvalRun",
    "code_fingerprint",
    "default_store_cache",
    "open_cached_store",
    "parse_modes",
    "run_eval",
]

MODES: tuple[str, ...] = ("bm25", "dense", "hybrid", "agentic")
SINGLE_SHOT_MODES: dict[str, SearchMode] = {"bm25": "bm25", "dense": "dense", "hybrid": "hybrid"}
POLICIES: tuple[str, ...] = ("heuristic", "ollama")
MANIFEST = "manifest.json"
_SERVER_FAILURES = ("ModelServerError", "ModelNotFoundError")
_INDEX_CODE = (
    "sift.integrations.stores",
    "sift.integrations.chunking",
    "sift.integrations.embedders",
)


def default_store_cache() -> Path:
    """`$SIFT_HOME/eval-cache`, else `~/.sift/eval-cache`: outside any checkout."""
    return eval_cache_path()


def parse_modes(raw: Iterable[str] | None) -> list[str]:
    """Modes from repeated and/or comma-separated values, in the order given, each once."""
    chosen: list[str] = []
    for item in raw or ():
        for name in item.split(","):
            name = name.strip().lower()
            if not name:
                continue
            if name not in MODES:
                raise EvalError(f"unknown mode {name!r}; valid modes: {', '.join(MODES)}")
            if name not in chosen:
                chosen.append(name)
    return chosen or list(MODES)


class EvalConfig(BaseModel):
    """The exact configuration of one evaluation (written into report.json)."""

    model_config = ConfigDict(frozen=True)

    dataset: Path
    modes: list[str] = Field(default_factory=lambda: list(MODES))
    limit: int | None = Field(default=None, ge=1)
    policy: Literal["heuristic", "ollama"] = "heuristic"
    model: str | None = None
    policy_options: dict[str, Any] = Field(default_factory=dict)
    # Settings over the environment's: HarnessConfig fields, and HeuristicPlannerConfig
    # fields (the heuristic policy only). The report records both whole.
    harness: dict[str, Any] = Field(default_factory=dict)
    planner: dict[str, Any] = Field(default_factory=dict)
    rollouts: int = Field(default=1, ge=1, le=16)
    top_k: int = Field(default=30, ge=1)
    ks: tuple[int, ...] = m.DEFAULT_KS
    embedder: str = "static"
    store_cache: Path = Field(default_factory=default_store_cache)
    out: Path | None = None
    concurrency: int = Field(default=4, ge=1, le=64)

    @model_validator(mode="after")
    def _planner_needs_the_planner(self) -> EvalConfig:
        if self.planner and self.policy != "heuristic":
            raise ValueError(f"planner settings apply to the heuristic policy, not {self.policy}")
        return self

    def out_dir(self, dataset_name: str) -> Path:
        return self.out if self.out is not None else Path("sift-eval") / dataset_name


class EvalRun(BaseModel):
    """What `run_eval` returns: the report, the per-question outcomes and the files."""

    report: EvalReport
    outcomes: dict[str, list[QuestionOutcome]]
    files: dict[str, Path]


# --------------------------------------------------------------------------- store cache


def _cache_dir(root: Path, dataset: Dataset, embedder: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in embedder)
    # Two folders of the same name elsewhere (a copy, a held-out split) get their own
    # cache instead of rebuilding each other's.
    where = hashlib.sha256(str(dataset.root.resolve()).encode()).hexdigest()[:8]
    return root / f"{dataset.name}-{safe}-{where}"


def code_fingerprint(modules: Sequence[str] = _INDEX_CODE) -> str:
    """A hash of the files of `modules` (by default the code and model files that decide
    what an index holds: stores, chunking, embedders): a cached store built by other
    code is rebuilt, never reused."""
    import importlib.util

    digest = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin).resolve()
        root = origin.parent if origin.name == "__init__.py" else origin
        files = sorted(root.rglob("*")) if root.is_dir() else [root]
        for path in files:
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(f"{name}:{path.relative_to(root.parent)}\0".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def open_cached_store(
    dataset: Dataset,
    cache_root: Path,
    embedder: str,
    *,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[Corpus, bool, float]:
    """The dataset's corpus in a store under `cache_root`, indexed once per corpus file
    content and embedder. Returns (store, rebuilt, seconds spent indexing)."""
    from sift.integrations.embedders import get_embedder
    from sift.integrations.stores import open_store

    try:
        get_embedder(embedder)  # an unknown name fails here, before any folder is made
    except ValueError as exc:
        raise EvalError(f"--embedder: {exc}") from None
    folder = _cache_dir(cache_root, dataset, embedder)
    manifest_path = folder / MANIFEST
    wanted = {
        "corpus_sha256": dataset.corpus_sha256,
        "embedder": embedder,
        "index_code": code_fingerprint(),
    }
    if manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            manifest = {}
        if manifest.get("complete") and all(manifest.get(k) == v for k, v in wanted.items()):
            return open_store(folder / "store", embedder=embedder), False, 0.0
    if folder.exists():
        # Only a folder this cache made (it has a manifest, or nothing) is ever removed.
        if not manifest_path.is_file() and any(folder.iterdir()):
            raise EvalError(
                f"{folder} exists but is not an eval store cache (no {MANIFEST}); "
                "remove it or choose another --store-cache"
            )
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    manifest_path.write_text(json.dumps({**wanted, "complete": False}), encoding="utf-8")

    started = time.perf_counter()
    corpus = open_store(folder / "store", embedder=embedder)
    documents = (Document(id=p.id, title=p.title, text=p.text) for p in dataset.passages)
    report = corpus.upsert(documents, on_progress=on_progress)
    if report.failed:
        corpus.close()
        first = "; ".join(f"{f.doc_id}: {f.error}" for f in report.failed[:3])
        raise EvalError(
            f"{len(report.failed)} passages of {dataset.corpus_path} could not be indexed "
            f"(first: {first})"
        )
    seconds = time.perf_counter() - started
    manifest_path.write_text(
        json.dumps(
            {
                **wanted,
                "complete": True,
                "passages": len(dataset.passages),
                "chunks_written": report.chunks_written,
                "index_s": round(seconds, 3),
            }
        ),
        encoding="utf-8",
    )
    return corpus, True, seconds


# --------------------------------------------------------------------------- modes


def _make_policy(config: EvalConfig) -> Policy:
    if config.policy == "heuristic":
        from sift.graphs.policies import HeuristicPlanner, HeuristicPlannerConfig

        planner: Policy = HeuristicPlanner(HeuristicPlannerConfig(**config.planner))
        return planner
    from sift.integrations.ollama import policy_from_settings

    overrides = dict(config.policy_options)
    if config.model:
        overrides["model"] = config.model
    return policy_from_settings(**overrides)


def _mode_label(mode: str, config: EvalConfig) -> str:
    if mode == "agentic" and config.rollouts > 1:
        return f"agentic-x{config.rollouts}"
    return mode


@dataclass(frozen=True)
class _Setup:
    """What every question of a run shares."""

    corpus: Corpus
    config: EvalConfig
    harness: HarnessConfig
    policy: Policy | None


async def _answer(question: Question, mode: str, setup: _Setup) -> SearchResult:
    from sift import graphs

    if mode in SINGLE_SHOT_MODES:
        return await asyncio.to_thread(
            graphs.single_shot,
            question.question,
            setup.corpus,
            top_k=setup.config.top_k,
            mode=SINGLE_SHOT_MODES[mode],
        )
    return await graphs.asearch(
        question.question,
        setup.corpus,
        policy=setup.policy,
        config=setup.harness,
        top_k=setup.config.top_k,
        rollouts=setup.config.rollouts,
    )


async def _run_mode(
    questions: Sequence[Question], mode: str, setup: _Setup, advance: Callable[[], None]
) -> list[QuestionOutcome]:
    gate = asyncio.Semaphore(setup.config.concurrency)
    label = _mode_label(mode, setup.config)

    async def one(question: Question) -> QuestionOutcome:
        async with gate:
            started = time.perf_counter()
            try:
                result = await _answer(question, mode, setup)
            except ModelServerError:
                raise  # the model server is down or lacks the model: no point going on
            except Exception as exc:  # one bad question must not sink the whole run
                result = SearchResult(
                    question=question.question,
                    stopped_because="error",
                    error=f"{type(exc).__name__}: {exc}",
                )
            latency = time.perf_counter() - started
        advance()
        return score(question, label, result, latency, setup.config.ks)

    if mode == "agentic" and setup.config.policy != "heuristic" and questions:
        # A model server that is down or lacks the model fails every episode the same
        # way (the harness turns it into stopped_because "error"); one question first
        # turns that into one clear error instead of hundreds of failed questions.
        first = await one(questions[0])
        if first.error and any(name in first.error for name in _SERVER_FAILURES):
            raise EvalError(f"the agentic policy cannot run: {first.error}")
        return [first, *await asyncio.gather(*(one(q) for q in questions[1:]))]
    return list(await asyncio.gather(*(one(q) for q in questions)))


async def _run_modes(
    dataset: Dataset,
    modes: Sequence[str],
    setup: _Setup,
    bar: Progress,
    outcomes: dict[str, list[QuestionOutcome]],
    walls: dict[str, float],
    cpus: dict[str, float],
) -> None:
    # One event loop for every mode: a model client binds to the loop it first runs on.
    try:
        for mode in modes:
            label = _mode_label(mode, setup.config)
            task = bar.add_task(f"{dataset.name}: {label}", total=len(dataset.questions))
            mode_started = time.perf_counter()
            cpu_started = time.process_time()
            outcomes[label] = await _run_mode(
                dataset.questions, mode, setup, partial(bar.advance, task)
            )
            walls[label] = time.perf_counter() - mode_started
            cpus[label] = time.process_time() - cpu_started
            bar.update(task, description=f"{dataset.name}: {label} ({walls[label]:.1f} s)")
    finally:
        # On every way out (the model check failed, a mode raised, the run was
        # interrupted): the model client's connections belong to this loop.
        close = getattr(setup.policy, "aclose", None)
        if close is not None:
            await close()


# --------------------------------------------------------------------------- the run


def _progress(enabled: bool) -> Progress:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not enabled,
    )


def run_eval(config: EvalConfig, *, command: str | None = None, progress: bool = True) -> EvalRun:
    """Runs the evaluation described by `config` and writes its reports."""
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.perf_counter()
    cpu_started = time.process_time()
    modes = parse_modes(config.modes)
    dataset = load_dataset(config.dataset, limit=config.limit)
    policy = _make_policy(config) if "agentic" in modes else None
    from sift.graphs import HarnessConfig

    # Read once (environment included) so that every question runs, and the report
    # records, exactly the same limits.
    harness = HarnessConfig(**config.harness)

    outcomes: dict[str, list[QuestionOutcome]] = {}
    walls: dict[str, float] = {}
    cpus: dict[str, float] = {}
    with _progress(progress) as bar:
        index_task = bar.add_task(f"{dataset.name}: index", total=len(dataset.passages))
        corpus, rebuilt, index_s = open_cached_store(
            dataset,
            config.store_cache,
            config.embedder,
            on_progress=lambda n: bar.advance(index_task, n),
        )
        bar.update(index_task, completed=len(dataset.passages))
        try:
            setup = _Setup(corpus=corpus, config=config, harness=harness, policy=policy)
            asyncio.run(_run_modes(dataset, modes, setup, bar, outcomes, walls, cpus))
        finally:
            corpus.close()

    summaries = []
    for label, items in outcomes.items():
        summary = summarize(label, items, config.ks)
        timing = {
            "wall_s": round(walls.get(label, 0.0), 3),
            "cpu_s": round(cpus.get(label, 0.0), 3),
        }
        summaries.append(summary.model_copy(update=timing))
    recorded = config.model_dump(mode="json")
    recorded["modes"] = modes
    recorded["harness"] = harness.model_dump(mode="json")
    planner_config = getattr(policy, "config", None)
    if isinstance(planner_config, BaseModel):
        recorded["planner"] = planner_config.model_dump(mode="json")
    recorded["threshold"] = harness.threshold_tokens
    report = EvalReport(
        dataset=DatasetInfo(
            name=dataset.name,
            path=str(dataset.root),
            corpus_sha256=dataset.corpus_sha256,
            passages=len(dataset.passages),
            questions=len(dataset.questions),
            questions_with_absent_gold=len(dataset.absent_gold),
            absent_gold_ids=dataset.absent_gold_ids,
            absent_gold=dataset.absent_gold,
            max_gold_per_question=max(
                (len(q.supporting_doc_ids) for q in dataset.questions), default=0
            ),
        ),
        config=recorded,
        command=command or _command_for(config),
        machine=machine_info(),
        started_at=started_at,
        index_s=round(index_s, 3),
        index_rebuilt=rebuilt,
        total_s=round(time.perf_counter() - started, 3),
        cpu_s=round(time.process_time() - cpu_started, 3),
        summaries=summaries,
    )
    files = write_report(report, outcomes, config.out_dir(dataset.name))
    return EvalRun(report=report, outcomes=outcomes, files=files)


def _command_for(config: EvalConfig) -> str:
    args = ["sift", "eval", "--dataset", str(config.dataset)]
    if config.limit:
        args += ["--limit", str(config.limit)]
    args += ["--modes", ",".join(config.modes), "--policy", config.policy]
    if config.model:
        args += ["--model", config.model]
    if config.policy_options.get("host"):
        args += ["--ollama-host", str(config.policy_options["host"])]
    if config.rollouts > 1:
        args += ["--rollouts", str(config.rollouts)]
    for prefix, given in (("", config.harness), ("planner.", config.planner)):
        for key, value in given.items():
            args += ["--set", f"{prefix}{key}={'none' if value is None else value}"]
    if config.top_k != EvalConfig.model_fields["top_k"].default:
        args += ["--top-k", str(config.top_k)]
    args += ["--embedder", config.embedder, "--concurrency", str(config.concurrency)]
    if config.out:
        args += ["--out", str(config.out)]
    return shlex.join(args)
