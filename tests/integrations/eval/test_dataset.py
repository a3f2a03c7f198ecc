"""Dataset loading: the shared schema, and an error naming each kind of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift.errors import SiftError
from sift.integrations.eval import DatasetError, EvalError, load_dataset

# Samples of the dev sets (tests/data/benchmarks/README.md).
SAMPLES = Path(__file__).resolve().parents[2] / "data" / "benchmarks"


CORPUS = [
    {"id": "p1", "title": "A", "text": "alpha"},
    {"id": "p2", "title": "B", "text": "beta"},
]
QUESTIONS = [
    {
        "id": "q1",
        "question": "what?",
        "answers": ["alpha"],
        "type": "bridge",
        "supporting_doc_ids": ["p1", "p2"],
        "level": "hard",
    },
    {
        "id": "q2",
        "question": "which?",
        "answers": ["beta"],
        "type": None,
        "supporting_doc_ids": ["p2", "gone-1", "gone-2"],
    },
]


def test_loads_and_counts_gold_absent_from_the_corpus(tmp_path: Path, write_dataset) -> None:
    ds = load_dataset(write_dataset(tmp_path / "tiny", CORPUS, QUESTIONS))
    assert ds.name == "tiny"
    assert [p.id for p in ds.passages] == ["p1", "p2"]
    assert [q.id for q in ds.questions] == ["q1", "q2"]
    # Absent gold is reported, and the question stays in the evaluation.
    assert ds.absent_gold == {"q2": ["gone-1", "gone-2"]}
    assert ds.absent_gold_ids == 2
    assert ds.questions[1].supporting_doc_ids == ["p2", "gone-1", "gone-2"]
    assert len(ds.corpus_sha256) == 64
    # Dataset-specific fields survive.
    assert ds.questions[0].model_extra == {"level": "hard"}


def test_limit_keeps_the_first_questions(tmp_path: Path, write_dataset) -> None:
    ds = load_dataset(write_dataset(tmp_path / "d", CORPUS, QUESTIONS), limit=1)
    assert [q.id for q in ds.questions] == ["q1"]
    assert ds.absent_gold == {}
    with pytest.raises(EvalError, match="--limit must be at least 1"):
        load_dataset(tmp_path / "d", limit=0)


@pytest.mark.parametrize("missing", ["corpus.jsonl", "questions.jsonl"])
def test_missing_file_is_named(tmp_path: Path, write_dataset, missing: str) -> None:
    folder = write_dataset(tmp_path / "d", CORPUS, QUESTIONS)
    (folder / missing).unlink()
    with pytest.raises(DatasetError, match=f"has no {missing}"):
        load_dataset(folder)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(tmp_path / "nowhere")


def test_malformed_json_line_is_named_with_its_number(tmp_path: Path, write_dataset) -> None:
    folder = write_dataset(tmp_path / "d", CORPUS, QUESTIONS)
    lines = (folder / "questions.jsonl").read_text().splitlines()
    lines.insert(1, '{"id": "q3", "question": ')
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"questions\.jsonl line 2 is not valid JSON"):
        load_dataset(folder)


def test_schema_violation_names_line_and_field(tmp_path: Path, write_dataset) -> None:
    corpus = [*CORPUS, {"id": "p3", "title": "C"}]
    folder = write_dataset(tmp_path / "d", corpus, QUESTIONS)
    with pytest.raises(DatasetError, match=r"corpus\.jsonl line 3 .*text: Field required"):
        load_dataset(folder)
    bad_q = [{**QUESTIONS[0], "supporting_doc_ids": []}]
    folder = write_dataset(tmp_path / "e", CORPUS, bad_q)
    with pytest.raises(DatasetError, match=r"questions\.jsonl line 1 .*supporting_doc_ids"):
        load_dataset(folder)


def test_non_object_line_and_duplicate_ids(tmp_path: Path, write_dataset) -> None:
    folder = write_dataset(tmp_path / "d", CORPUS, QUESTIONS)
    with (folder / "corpus.jsonl").open("a") as handle:
        handle.write("[1, 2]\n")
    with pytest.raises(DatasetError, match=r"corpus\.jsonl line 3 is not a JSON object"):
        load_dataset(folder)
    folder = write_dataset(tmp_path / "e", [*CORPUS, CORPUS[0]], QUESTIONS)
    with pytest.raises(DatasetError, match=r"line 3 repeats id 'p1' first seen on line 1"):
        load_dataset(folder)


def test_errors_are_sift_errors_so_the_cli_prints_one_line(tmp_path: Path) -> None:
    with pytest.raises(SiftError):
        load_dataset(tmp_path / "nowhere")


def test_empty_questions_file(tmp_path: Path, write_dataset) -> None:
    folder = write_dataset(tmp_path / "d", CORPUS, [])
    with pytest.raises(DatasetError, match="holds no questions"):
        load_dataset(folder)


def test_shared_musique_loads_with_its_near_duplicates(shared_benchmarks: Path) -> None:
    ds = load_dataset(shared_benchmarks / "musique")
    assert len(ds.questions) == 274
    assert len(ds.passages) == 6417
    with_twins = [q for q in ds.questions if q.gold_near_duplicate_doc_ids]
    assert with_twins, "the README promises near-duplicate entries for MuSiQue"


@pytest.mark.parametrize("name", ["hotpotqa", "musique", "2wikimultihopqa", "jsquad"])
def test_the_committed_samples_load_with_every_gold_passage(name: str) -> None:
    ds = load_dataset(SAMPLES / name)
    assert ds.absent_gold == {}
    assert len(ds.questions) >= 10 and len(ds.passages) >= 100
    twins = [q for q in ds.questions if q.gold_near_duplicate_doc_ids]
    # MuSiQue's sample keeps questions whose gold has near-duplicates, and the copies.
    assert bool(twins) == (name == "musique")
    known = {p.id for p in ds.passages}
    for q in twins:
        for copies in q.gold_near_duplicate_doc_ids.values():
            assert set(copies) <= known
