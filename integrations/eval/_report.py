"""Writing an evaluation: report.md, report.json, per_question.jsonl and the plots."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from sift.integrations.eval._outcome import ModeSummary, QuestionOutcome
from sift.integrations.eval._traces import write_missed_traces

__all__ = [
    "DatasetInfo",
    "EvalReport",
    "headline_markdown",
    "machine_info",
    "render_markdown",
    "write_report",
]

REPORT_MD = "report.md"
REPORT_JSON = "report.json"
PER_QUESTION = "per_question.jsonl"


class DatasetInfo(BaseModel):
    name: str
    path: str
    corpus_sha256: str
    passages: int
    questions: int
    questions_with_absent_gold: int
    absent_gold_ids: int
    absent_gold: dict[str, list[str]] = Field(default_factory=dict)
    # The most gold passages any question has (1 for JSQuAD: all-gold@k is then hit@k).
    max_gold_per_question: int = 0


class EvalReport(BaseModel):
    """Every figure of one evaluation and the exact configuration that produced it."""

    dataset: DatasetInfo
    config: dict[str, Any]
    command: str
    machine: dict[str, Any]
    started_at: str
    index_s: float
    index_rebuilt: bool
    total_s: float
    # CPU seconds of the whole run (every thread): what the run costs whatever the load.
    cpu_s: float = 0.0
    summaries: list[ModeSummary]


def machine_info() -> dict[str, Any]:
    """What the figures ran on: enough to judge the latencies."""
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
    }
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    info["usable_cpus"] = affinity
    with contextlib.suppress(AttributeError, OSError):
        # Latencies from a shared machine mean little without how busy it was.
        info["load_average_1_5_15"] = [round(x, 2) for x in os.getloadavg()]
    cpu_model = _cpu_model()
    if cpu_model:
        info["cpu_model"] = cpu_model
    commit = _git_commit()
    if commit:
        info["git_commit"] = commit
    from sift import __version__

    info["sift_version"] = __version__
    return info


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_commit() -> str | None:
    """The checkout's commit, marked `-dirty` when tracked or new source files differ
    from it (figures from a dirty tree are not reproducible from the commit alone)."""
    commit = (_git("rev-parse", "--short", "HEAD") or "").strip()
    if not commit:
        return None
    status = _git("status", "--porcelain", "--", ":/core", ":/nodes", ":/graphs", ":/integrations")
    return f"{commit}-dirty" if status and status.strip() else commit


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}"


def render_markdown(report: EvalReport, plots: Sequence[str] = ()) -> str:
    ds = report.dataset
    ks = sorted(report.summaries[0].recall_at) if report.summaries else []
    cfg = report.config
    lines = [
        f"# sift eval: {ds.name}",
        "",
        f"{ds.questions} questions, {ds.passages:,} passages "
        f"(corpus sha256 `{ds.corpus_sha256[:16]}…`); "
        f"top_k {cfg.get('top_k')}, embedder `{cfg.get('embedder')}`, "
        f"policy `{cfg.get('policy')}`"
        + (f" (model `{cfg['model']}`)" if cfg.get("model") else "")
        + f", rollouts {cfg.get('rollouts')}.",
        "",
        "## Retrieval",
        "",
        "| mode | "
        + " | ".join(f"R@{k}" for k in ks)
        + " | "
        + " | ".join(f"all-gold@{k}" for k in ks)
        + " | P | R | F1 | answer found | trajectory R |",
        "| --- " * (1 + 2 * len(ks) + 5) + "|",
    ]
    for s in report.summaries:
        lines.append(
            f"| {s.mode} | "
            + " | ".join(_fmt(s.recall_at[k]) for k in ks)
            + " | "
            + " | ".join(_fmt(s.all_gold_at[k]) for k in ks)
            + f" | {_fmt(s.precision)} | {_fmt(s.recall)} | {_fmt(s.f1)}"
            f" | {_fmt(s.answer_found_rate)} | {_fmt(s.trajectory_recall)} |"
        )
    lines += [
        "",
        "## Cost",
        "",
        "| mode | turns | calls/turn | peak context tokens (mean / max) "
        "| final evidence tokens | prune accuracy (questions) | latency p50 / p95 (s) "
        "| errors | stopped because | mode wall / CPU (s) |",
        "| --- " * 10 + "|",
    ]
    for s in report.summaries:
        stops = ", ".join(f"{k} {v}" for k, v in sorted(s.stopped_because.items()))
        lines.append(
            f"| {s.mode} | {_fmt(s.turns, 2)} | {_fmt(s.calls_per_turn, 2)} "
            f"| {s.peak_context_tokens:,.0f} / {s.peak_context_tokens_max:,} "
            f"| {s.final_evidence_tokens:,.0f} "
            f"| {_fmt(s.prune_accuracy)} ({s.questions_with_pruning}) "
            f"| {_fmt(s.latency_p50_s)} / {_fmt(s.latency_p95_s)} "
            f"| {s.errors} | {stops} | {s.wall_s:.1f} / {s.cpu_s:.1f} |"
        )
    types = sorted({name for s in report.summaries for name in s.by_type})
    if len(types) > 1:
        k_low, k_high = (10, 30) if {10, 30} <= set(ks) else (ks[0], ks[-1])
        lines += [
            "",
            "## By question type",
            "",
            f"R@{k_low} / all-gold@{k_low} / all-gold@{k_high} per mode.",
            "",
            "| type | questions | " + " | ".join(s.mode for s in report.summaries) + " |",
            "| --- " * (2 + len(report.summaries)) + "|",
        ]
        for name in types:
            count = next(s.by_type[name].questions for s in report.summaries if name in s.by_type)
            cells = []
            for s in report.summaries:
                t = s.by_type.get(name)
                cells.append(
                    "n/a"
                    if t is None
                    else f"{_fmt(t.recall_at[k_low])} / {_fmt(t.all_gold_at[k_low])} / "
                    f"{_fmt(t.all_gold_at[k_high])}"
                )
            lines.append(f"| {name} | {count} | " + " | ".join(cells) + " |")
    lines += ["", "## Notes", ""]
    lines.append(
        f"- Gold passages absent from the corpus: {ds.absent_gold_ids} ids in "
        f"{ds.questions_with_absent_gold} questions (kept in the evaluation, counted as "
        "missed)."
    )
    if ds.max_gold_per_question == 1:
        lines.append(
            "- Every question has one gold passage: all-gold@k is hit@k (the gold passage "
            "among the first k documents) and R@k equals it."
        )
    lines.append(
        "- Recall counts a listed near-duplicate of a gold passage as that passage. "
        "P/R/F1 are over the final evidence set; answer found = an answer occurs as whole "
        "words in the final evidence (title + text), case and punctuation ignored; "
        "trajectory R = gold surfaced by any tool call at any turn; prune accuracy = share "
        "of pruned chunks that were not gold (mean over questions that pruned)."
    )
    lines.append(
        f"- Latency is per question, with {cfg.get('concurrency')} questions in flight on "
        f"{report.machine.get('usable_cpus')} usable CPUs "
        f"({report.machine.get('cpu_model', report.machine.get('processor'))}, load average "
        f"{report.machine.get('load_average_1_5_15', 'unknown')} at the end); "
        f"indexing took {report.index_s:.1f} s"
        + (" (rebuilt)" if report.index_rebuilt else " (cached store)")
        + f"; the whole run {report.total_s:.1f} s wall, {report.cpu_s:.1f} s CPU."
    )
    lines.append(
        f"- sift {report.machine.get('sift_version', '?')} at commit "
        f"{report.machine.get('git_commit', 'unknown')} (`-dirty`: the working tree differed "
        f"from it); Python {report.machine.get('python')}; {report.machine.get('platform')}; "
        f"started {report.started_at}."
    )
    lines += ["", "## Command", "", "```", report.command, "```", ""]
    if plots:
        lines += ["## Plots", ""]
        lines += [f"![{Path(p).stem}]({p})" for p in plots]
        lines.append("")
    return "\n".join(lines)


def _rounded(value: Any) -> Any:
    # Four decimals are finer than any per-question figure means, and keep the committed
    # per-question files small.
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def write_report(
    report: EvalReport,
    outcomes: Mapping[str, Sequence[QuestionOutcome]],
    out_dir: Path,
) -> dict[str, Path]:
    """Writes every output file into `out_dir` and returns them by kind (with an agentic
    mode, also traces/index.html: the questions it missed gold on, linked to their pages)."""
    from sift.integrations.eval._plots import plot_context_tokens, plot_recall_curves

    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    recall_png = plot_recall_curves(report.summaries, out_dir / "recall_at_k.png", report)
    written["recall_plot"] = recall_png
    tokens_png = plot_context_tokens(outcomes, out_dir / "context_tokens_per_turn.png", report)
    if tokens_png is not None:
        written["tokens_plot"] = tokens_png
    plots = [p.name for p in (recall_png, tokens_png) if p is not None]

    json_path = out_dir / REPORT_JSON
    json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    written["json"] = json_path
    md_path = out_dir / REPORT_MD
    md_path.write_text(render_markdown(report, plots), encoding="utf-8")
    written["markdown"] = md_path
    jsonl_path = out_dir / PER_QUESTION
    with jsonl_path.open("w", encoding="utf-8") as handle:
        for mode_outcomes in outcomes.values():
            for outcome in mode_outcomes:
                record = _rounded(outcome.model_dump(mode="json"))
                handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
                handle.write("\n")
    written["per_question"] = jsonl_path
    traces = write_missed_traces(report, outcomes, out_dir)
    if traces is not None:
        written["traces"] = traces
    return written


def headline_markdown(
    reports: Sequence[EvalReport], k_main: int = 10, *, compact: bool = False
) -> str:
    """One table over several datasets: single-shot baselines next to the agentic mode.
    `compact` keeps the columns that fit a README."""
    head = ["dataset", "mode"]
    if not compact:
        head.append("R@2")
    head += [f"R@{k_main}", "R@30", f"all-gold@{k_main}", "all-gold@30"]
    if not compact:
        head.append("F1")
    head += ["answer found", "turns", "peak tokens", "final tokens"]
    if not compact:
        head.append("p50 / p95 s")
    lines = ["| " + " | ".join(head) + " |", "| --- " * len(head) + "|"]
    for report in reports:
        for s in report.summaries:
            cells = [report.dataset.name, s.mode]
            if not compact:
                cells.append(_fmt(s.recall_at.get(2)))
            cells += [
                _fmt(s.recall_at.get(k_main)),
                _fmt(s.recall_at.get(30)),
                _fmt(s.all_gold_at.get(k_main)),
                _fmt(s.all_gold_at.get(30)),
            ]
            if not compact:
                cells.append(_fmt(s.f1))
            cells += [
                _fmt(s.answer_found_rate),
                _fmt(s.turns, 1),
                f"{s.peak_context_tokens:,.0f}",
                f"{s.final_evidence_tokens:,.0f}",
            ]
            if not compact:
                cells.append(f"{_fmt(s.latency_p50_s)} / {_fmt(s.latency_p95_s)}")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
