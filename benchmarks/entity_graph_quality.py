"""Does an entity graph help multi-hop recall with no model? (issue 32, prototype)

Over the whole corpus of each dataset of ../shared/benchmarks, in one process:

  bm25       single-shot BM25 top 10 (`sift.graphs.single_shot`, mode bm25)
  walk       the entity graph's walk alone, seeded by the question's entities
  bm25+walk  BM25's top 10 fused (RRF) with a walk seeded by the question's entities and
             BM25's top `--seed-chunks` chunks
  hybrid     single_shot(question, store, top_k=30), the default hybrid search, with
             SIFT_SINGLE_SHOT_GRAPH_WEIGHT=0
  hybrid+graph  the same over the store opened with entity_graph=True: single_shot fuses
             its search with the store's walk (seeded by the question's entities and the
             search's best hits)
  planner    the heuristic planner as before issue 32 (graph_weight 0, length_weight
             0.4, mention_weight 2), a whole sift.graphs.asearch episode
  planner+graph  the planner with its defaults: its final list fused with a walk over
             the entity graph of what the episode read (graphs/policies/_plan_graph.py)
  search+graph  (not run by default) the planner with its defaults, every one of its
             searches fused with the store's walk from the query's entities and the
             search's best 3 hits (HarnessConfig.search_graph_weight = --weight; off by
             default)

Every dev set is cut in two by the SHA-1 of the question id (even first byte: the tuning
part, odd: the held-out part); each part is reported separately, so a setting picked on
the tuning part can be checked on questions it never saw. Scores are per document
(a chunk counts for its document; a gold near-duplicate counts as the gold passage).
Gold labels are read only by the scorer.

    python benchmarks/entity_graph_quality.py [--datasets ...] [--limit N] [--part tune|held|all]
    python benchmarks/entity_graph_quality.py --ingest-cost [--rounds 3] [--write-sizes N ...]
        [--beside-busy]

`--ingest-cost` times, in rotating rounds, a fresh ingest of each corpus into a new
SqliteCorpus (the default static embedder) without its entity index, with it
(`entity_graph=True`: the entities found in a worker process beside the writer), and
with it found in the writer's thread (SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS=0, as before the
worker), and a reopen of each: what the index adds to an ingest. `--write-sizes` adds
one write of each many HotpotQA documents into a store that exists, the three ways: what
an ingest request to the service waits for. `--beside-busy` adds what any busy process
beside the ingest costs it on this machine: the plain ingest of HotpotQA alone, beside a
Python loop at `nice` 19, and beside one at `nice` 0 (the floor under any extraction
that runs beside the writer, whatever its speed).
"""

# ruff: noqa: E402  (BLAS thread limits must be set before numpy is imported)
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import asyncio
import hashlib
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sift.entities import (
    EntityGraph,
    EntityGraphConfig,
    build_entity_graph,
    question_entities,
)
from sift.fusion import rrf_scores
from sift.graphs.policies.heuristic import HeuristicPlanner

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "benchmarks"
sys.path.insert(0, str(ROOT / "benchmarks"))
from planner_quality import CACHE, build_store, embedder_name, gold_sets, load

DATASETS = ("hotpotqa", "musique", "2wikimultihopqa")
SYSTEMS = (
    "bm25",
    "walk",
    "bm25+walk",
    "hybrid",
    "hybrid+graph",
    "planner",
    "planner+graph",
    "search+graph",
)
DEFAULT_SYSTEMS = SYSTEMS[:7]


def part_of(question_id: str) -> str:
    """The fixed half a question belongs to: by the SHA-1 of its id."""
    return "tune" if hashlib.sha1(question_id.encode()).digest()[0] % 2 == 0 else "held"


@dataclass
class Scores:
    all_gold: list[float] = field(default_factory=list)
    recall5: list[float] = field(default_factory=list)
    recall10: list[float] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)

    def add(self, q: dict, docs: list[str], ms: float) -> None:
        ranked = list(dict.fromkeys(docs))
        golds = gold_sets(q)
        top5, top10 = set(ranked[:5]), set(ranked[:10])
        self.all_gold.append(float(all(g & top10 for g in golds)))
        self.recall5.append(sum(bool(g & top5) for g in golds) / len(golds))
        self.recall10.append(sum(bool(g & top10) for g in golds) / len(golds))
        self.ms.append(ms)


