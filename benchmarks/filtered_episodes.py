"""Agentic episodes under a filter: a narrow filter must not make an episode slower.

    python benchmarks/filtered_episodes.py [--size 100k] [--questions 20] [--rounds 3]
        [--workdir DIR] [--json benchmarks/results/filtered_episodes.json]
        [--markdown benchmarks/results/filtered_episodes.md]

Issue 41, item 5: the faces that pass filters to the harness (the HTTP service, Dify's
metadata_condition, MCP, n8n) all run `sift.graphs.asearch(filters=...)`. This script
builds one embedded store (static embedder) of benchmarks/filters.py's synthetic corpus
(`prepare`: the same passages, metadata and queries), then runs the heuristic planner's
episode for each question with no filter, a 5 % tenant filter and a 0.05 % one, the
filters' order rotating each round, and reports the p50 / p95 wall time of an episode,
its tool calls and whether its evidence keeps to the filter. Questions are the prepared
queries asked as a user would ("Which passage talks about ...?").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# Sibling scripts, not a package.
from filters import SIZES, prepare  # noqa: E402
from peers import _ingest_sift, _load_sift  # noqa: E402
from store_speed import _progress  # noqa: E402

FILTERS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "t5 (5 %)": {"tenant": "t5"},
    "t0.05 (0.05 %)": {"tenant": "t0.05"},
}


def _store(data: Path, folder: Path) -> Any:
    """The prepared passages in a new embedded store (peers.py's sift ingest), open."""
    from sift.integrations.stores.sqlite import SqliteCorpus

    with _progress() as progress:
        _ingest_sift(_load_sift(data), folder, progress)
    return SqliteCorpus(folder / "store")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from sift.filters import Filter, matches
    from sift.graphs import search

    data = prepare(args.size, Path(args.workdir))
    inputs = json.loads((data / "inputs.json").read_text())
    questions = [f"Which passage talks about {q}?" for q in inputs["queries"][: args.questions]]
    times: dict[str, list[float]] = {name: [] for name in FILTERS}
    calls: dict[str, list[int]] = {name: [] for name in FILTERS}
    outside = dict.fromkeys(FILTERS, 0)
    with tempfile.TemporaryDirectory(prefix="filtered-episodes-") as folder:
        started = time.perf_counter()
        store = _store(data, Path(folder))
        ingest_s = time.perf_counter() - started
        search(questions[0], store)  # warm: the planner's and the store's first calls
        names = list(FILTERS)
        for round_ in range(args.rounds):
            order = names[round_ % len(names) :] + names[: round_ % len(names)]
            for name in order:
                spec = FILTERS[name]
                parsed = Filter.of(spec)
                for question in questions:
                    begin = time.perf_counter()
                    result = search(question, store, filters=spec)
                    times[name].append((time.perf_counter() - begin) * 1000)
                    calls[name].append(result.usage.tool_calls)
                    outside[name] += sum(
                        not matches(parsed, {**e.metadata, "doc_id": e.doc_id, "title": e.title})
                        for e in result.evidence
                    )
        store.close()
    rows = {}
    for name in FILTERS:
        ordered = sorted(times[name])
        rows[name] = {
            "p50_ms": statistics.median(ordered),
            "p95_ms": ordered[int(0.95 * (len(ordered) - 1))],
            "tool_calls": statistics.median(calls[name]),
            "outside_filter": outside[name],
        }
    return {
        "size": args.size,
        "passages": SIZES[args.size],
        "questions": len(questions),
        "rounds": args.rounds,
        "ingest_s": ingest_s,
        "rows": rows,
    }


def markdown(report: dict[str, Any], command: str) -> str:
    none = report["rows"]["none"]["p50_ms"]
    lines = [
        "# Agentic episodes under a filter",
        "",
        f"Regenerated with `{command}`.",
        "",
        f"Where things stand: {report['questions']} questions x {report['rounds']} rounds "
        f"over {report['passages']:,} synthetic passages (benchmarks/filters.py's corpus), "
        "the heuristic planner, the static embedder. Issue 41's target: the p50 with a "
        "0.05 % filter no higher than without.",
        "",
        "| filter | episode p50 ms | p95 ms | p50 / unfiltered | tool calls (median) "
        "| evidence outside the filter |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in report["rows"].items():
        lines.append(
            f"| {name} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} | "
            f"{row['p50_ms'] / none:.2f}x | {row['tool_calls']:g} | {row['outside_filter']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=list(SIZES), default="100k")
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", default=str(HERE / ".cache" / "filters"))
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    report = run(args)
    command = "python " + " ".join(["benchmarks/filtered_episodes.py", *sys.argv[1:]])
    text = markdown(report, command)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(text)


if __name__ == "__main__":
    main()
