"""Japanese retrieval through the real embedded store (JSQuAD), beside the issue's
baseline run in the same process.

    python benchmarks/jsquad_retrieval.py [--limit N]
        [--markdown benchmarks/results/jsquad_retrieval.md]
        [--json benchmarks/results/jsquad_retrieval.json]

The 2,304 JSQuAD paragraphs are indexed into a fresh `SqliteCorpus` (the default
analyzer and the default, English, static embedder: what a user who just indexes
Japanese files gets), and each of the 400 dev questions is answered by:

- baseline: bm25s (k1 1.5, b 0.75) over the character bigrams of title + text, spaces and
  punctuation included, no dictionary (the issue's baseline, built in this process);
- bm25 / hybrid: one search of the question (`sift.graphs.single_shot`, top 30);
- agentic: `sift.graphs.asearch` with the heuristic planner (default limits, top 30).

hit@k: the gold paragraph among the first k distinct documents of the result; MRR@10:
the mean of 1/rank of the gold paragraph when it is in the first 10 (0 otherwise).
JSQuAD has one gold paragraph per question, so hit@k is also `sift eval`'s all-gold@k.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bm25s
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sift.graphs import asearch, single_shot
from sift.graphs.policies import HeuristicPlanner
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document, SearchResult

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks" / "jsquad"
KS = (1, 5, 10, 30)
MODES = ("baseline", "bm25", "hybrid", "agentic")
console = Console(stderr=True)


def load() -> tuple[list[Document], list[dict[str, Any]]]:
    with open(DATA / "corpus.jsonl", encoding="utf-8") as handle:
        docs = [
            Document(id=r["id"], title=r["title"], text=r["text"]) for r in map(json.loads, handle)
        ]
    with open(DATA / "questions.jsonl", encoding="utf-8") as handle:
        questions = [json.loads(line) for line in handle]
    return docs, questions


def raw_bigrams(text: str) -> list[str]:
    """The issue's baseline: bigrams of the raw string, spaces and punctuation included."""
    return [text[i : i + 2] for i in range(len(text) - 1)] or [text]