def rrf(lists: list[tuple[float, list[str]]], k: int = 60) -> list[str]:
    scores = rrf_scores(lists, k)
    return sorted(scores, key=lambda key: -scores[key])


def store_graph(store: Any, rows: list[dict], config: EntityGraphConfig) -> EntityGraph:
    passages = []
    for row in rows:
        for chunk in store.read(row["id"]):
            passages.append((chunk.chunk_id, chunk.title, chunk.text))
    return build_entity_graph(passages, config.limits())


async def run(
    name: str,
    args: argparse.Namespace,
    config: EntityGraphConfig,
    progress: Progress,
) -> dict[str, dict[str, Scores]]:
    from sift.graphs import HarnessConfig, asearch, single_shot

    rows, questions = load(name)
    if args.part != "all":
        questions = [q for q in questions if part_of(q["id"]) == args.part]
    questions = questions[: args.limit] if args.limit else questions
    store = build_store(name, rows, embedder_name(), progress)
    if {"hybrid", "hybrid+graph", "search+graph"} & set(args.systems):
        # Reopened keeping the entity graph (extracted on the first open, then read back);
        # only single shot's hybrid+graph and the searches of search+graph read it.
        from sift.integrations.stores.sqlite import SqliteCorpus

        store.close()
        store = SqliteCorpus(CACHE / f"{name}-{embedder_name()}.sqlite", entity_graph=True)
    t0 = time.perf_counter()
    graph = store_graph(store, rows, config)
    progress.console.print(
        f"{name}: graph of {len(graph)} chunks, {len(graph.entity_keys)} entities, "
        f"{len(graph.chunk_entities)} edges in {time.perf_counter() - t0:.1f} s"
    )
    from sift.graphs.policies.heuristic import HeuristicPlannerConfig

    # The planner as it was before issue 32: no graph, and the ranking weights it had.
    before = HeuristicPlanner(
        HeuristicPlannerConfig(graph_weight=0.0, length_weight=0.4, mention_weight=2.0)
    )
    planner = HeuristicPlanner()
    searching = HarnessConfig(search_graph_weight=args.weight)
    limits, walk_limits = config.limits(), config.walk_limits()
    out: dict[str, dict[str, Scores]] = {}
    task = progress.add_task(name, total=len(questions))
    systems = args.systems
    try:
        for number, q in enumerate(questions):
            part = part_of(q["id"])
            per = out.setdefault(part, {s: Scores() for s in systems})
            # Single shot is the search alone unless a system asks for the graph.
            _set_env("SIFT_SINGLE_SHOT_GRAPH_WEIGHT", "0")
            t = time.perf_counter()
            single = single_shot(q["question"], store, top_k=10, mode="bm25")
            bm25_ms = (time.perf_counter() - t) * 1000
            bm25_chunks = [e.chunk_id for e in single.evidence]
            if "bm25" in systems:
                per["bm25"].add(q, [e.doc_id for e in single.evidence], bm25_ms)
            ents = question_entities(q["question"], limits)
            if "walk" in systems:
                t = time.perf_counter()
                walked = graph.walk(ents, limits=walk_limits, k=10)
                per["walk"].add(q, [c.rsplit("_", 1)[0] for c, _ in walked.chunks], _ms(t))
            if "bm25+walk" in systems:
                t = time.perf_counter()
                walked = graph.walk(ents, bm25_chunks[: args.seed_chunks], limits=walk_limits, k=10)
                fused = rrf([(1.0, bm25_chunks), (args.weight, [c for c, _ in walked.chunks])])
                per["bm25+walk"].add(q, [c.rsplit("_", 1)[0] for c in fused], _ms(t) + bm25_ms)
            for system, weight in (("hybrid", "0"), ("hybrid+graph", None)):
                if system not in systems:
                    continue
                _set_env("SIFT_SINGLE_SHOT_GRAPH_WEIGHT", weight)
                t = time.perf_counter()
                shot = single_shot(q["question"], store, top_k=30)
                per[system].add(q, [e.doc_id for e in shot.evidence], _ms(t))
            _set_env("SIFT_SINGLE_SHOT_GRAPH_WEIGHT", "0")
            runs = (
                ("planner", before, None),
                ("planner+graph", planner, None),
                ("search+graph", planner, searching),
            )
            # Alternate which system goes first, so that neither always runs on a warm
            # cache (timings are compared within this run).
            if number % 2:
                runs = runs[::-1]
            for system, policy, harness in runs:
                if system not in systems:
                    continue
                t = time.perf_counter()
                result = await asearch(q["question"], store, policy=policy, config=harness)
                per[system].add(q, [e.doc_id for e in result.evidence], _ms(t))
            progress.advance(task)
    finally:
        store.close()
    return out


