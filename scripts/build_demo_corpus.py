"""Rebuilds the demo corpus shipped in integrations/demo/ from ../shared/benchmarks.

The demo corpus is the context paragraphs (gold plus distractors) of the first 30
2WikiMultihopQA dev questions, so that `sift demo` has real two-hop material offline.

    python scripts/build_demo_corpus.py
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "benchmarks" / "2wikimultihopqa"
TARGET = ROOT / "integrations" / "demo"
QUESTIONS = 30


def main() -> None:
    corpus = {}
    with (SOURCE / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            corpus[record["id"]] = record
    questions = []
    with (SOURCE / "questions.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            questions.append(json.loads(line))
    wanted: list[str] = []
    kept = []
    for question in questions[:QUESTIONS]:
        ids = [i for i in question["candidate_doc_ids"] if i in corpus]
        wanted += [i for i in ids if i not in wanted]
        kept.append(
            {
                "id": question["id"],
                "question": question["question"],
                "answers": question["answers"],
                "supporting_doc_ids": question["supporting_doc_ids"],
            }
        )
    lines = [json.dumps(corpus[i], ensure_ascii=False) for i in sorted(wanted)]
    with gzip.open(TARGET / "corpus.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as out:
        out.write("\n".join(lines) + "\n")
    with gzip.open(TARGET / "questions.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as out:
        out.write("\n".join(json.dumps(q, ensure_ascii=False) for q in kept) + "\n")
    print(f"{len(lines)} passages, {len(kept)} questions -> {TARGET}")


if __name__ == "__main__":
    main()