class Baseline:
    """bm25s over raw character bigrams of title + text."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.ids = [d.id for d in docs]
        self.bm25 = bm25s.BM25(k1=1.5, b=0.75)
        self.bm25.index([raw_bigrams(f"{d.title} {d.text}") for d in docs], show_progress=False)
        self.vocab = self.bm25.vocab_dict

    def search(self, question: str, k: int = 30) -> list[str]:
        terms = [t for t in raw_bigrams(question) if t in self.vocab]
        if not terms:
            return []
        found, scores = self.bm25.retrieve([terms], k=k, show_progress=False)
        return [self.ids[i] for i, s in zip(found[0], scores[0], strict=True) if s > 0]


def documents(result: SearchResult) -> list[str]:
    return list(dict.fromkeys(e.doc_id for e in result.evidence))


def metrics(golds: list[str], ranked: list[list[str]]) -> dict[str, float]:
    out = {
        f"hit@{k}": sum(g in r[:k] for g, r in zip(golds, ranked, strict=True)) / len(golds)
        for k in KS
    }
    out["mrr@10"] = sum(
        1.0 / (r.index(g) + 1) for g, r in zip(golds, ranked, strict=True) if g in r[:10]
    ) / len(golds)
    return out


def misses(questions: list[dict[str, Any]], golds: list[str], ranked: list[list[str]]) -> list[str]:
    """The ids of the questions whose gold paragraph is not in the first 10."""
    return [q["id"] for q, g, r in zip(questions, golds, ranked, strict=True) if g not in r[:10]]


def run(limit: int | None) -> dict[str, Any]:
    docs, questions = load()
    questions = questions[:limit] if limit else questions
    golds = [q["supporting_doc_ids"][0] for q in questions]
    ranked: dict[str, list[list[str]]] = {mode: [] for mode in MODES}
    turns: list[int] = []
    seconds: dict[str, float] = dict.fromkeys(MODES, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        baseline = Baseline(docs)
        baseline_index_s = time.perf_counter() - started
        corpus = SqliteCorpus(Path(tmp) / "store")
        started = time.perf_counter()
        report = corpus.upsert(docs)
        index_s = time.perf_counter() - started
        planner = HeuristicPlanner()

        async def episodes() -> None:
            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
            with Progress(*columns, TimeElapsedColumn(), console=console) as progress:
                task = progress.add_task("jsquad questions", total=len(questions))
                for q in questions:
                    text = q["question"]
                    clock = time.perf_counter()
                    ranked["baseline"].append(baseline.search(text))
                    seconds["baseline"] += time.perf_counter() - clock
                    for mode in ("bm25", "hybrid"):
                        clock = time.perf_counter()
                        shot = single_shot(text, corpus, top_k=30, mode=mode)
                        seconds[mode] += time.perf_counter() - clock
                        ranked[mode].append(documents(shot))
                    clock = time.perf_counter()
                    result = await asearch(text, corpus, policy=planner, top_k=30)
                    seconds["agentic"] += time.perf_counter() - clock
                    ranked["agentic"].append(documents(result))
                    turns.append(result.usage.turns)
                    progress.advance(task)

        asyncio.run(episodes())
        stats = corpus.stats()
        corpus.close()
    return {
        "questions": len(questions),
        "documents": len(docs),
        "chunks": stats.chunks,
        "analyzer": stats.extra["analyzer"],
        "embedder": stats.embedder,
        "index_s": index_s,
        "indexed": report.added,
        "baseline_index_s": baseline_index_s,
        "metrics": {mode: metrics(golds, ranked[mode]) for mode in MODES},
        "ms_per_question": {mode: 1000 * seconds[mode] / len(questions) for mode in MODES},
        "agentic_turns_mean": sum(turns) / len(turns),
        "agentic_turns_max": max(turns),
        "misses": {mode: misses(questions, golds, ranked[mode]) for mode in MODES},
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
    }


def markdown(result: dict[str, Any], command: str) -> str:
    names = {
        "baseline": "baseline: bm25s over raw character bigrams",
        "bm25": "sift single shot, bm25",
        "hybrid": "sift single shot, hybrid",
        "agentic": "sift agentic (heuristic planner)",
    }
    lines = [
        "# JSQuAD retrieval through the embedded store",
        "",
        f"Command: `{command}`",
        "",
        f"{result['questions']} dev questions over {result['documents']:,} paragraphs "
        f"({result['chunks']:,} chunks) indexed in {result['index_s']:.1f} s into a "
        f"`SqliteCorpus` with the default analyzer and the `{result['embedder']}` embedder "
        f"(English: hybrid search gives it no weight on Japanese questions). See the "
        "module doc of benchmarks/jsquad_retrieval.py for each system. JSQuAD has one gold "
        "paragraph per question: hit@k is also all-gold@k.",
        "",
        "| system | " + " | ".join(f"hit@{k}" for k in KS) + " | MRR@10 | ms/question |",
        "| --- | " + " | ".join("---:" for _ in KS) + " | ---: | ---: |",
    ]
    for mode in MODES:
        m = result["metrics"][mode]
        lines.append(
            f"| {names[mode]} | "
            + " | ".join(f"{m[f'hit@{k}']:.4f}" for k in KS)
            + f" | {m['mrr@10']:.4f} | {result['ms_per_question'][mode]:.1f} |"
        )
    lines += [
        "",
        f"Agentic turns: mean {result['agentic_turns_mean']:.2f}, max "
        f"{result['agentic_turns_max']}. Misses at 10 (question ids) are in the JSON file.",
        "",
        f"Machine: {result['machine']}, Python {result['python']}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="First N questions only.")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    given = sys.argv[1:] if argv is None else list(argv)
    result = run(args.limit)
    table = Table(title="JSQuAD through the embedded store")
    for column in ("system", *(f"hit@{k}" for k in KS), "MRR@10"):
        table.add_column(column)
    for mode in MODES:
        m = result["metrics"][mode]
        table.add_row(mode, *(f"{m[f'hit@{k}']:.4f}" for k in KS), f"{m['mrr@10']:.4f}")
    console.print(table)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    if args.markdown:
        command = " ".join(["python benchmarks/jsquad_retrieval.py", *given])
        args.markdown.write_text(markdown(result, command), encoding="utf-8")


if __name__ == "__main__":
    main()