def _set_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))] if s else 0.0


HEADER = (
    "| dataset | part | questions | system | all-gold@10 | recall@5 | recall@10 | p50 ms |\n"
    "|---|---|---|---|---|---|---|---|"
)


def table(name: str, out: dict[str, dict[str, Scores]]) -> list[str]:
    lines = []
    m = statistics.fmean
    both: dict[str, Scores] = {}
    for part in ("tune", "held"):
        for system, s in out.get(part, {}).items():
            joined = both.setdefault(system, Scores())
            for mine, theirs in zip(vars(joined).values(), vars(s).values(), strict=True):
                mine += theirs
    for part, systems in (
        ("tune", out.get("tune", {})),
        ("held", out.get("held", {})),
        ("all", both),
    ):
        for system, s in systems.items():
            if not s.all_gold:
                continue
            lines.append(
                f"| {name} | {part} | {len(s.all_gold)} | {system} | {m(s.all_gold):.3f} | "
                f"{m(s.recall5):.3f} | {m(s.recall10):.3f} | {pct(s.ms, 50):.1f} |"
            )
    return lines


# The variant of the ingest-cost runs whose entities are found in the writer's thread.
_INLINE = "graph, writer's thread"


def _rotated(variants: tuple[str, ...], round_: int) -> tuple[str, ...]:
    """`variants` in this round's order: each takes its turn at running first."""
    at = round_ % len(variants)
    return variants[at:] + variants[:at]


def _documents(name: str) -> list[Any]:
    """The dataset's corpus as `Document`s."""
    from sift.types import Document

    rows, _ = load(name)
    return [Document(id=r["id"], title=r["title"], text=r["text"]) for r in rows]


