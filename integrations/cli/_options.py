"""Option declarations shared by several commands, so their help stays consistent."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "FilterOption",
    "JsonOption",
    "MaxTurnsOption",
    "ModeOption",
    "ModelOption",
    "OllamaHostOption",
    "PolicyOption",
    "QuestionsOption",
    "QuietOption",
    "RolloutsOption",
    "SeedOption",
    "SingleShotOption",
    "StoreOption",
    "ThinkOption",
    "TopKOption",
]

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Store path or weaviate:// URL (default: $SIFT_STORE, else ~/.sift/store).",
    ),
]

JsonOption = Annotated[bool, typer.Option("--json", help="Print the SearchResult as JSON.")]
TopKOption = Annotated[
    int | None,
    typer.Option("--top-k", min=1, max=200, help="Evidence size (default: the top_k setting, 30)."),
]
SingleShotOption = Annotated[
    bool,
    typer.Option(
        "--single-shot",
        help="One-step retrieval (the baseline), no harness: one search, fused with the "
        "store's entity graph when it keeps one (sift index --entity-graph).",
    ),
]
ModeOption = Annotated[
    str | None,
    typer.Option(help="Single-shot mode: hybrid, bm25 or dense (default: search_mode, hybrid)."),
]
QuestionsOption = Annotated[
    Path | None,
    typer.Option("--questions", help="Batch: JSONL of {id, question}; one JSON line out each."),
]
FilterOption = Annotated[
    list[str] | None,
    typer.Option("--filter", help="Metadata filter KEY=VALUE (repeatable) or a JSON object."),
]
PolicyOption = Annotated[str, typer.Option(help="heuristic (no model) or ollama.")]
ModelOption = Annotated[str | None, typer.Option(help="Ollama model name.")]
OllamaHostOption = Annotated[
    str | None, typer.Option("--ollama-host", help="Ollama address (default: $OLLAMA_HOST).")
]
ThinkOption = Annotated[str | None, typer.Option(help="Reasoning level: low, medium or high.")]
RolloutsOption = Annotated[
    int, typer.Option(min=1, max=16, help="Independent rollouts fused by RRF.")
]
MaxTurnsOption = Annotated[int | None, typer.Option("--max-turns", min=1, help="Turn limit.")]
SeedOption = Annotated[int | None, typer.Option(help="Model sampling seed.")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No live progress.")]
