"""Evaluation of sift on multi-hop benchmarks: `sift eval` (DESIGN "Faces").

`metrics` holds the pure metric functions; `load_dataset` reads and validates a benchmark
folder; `run_eval` indexes its corpus once into a cached store, runs every question
through every mode and writes the reports.
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
from sift.integrations.eval._report import EvalReport, render_markdown, write_report

__all__ = [
    "Dataset",
    "DatasetError",
    "EvalError",
    "EvalReport",
    "ModeSummary",
    "Passage",
    "Question",
    "QuestionOutcome",
    "load_dataset",
    "metrics",
    "render_markdown",
    "score",
    "summarize",
    "write_report",
]