def ingest_cost(datasets: list[str], rounds: int) -> list[str]:
    """A fresh ingest of each corpus into a new SqliteCorpus without the entity index,
    with it (its worker process), and with it in the writer's thread, and a reopen of
    each store, the order rotated every round: what the entity index adds to the time a
    user waits."""
    import tempfile

    from sift.integrations.stores.sqlite import SqliteCorpus

    variants = ("plain", "graph", _INLINE)
    lines = [
        f"Cores: {os.cpu_count()}. Medians of {rounds} rounds.",
        "",
        "| dataset | passages | ingest s | with the graph s | added | in the writer's thread s "
        "| added | reopen s | reopen with the graph s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in datasets:
        documents = _documents(name)
        times: dict[tuple[str, str], list[float]] = {}
        for round_ in range(rounds):
            for variant in _rotated(variants, round_):
                graph = variant != "plain"
                _set_env("SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS", "0" if variant == _INLINE else None)
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "s"
                    t = time.perf_counter()
                    store = SqliteCorpus(path, embedder=embedder_name(), entity_graph=graph)
                    store.upsert(documents)
                    store.close()
                    times.setdefault((variant, "ingest"), []).append(time.perf_counter() - t)
                    t = time.perf_counter()
                    SqliteCorpus(path, entity_graph=graph).close()
                    times.setdefault((variant, "reopen"), []).append(time.perf_counter() - t)
        _set_env("SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS", None)
        m = {key: statistics.median(values) for key, values in times.items()}
        plain, graph, inline = (m[(v, "ingest")] for v in variants)
        lines.append(
            f"| {name} | {len(documents)} | {plain:.2f} | {graph:.2f} | {graph / plain - 1:+.0%} | "
            f"{inline:.2f} | {inline / plain - 1:+.0%} | "
            f"{m[('plain', 'reopen')]:.2f} | {m[('graph', 'reopen')]:.2f} |"
        )
        print(lines[-1], flush=True)
    return lines


def write_cost(name: str, sizes: list[int], rounds: int) -> list[str]:
    """One write of N documents into a store that exists, without the entity index,
    with it (the worker where the configuration starts one) and with it in the writer's
    thread, rotated every round: what a service's ingest request waits for."""
    import tempfile

    from sift.integrations.stores.sqlite import SqliteCorpus

    documents = _documents(name)
    variants = ("plain", "graph", _INLINE)
    lines = [
        f"One write of N {name} documents into a store of 10. Cores: {os.cpu_count()}. "
        f"Medians of {rounds} rounds.",
        "",
        "| documents | ingest ms | with the graph ms | added | in the writer's thread ms | added |",
        "|---|---|---|---|---|---|",
    ]
    for size in sizes:
        times: dict[str, list[float]] = {}
        for round_ in range(rounds):
            for variant in _rotated(variants, round_):
                _set_env("SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS", "0" if variant == _INLINE else None)
                with tempfile.TemporaryDirectory() as tmp:
                    store = SqliteCorpus(
                        Path(tmp) / "s", embedder=embedder_name(), entity_graph=variant != "plain"
                    )
                    store.upsert(documents[:10])
                    t = time.perf_counter()
                    store.upsert(documents[10 : 10 + size])
                    times.setdefault(variant, []).append(time.perf_counter() - t)
                    store.close()
        _set_env("SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS", None)
        plain, graph, inline = (statistics.median(times[v]) * 1000 for v in variants)
        lines.append(
            f"| {size} | {plain:.0f} | {graph:.0f} | {graph / plain - 1:+.0%} | {inline:.0f} | "
            f"{inline / plain - 1:+.0%} |"
        )
        print(lines[-1], flush=True)
    return lines


_BUSY = "import time\nend = time.time() + 30\nwhile time.time() < end:\n    sum(range(1000))\n"


def beside_busy(name: str, rounds: int) -> list[str]:
    """The plain ingest of `name` alone, beside one busy process at `nice` 19 and beside
    one at `nice` 0, rotated every round: what another process's CPU costs the ingest."""
    import subprocess
    import tempfile

    from sift.integrations.stores.sqlite import SqliteCorpus

    documents = _documents(name)
    variants = ("alone", "beside nice 19", "beside nice 0")
    times: dict[str, list[float]] = {}
    for round_ in range(rounds):
        for variant in _rotated(variants, round_):
            busy = None
            if variant != "alone":
                niceness = "19" if "19" in variant else "0"
                command = ["nice", "-n", niceness, sys.executable, "-c", _BUSY]
                busy = subprocess.Popen(command)
                time.sleep(0.1)  # running before the ingest starts
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    t = time.perf_counter()
                    store = SqliteCorpus(Path(tmp) / "s", embedder=embedder_name())
                    store.upsert(documents)
                    store.close()
                    times.setdefault(variant, []).append(time.perf_counter() - t)
            finally:
                if busy is not None:
                    busy.kill()
                    busy.wait()
    alone = statistics.median(times["alone"])
    lines = [
        f"The plain ingest of {name} beside a busy process. Cores: {os.cpu_count()}. "
        f"Medians of {rounds} rounds.",
        "",
        "| variant | ingest s | added |",
        "|---|---|---|",
    ]
    for variant in variants:
        value = statistics.median(times[variant])
        lines.append(f"| {variant} | {value:.2f} | {value / alone - 1:+.0%} |")
        print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--systems", nargs="*", default=list(DEFAULT_SYSTEMS), choices=SYSTEMS)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--part", choices=("tune", "held", "all"), default="all")
    ap.add_argument("--weight", type=float, default=1.0, help="RRF weight of the walk's list")
    ap.add_argument("--seed-chunks", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--ingest-cost", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--write-sizes",
        type=int,
        nargs="*",
        default=None,
        help="with --ingest-cost: also one write of each many HotpotQA documents",
    )
    ap.add_argument(
        "--beside-busy",
        action="store_true",
        help="with --ingest-cost: also HotpotQA's plain ingest beside a busy process",
    )
    args = ap.parse_args(argv)
    if not DATA.exists():
        print(f"benchmark data not found at {DATA} (../shared)", file=sys.stderr)
        return 2
    if args.ingest_cost:
        lines = ingest_cost(args.datasets, args.rounds)
        if args.write_sizes:
            lines += ["", *write_cost("hotpotqa", args.write_sizes, args.rounds)]
        if args.beside_busy:
            lines += ["", *beside_busy("hotpotqa", args.rounds)]
        text = "\n".join(lines)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
        return 0
    config = EntityGraphConfig()
    lines: list[str] = []
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    ) as progress:
        for name in args.datasets:
            out = asyncio.run(run(name, args, config, progress))
            rows = table(name, out)
            lines += rows
            for row in rows:
                progress.console.print(row)
    text = "\n".join([HEADER, *lines])
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
