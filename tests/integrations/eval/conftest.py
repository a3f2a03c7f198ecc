"""Shared fixture: writes a benchmark folder in the shared schema."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

WriteDataset = Callable[[Path, Sequence[dict[str, Any]], Sequence[dict[str, Any]]], Path]


@pytest.fixture
def write_dataset() -> WriteDataset:
    def write(
        folder: Path, corpus: Sequence[dict[str, Any]], questions: Sequence[dict[str, Any]]
    ) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        for name, records in (("corpus.jsonl", corpus), ("questions.jsonl", questions)):
            lines = "".join(json.dumps(record) + "\n" for record in records)
            (folder / name).write_text(lines, encoding="utf-8")
        return folder

    return write
