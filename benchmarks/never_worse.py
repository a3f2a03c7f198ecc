"""Is the agent never worse than one plain search? Single-shot beside agentic, per half.

    python benchmarks/never_worse.py [--datasets hotpotqa musique 2wikimultihopqa jsquad]
        [--part tune|held|all] [--limit N] [--json FILE] [--markdown FILE]

Over the whole corpus of each dev set of ../shared/benchmarks (stores cached under
benchmarks/.cache/ as planner_quality.py builds them), each question runs twice in one
process, the order alternated: `single_shot(question, store, top_k=30)` (the plain hybrid
search a pipeline would otherwise make) and `asearch(question, store)` (the heuristic
planner, default settings, top 30). Scored per document (a chunk counts for its
document; a gold near-duplicate counts as the gold): hit@1/@5/@10 (any gold among the
first k documents), all-gold@10, the share of results flagged `not_found`, and the
episode's cost (p50 wall ms, p50 and max peak context tokens, p50 turns and tool calls).
A second table gives hit@1, hit@10 and all-gold@10 per kind (`kind_of`: MuSiQue by
hops, HotpotQA and 2WikiMultihopQA by type), so a gap between halves can be told apart
from the kinds each holds.

Every dev set is cut in two by the SHA-1 of the question id (even first byte: the tuning
part, odd: the held part), as entity_graph_quality.py cuts it: a threshold is chosen on
the tuning part and read on the held one. The real-document benchmark has its own script
(benchmarks/manuals.py), which reports the same figures.
"""

# ruff: noqa: E402  (BLAS thread limits must be set before numpy is imported)
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import asyncio
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from entity_graph_quality import part_of
from planner_quality import build_store, embedder_name, gold_sets, load

DATASETS = ("hotpotqa", "musique", "2wikimultihopqa", "jsquad")
SYSTEMS = ("single_shot", "agentic")


def kind_of(q: dict[str, Any]) -> str:
    """The question's kind as its set labels it: MuSiQue by hop count (its halves hold
    different mixes), HotpotQA and 2WikiMultihopQA by type; JSQuAD has one kind."""
    if q.get("num_hops"):
        return f"{q['num_hops']} hops"
    return str(q.get("type") or "-")


def not_found(flags: list[str]) -> bool:
    return any(f == "not_found" or f.startswith("not_found:") for f in flags)


@dataclass
class Tally:
    hit1: list[float] = field(default_factory=list)
    hit5: list[float] = field(default_factory=list)
    hit10: list[float] = field(default_factory=list)
    all_gold: list[float] = field(default_factory=list)
    flagged: list[float] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    peak: list[int] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)

    def add(self, q: dict[str, Any], result: Any, ms: float) -> dict[str, Any]:
        ranked = list(dict.fromkeys(e.doc_id for e in result.evidence))
        golds = gold_sets(q)
        gold = set().union(*golds)
        first = next((i + 1 for i, d in enumerate(ranked) if d in gold), None)
        for k, into in ((1, self.hit1), (5, self.hit5), (10, self.hit10)):
            into.append(float(first is not None and first <= k))
        top10 = set(ranked[:10])
        self.all_gold.append(float(all(g & top10 for g in golds)))
        self.flagged.append(float(not_found(result.flags)))
        self.ms.append(ms)
        self.peak.append(result.usage.peak_context_tokens)
        self.turns.append(result.usage.turns)
        self.calls.append(result.usage.tool_calls)
        return {
            "first_gold_rank": first,
            "all_gold10": bool(self.all_gold[-1]),
            "ms": round(ms, 1),
            "peak": result.usage.peak_context_tokens,
            "turns": result.usage.turns,
            "calls": result.usage.tool_calls,
            "flags": result.flags,
            "stop": _stop_note(result),
        }

    def row(self) -> dict[str, float]:
        n = len(self.hit1) or 1
        return {
            "n": len(self.hit1),
            "hit@1": sum(self.hit1) / n,
            "hit@5": sum(self.hit5) / n,
            "hit@10": sum(self.hit10) / n,
            "all-gold@10": sum(self.all_gold) / n,
            "not_found": sum(self.flagged) / n,
            "p50 ms": statistics.median(self.ms) if self.ms else 0.0,
            "p50 peak": statistics.median(self.peak) if self.peak else 0.0,
            "max peak": max(self.peak, default=0),
            "p50 turns": statistics.median(self.turns) if self.turns else 0.0,
            "p50 calls": statistics.median(self.calls) if self.calls else 0.0,
        }


