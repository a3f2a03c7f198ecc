"""Evaluation of sift on multi-hop benchmarks: `sift eval` (DESIGN "Faces").

`metrics` holds the pure metric functions; `load_dataset` reads and validates a benchmark
folder; `run_eval` indexes its corpus once into a cached store, runs every question
through every mode and writes the reports (Markdown, JSON, per-question JSONL, plots).
"""

from __future__ import annotations

from sift.integrations.eval import metrics
from sift.integrations.eval._dataset import (
    Dataset,
    DatasetError,
    EvalError,
    Passage,
    Question,
    load_dataset,
)
from sift.integrations.eval._outcome import ModeSummary, QuestionOutcome, score, summarize
from sift.integrations.eval._plots import require_matplotlib
from sift.integrations.eval._report import (
    DatasetInfo,
    EvalReport,
    headline_markdown,
    render_markdown,
    write_report,
)
from sift.integrations.eval._runner import (
    MODES,
    POLICIES,
    EvalConfig,
    EvalRun,
    code_fingerprint,
    default_store_cache,
    open_cached_store,
    parse_modes,
    run_eval,
)

__all__ = [
    "MODES",
    "POLICIES",
    "Dataset",
    "DatasetError",
    "DatasetInfo",
    "EvalConfig",
    "EvalError",
    "EvalReport",
    "EvalRun",
    "ModeSummary",
    "Passage",
    "Question",
    "QuestionOutcome",
    "code_fingerprint",
    "default_store_cache",
    "headline_markdown",
    "load_dataset",
    "metrics",
    "open_cached_store",
    "parse_modes",
    "render_markdown",
    "require_matplotlib",
    "run_eval",
    "score",
    "summarize",
    "write_report",
]
