"""Draws the small benchmark samples committed beside this script from the shared dev sets,
so the tests that need real passages and questions run in a clone with nothing beside it.

    python tests/data/benchmarks/make_samples.py [path/to/shared/benchmarks]

The default source is ../shared/benchmarks beside the repository. The draw is fixed (every
Nth passage, the questions of a seeded generator): rerunning it on the same shared files
writes the same samples. See README.md here for what each sample holds and its licence.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[2] / ".." / "shared" / "benchmarks"
ENGLISH = ("hotpotqa", "musique", "2wikimultihopqa")
SEED = 28
# Every 60th English passage: the passages tests/integrations/data/english_chunks.jsonl
# recorded the chunks of.
ENGLISH_EVERY = 60
QUESTIONS_PER_SET = 10
# MuSiQue questions whose gold has near-duplicates among them, so the sample shows them.
WITH_TWINS = 2
# Japanese: whole articles (a question's gold paragraph must be told from its article's
# others), paragraphs naming a Tokyo ward (grep), the gold of every 20th question (the
# planner's Japanese tests) and every 12th paragraph.
JSQUAD_ARTICLES = ("梅雨", "国際連合平和維持活動")
TOKYO_WARD = re.compile("東京都[^。]*区")
JSQUAD_QUESTION_EVERY = 20
JSQUAD_EVERY = 12


def _read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for row in sorted(rows, key=lambda r: r["id"]):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def _english(source: Path, name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    corpus = _read(source / name / "corpus.jsonl")
    questions = _read(source / name / "questions.jsonl")
    rng = random.Random(f"{SEED}-{name}")
    twins = [q for q in questions if q["gold_near_duplicate_doc_ids"]]
    chosen = rng.sample(twins, min(WITH_TWINS, len(twins)))
    rest = [q for q in questions if q not in chosen]
    chosen += rng.sample(rest, QUESTIONS_PER_SET - len(chosen))
    keep = {row["id"] for row in corpus[::ENGLISH_EVERY]}
    for q in chosen:
        keep.update(q["supporting_doc_ids"])
        for copies in q["gold_near_duplicate_doc_ids"].values():
            keep.update(copies)
    sample = [row for row in corpus if row["id"] in keep]
    for q in chosen:
        q["candidate_doc_ids"] = [i for i in q["candidate_doc_ids"] if i in keep]
    return sample, chosen


def _jsquad(source: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    corpus = _read(source / "jsquad" / "corpus.jsonl")
    questions = _read(source / "jsquad" / "questions.jsonl")
    keep = {
        row["id"]
        for row in corpus
        if row["title"] in JSQUAD_ARTICLES or TOKYO_WARD.search(row["text"])
    }
    keep.update(row["id"] for row in corpus[::JSQUAD_EVERY])
    for q in questions[::JSQUAD_QUESTION_EVERY]:
        keep.update(q["supporting_doc_ids"])
    sample = [row for row in corpus if row["id"] in keep]
    chosen = [q for q in questions if set(q["supporting_doc_ids"]) <= keep]
    for q in chosen:
        q["candidate_doc_ids"] = [i for i in q["candidate_doc_ids"] if i in keep]
    return sample, chosen


def main(source: Path = SOURCE) -> None:
    for name in (*ENGLISH, "jsquad"):
        corpus, questions = _jsquad(source) if name == "jsquad" else _english(source, name)
        _write(HERE / name / "corpus.jsonl", corpus)
        _write(HERE / name / "questions.jsonl", questions)
        print(f"{name}: {len(corpus)} passages, {len(questions)} questions")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE)