def _stop_note(result: Any) -> str | None:
    notes = [t.note for t in result.trace if t.note]
    return notes[-1] if notes else None


async def run(
    name: str, args: argparse.Namespace, progress: Progress
) -> tuple[dict[str, dict[str, Tally]], list[dict[str, Any]]]:
    from sift.graphs import asearch, single_shot

    rows, questions = load(name)
    if args.part != "all":
        questions = [q for q in questions if part_of(q["id"]) == args.part]
    questions = questions[: args.limit] if args.limit else questions
    store = build_store(name, rows, embedder_name(), progress)
    out: dict[str, dict[str, Tally]] = {}
    per_question: list[dict[str, Any]] = []
    task = progress.add_task(name, total=len(questions))
    try:
        for number, q in enumerate(questions):
            part = part_of(q["id"])
            tallies = out.setdefault(part, {s: Tally() for s in SYSTEMS})
            record: dict[str, Any] = {
                "dataset": name,
                "id": q["id"],
                "part": part,
                "kind": kind_of(q),
            }
            order = SYSTEMS if number % 2 == 0 else SYSTEMS[::-1]
            for system in order:
                t = time.perf_counter()
                if system == "single_shot":
                    result = single_shot(q["question"], store, top_k=30)
                else:
                    result = await asearch(q["question"], store)
                ms = (time.perf_counter() - t) * 1000
                record[system] = tallies[system].add(q, result, ms)
            per_question.append(record)
            progress.advance(task)
    finally:
        store.close()
    return out, per_question


def table(results: dict[str, dict[str, dict[str, Tally]]]) -> list[str]:
    head = (
        "| set | half | system | n | hit@1 | hit@5 | hit@10 | all-gold@10 | not_found | "
        "p50 ms | p50 peak | max peak | p50 turns | p50 calls |"
    )
    lines = [head, "|" + " --- |" * 14]
    for name, parts in results.items():
        for part in ("tune", "held"):
            for system, tally in parts.get(part, {}).items():
                r = tally.row()
                lines.append(
                    f"| {name} | {part} | {system} | {r['n']} | {r['hit@1']:.3f} | "
                    f"{r['hit@5']:.3f} | {r['hit@10']:.3f} | {r['all-gold@10']:.3f} | "
                    f"{r['not_found']:.3f} | {r['p50 ms']:.0f} | {r['p50 peak']:.0f} | "
                    f"{r['max peak']} | {r['p50 turns']:.0f} | {r['p50 calls']:.0f} |"
                )
    return lines


def kind_table(records: list[dict[str, Any]]) -> list[str]:
    """Single-shot beside agentic per set, kind and half: whether a gap between the halves
    is the kinds they hold or within one kind."""
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in records:
        cells.setdefault((r["dataset"], r["kind"], r["part"]), []).append(r)
    lines = [
        "| set | kind | half | n | hit@1 | hit@10 | all-gold@10 |",
        "|" + " --- |" * 7,
    ]
    for (name, kind, part), rs in sorted(cells.items()):

        def share(system: str, test: Any, rs: list[dict[str, Any]] = rs) -> float:
            return sum(bool(test(r[system])) for r in rs) / len(rs)

        figures = []
        for test in (
            lambda o: o["first_gold_rank"] == 1,
            lambda o: o["first_gold_rank"] is not None and o["first_gold_rank"] <= 10,
            lambda o: o["all_gold10"],
        ):
            figures.append(f"{share('single_shot', test):.3f} / {share('agentic', test):.3f}")
        lines.append(f"| {name} | {kind} | {part} | {len(rs)} | " + " | ".join(figures) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--part", choices=("tune", "held", "all"), default="all")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--json", type=Path, help="per-question outcomes, to diff two runs")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    results: dict[str, dict[str, dict[str, Tally]]] = {}
    records: list[dict[str, Any]] = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns) as progress:
        for name in args.datasets:
            results[name], rows = asyncio.run(run(name, args, progress))
            records += rows
    lines = [
        *table(results),
        "",
        "By kind (each cell: single-shot / agentic):",
        "",
        *kind_table(records),
    ]
    print("\n".join(lines))
    if args.json:
        args.json.write_text(
            "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8"
        )
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
