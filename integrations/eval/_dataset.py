"""Loading and validating a benchmark folder (`corpus.jsonl` + `questions.jsonl`).

The schema is the one of ../shared/benchmarks (its README). Every problem is reported with
the file and line it comes from; gold ids that the corpus does not hold are counted and
kept, because dropping them would flatter recall.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sift.errors import SiftError

__all__ = [
    "CORPUS_FILE",
    "QUESTIONS_FILE",
    "Dataset",
    "DatasetError",
    "EvalError",
    "Passage",
    "Question",
    "load_dataset",
]

M = TypeVar("M", bound=BaseModel)

CORPUS_FILE = "corpus.jsonl"
QUESTIONS_FILE = "questions.jsonl"


class EvalError(SiftError, ValueError):
    """An evaluation cannot run as asked (unknown mode, bad option, ...)."""


class DatasetError(EvalError):
    """A dataset folder or one of its lines does not follow the benchmark schema."""


class Passage(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1)
    title: str = ""
    text: str


class Question(BaseModel):
    """One benchmark question; dataset-specific fields are kept in `extra`."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answers: list[str] = Field(default_factory=list)
    type: str | None = None
    dataset: str | None = None
    supporting_doc_ids: list[str] = Field(min_length=1)
    gold_near_duplicate_doc_ids: dict[str, list[str]] = Field(default_factory=dict)


class Dataset(BaseModel):
    """A loaded benchmark folder, with what validation found."""

    name: str
    root: Path
    corpus_path: Path
    corpus_sha256: str
    passages: list[Passage]
    questions: list[Question]
    # question id -> its gold ids that are not in the corpus (kept in the evaluation).
    absent_gold: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def absent_gold_ids(self) -> int:
        return sum(len(ids) for ids in self.absent_gold.values())


def load_dataset(root: str | Path, *, limit: int | None = None) -> Dataset:
    """Reads and validates a dataset folder; `limit` keeps the first N questions (by id
    order in the file), after the whole file has been validated."""
    folder = Path(root).expanduser()
    if not folder.is_dir():
        raise DatasetError(
            f"dataset folder {folder} does not exist or is not a folder; "
            f"pass a folder holding {CORPUS_FILE} and {QUESTIONS_FILE}"
        )
    for name in (CORPUS_FILE, QUESTIONS_FILE):
        if not (folder / name).is_file():
            raise DatasetError(
                f"dataset folder {folder} has no {name}; a dataset folder holds "
                f"{CORPUS_FILE} and {QUESTIONS_FILE} (see shared/benchmarks/README.md)"
            )
    if limit is not None and limit < 1:
        raise EvalError(f"--limit must be at least 1, got {limit}")

    corpus_path = folder / CORPUS_FILE
    digest = hashlib.sha256(corpus_path.read_bytes()).hexdigest()
    passages = _read_records(corpus_path, Passage)
    if not passages:
        raise DatasetError(f"{corpus_path} holds no passages")
    questions = _read_records(folder / QUESTIONS_FILE, Question)
    if not questions:
        raise DatasetError(f"{folder / QUESTIONS_FILE} holds no questions")
    if limit is not None:
        questions = questions[:limit]

    known = {p.id for p in passages}
    absent = {
        q.id: missing
        for q in questions
        if (missing := [gid for gid in q.supporting_doc_ids if gid not in known])
    }
    return Dataset(
        name=folder.resolve().name,
        root=folder,
        corpus_path=corpus_path,
        corpus_sha256=digest,
        passages=passages,
        questions=questions,
        absent_gold=absent,
    )


def _read_records(path: Path, model: type[M]) -> list[M]:
    records: list[M] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path.name} line {number}"
            try:
                raw: Any = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{where} is not valid JSON: {exc.msg}") from None
            if not isinstance(raw, dict):
                raise DatasetError(f"{where} is not a JSON object")
            try:
                record = model.model_validate(raw)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or 'record'}: {err['msg']}"
                    for err in exc.errors()
                )
                raise DatasetError(f"{where} does not follow the schema: {problems}") from None
            record_id = record.id  # type: ignore[attr-defined]
            if record_id in seen:
                raise DatasetError(
                    f"{where} repeats id {record_id!r} first seen on line {seen[record_id]}"
                )
            seen[record_id] = number
            records.append(record)
    return records
