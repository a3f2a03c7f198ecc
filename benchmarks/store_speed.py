"""Speed and memory of the embedded store against a bm25s + numpy baseline.

    python benchmarks/store_speed.py [--corpora hotpotqa musique 2wikimultihopqa synth-100k
        synth-1m] [--queries 200] [--markdown benchmarks/results/store_speed.md]

For every corpus, two systems index the same passages and answer the same questions:

- sift: `SqliteCorpus` with the static embedder (ingest = chunk + embed + SQLite +
  tantivy + vectors, committed), then `search(mode=bm25|dense|hybrid, k=10)` one query
  at a time, as the harness calls it (the query is embedded inside the call).
- baseline: bm25s (English stopwords and stemming) over title + text, and an exact numpy
  dot product (einsum, single-threaded, as in the store) over the same static vectors;
  hybrid fuses the two top-100 lists with the same relative-score fusion. Indexing time
  covers tokenising, embedding and bm25s.index.

Each (corpus, system) runs in its own child process so that its peak resident memory
(ru_maxrss) is its own. Synthetic corpora are generated, never written to the repo:
passages of 60-140 words drawn with the real corpora's word frequencies, titles of 2-3
words; their queries are the real dev questions. Passages are streamed into the store, so
its peak memory is the store's; the baseline must hold every text to index it.

Latency is wall time per call after 10 warm-up calls, reported as p50/p95 in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks"
REAL = ("hotpotqa", "musique", "2wikimultihopqa")
SYNTHETIC = {"synth-100k": 100_000, "synth-1m": 1_000_000}
MODES = ("bm25", "dense", "hybrid")
K = 10
CANDIDATES = 100
WARMUP = 10

console = Console(stderr=True)


# ----------------------------------------------------------------------------- data


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def questions(corpus: str, limit: int) -> list[str]:
    sets = [corpus] if corpus in REAL else list(REAL)
    out: list[str] = []
    for name in sets:
        out += [q["question"] for q in _read_jsonl(DATA / name / "questions.jsonl")]
    rng = np.random.default_rng(7)
    rng.shuffle(out)
    return out[:limit]


def passages(corpus: str) -> Iterator[dict[str, Any]]:
    if corpus in REAL:
        yield from _read_jsonl(DATA / corpus / "corpus.jsonl")
        return
    yield from synthetic(SYNTHETIC[corpus])


def synthetic(n: int, seed: int = 13) -> Iterator[dict[str, Any]]:
    """n passages whose words follow the real corpora's word frequencies."""
    counts: Counter[str] = Counter()
    for name in REAL:
        for row in _read_jsonl(DATA / name / "corpus.jsonl"):
            counts.update(re.findall(r"[A-Za-z][A-Za-z'-]*|\d+", row["text"]))
    vocab = list(counts)
    freq = np.array(list(counts.values()), dtype=np.float64)
    freq /= freq.sum()
    rng = np.random.default_rng(seed)
    block = 10_000
    for start in range(0, n, block):
        size = min(block, n - start)
        lengths = rng.integers(60, 141, size=size)
        # Word indices, not a string array: the generator must not dwarf the store's memory.
        words = rng.choice(len(vocab), size=int(lengths.sum()), p=freq).tolist()
        titles = rng.choice(len(vocab), size=size * 3, p=freq).tolist()
        cursor = 0
        for i in range(size):
            body = [vocab[w] for w in words[cursor : cursor + lengths[i]]]
            cursor += lengths[i]
            # Sentences of about 15 words, so the text reads like prose to the chunker.
            sentences = [" ".join(body[j : j + 15]) for j in range(0, len(body), 15)]
            title_words = [vocab[w] for w in titles[i * 3 : i * 3 + 2 + (i % 2)]]
            yield {
                "id": f"synth-{start + i}",
                "title": " ".join(w.capitalize() for w in title_words),
                "text": ". ".join(s.capitalize() for s in sentences) + ".",
            }


def corpus_size(corpus: str) -> int:
    if corpus in REAL:
        with open(DATA / corpus / "corpus.jsonl") as handle:
            return sum(1 for line in handle if line.strip())
    return SYNTHETIC[corpus]


# ----------------------------------------------------------------------------- runs


def _latencies(call: Any, queries: list[str], progress: Progress, label: str) -> dict[str, float]:
    for q in queries[:WARMUP]:
        call(q)
    times = []
    task = progress.add_task(label, total=len(queries))
    for q in queries:
        start = time.perf_counter()
        call(q)
        times.append((time.perf_counter() - start) * 1000)
        progress.advance(task)
    progress.remove_task(task)
    times.sort()
    return {
        "p50": statistics.median(times),
        "p95": times[min(len(times) - 1, int(len(times) * 0.95))],
    }


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def run_sift(corpus: str, n_queries: int, workdir: Path) -> dict[str, Any]:
    from sift.integrations.embedders import get_embedder
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    total = corpus_size(corpus)
    qs = questions(corpus, n_queries)
    # The embedder alone on the first 5,000 passages: the ceiling for ingest throughput.
    sample = []
    for p in passages(corpus):
        sample.append(f"{p.get('title', '')}\n{p['text']}")
        if len(sample) >= 5_000:
            break
    embedder = get_embedder("static")
    start = time.perf_counter()
    for i in range(0, len(sample), 512):
        embedder.embed(sample[i : i + 512])
    embed_rate = len(sample) / (time.perf_counter() - start)
    del sample
    with _progress() as progress:
        task = progress.add_task(f"sift index {corpus}", total=total)
        store = SqliteCorpus(workdir / "store", embedder=embedder)
        start = time.perf_counter()
        report = store.upsert(
            (Document.model_validate(p) for p in passages(corpus)),
            on_progress=lambda n: progress.advance(task, n),
        )
        index_s = time.perf_counter() - start
        progress.remove_task(task)
        stats = store.stats()
        result: dict[str, Any] = {
            "passages": total,
            "chunks": stats.chunks,
            "index_s": index_s,
            "passages_per_s": total / index_s,
            "failed": len(report.failed),
            "embed_only_per_s": embed_rate,
            "vector_index": stats.extra["vector_index"],
        }
        store.close()
        # Queries on a freshly opened store, as a CLI or server would see it.
        start = time.perf_counter()
        store = SqliteCorpus(workdir / "store")
        result["open_s"] = time.perf_counter() - start
        for mode in MODES:
            result[mode] = _latencies(
                lambda q, m=mode: store.search(q, k=K, mode=m),
                qs,
                progress,
                f"sift {mode} {corpus}",
            )
        store.close()
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def run_baseline(corpus: str, n_queries: int, workdir: Path) -> dict[str, Any]:
    import bm25s
    import Stemmer

    from sift.integrations.embedders import get_embedder
    from sift.integrations.stores.fusion import fuse

    embedder = get_embedder("static")
    stemmer = Stemmer.Stemmer("english")
    total = corpus_size(corpus)
    qs = questions(corpus, n_queries)
    with _progress() as progress:
        task = progress.add_task(f"baseline index {corpus}", total=total)
        start = time.perf_counter()
        texts: list[str] = []
        blocks: list[np.ndarray] = []
        pending: list[str] = []
        for p in passages(corpus):
            text = f"{p.get('title', '')}\n{p['text']}"
            texts.append(text)
            pending.append(text)
            if len(pending) >= 4096:
                blocks.append(embedder.embed(pending).astype(np.float32))
                progress.advance(task, len(pending))
                pending = []
        if pending:
            blocks.append(embedder.embed(pending).astype(np.float32))
            progress.advance(task, len(pending))
        matrix = np.vstack(blocks)
        del blocks
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        index_s = time.perf_counter() - start
        del texts, tokens
        progress.remove_task(task)

        def bm25(q: str, n: int = K) -> list[tuple[int, float]]:
            qt = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
            ids, scores = retriever.retrieve(qt, k=n, show_progress=False, n_threads=1)
            return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

        def dense(q: str, n: int = K) -> list[tuple[int, float]]:
            vec = embedder.embed([q])[0].astype(np.float32)
            # The same single-threaded kernel as the store: BLAS's threaded matvec stalls
            # on a busy machine, which would measure the scheduler, not the search.
            scores = np.einsum("ij,j->i", matrix, vec)
            top = np.argpartition(-scores, n - 1)[:n]
            top = top[np.argsort(-scores[top])]
            return [(int(i), float(scores[i])) for i in top]

        def hybrid(q: str) -> list[tuple[Any, float]]:
            return fuse("relative_score", dense(q, CANDIDATES), bm25(q, CANDIDATES), 0.5)[:K]

        result: dict[str, Any] = {
            "passages": total,
            "chunks": total,
            "index_s": index_s,
            "passages_per_s": total / index_s,
        }
        for mode, call in (("bm25", bm25), ("dense", dense), ("hybrid", hybrid)):
            result[mode] = _latencies(call, qs, progress, f"baseline {mode} {corpus}")
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def child(corpus: str, system: str, n_queries: int) -> None:
    with tempfile.TemporaryDirectory(prefix="sift-bench-") as tmp:
        run = run_sift if system == "sift" else run_baseline
        result = run(corpus, n_queries, Path(tmp))
    print(json.dumps(result))


# ----------------------------------------------------------------------------- report


def machine() -> str:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; load average at start {load:.1f}"
    )


def markdown(results: dict[str, dict[str, dict[str, Any]]], command: str, info: str) -> str:
    lines = [
        "# Store speed: sift's SqliteCorpus against bm25s + numpy",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {info}",
        "",
        "Latency is one `search(k=10)` call (query embedding included), p50 / p95 in ms. "
        "Ratio is sift p50 / baseline p50. Index throughput is end-to-end passages/s "
        "(chunk, embed with the static model, store, commit). Peak memory is the "
        "child process's maximum resident set.",
        "",
        "| corpus | chunks | system | index passages/s | bm25 p50/p95 | dense p50/p95 "
        "| hybrid p50/p95 | hybrid ratio | peak RSS MB | embedder alone passages/s |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus, systems in results.items():
        base = systems.get("baseline")
        for system, r in systems.items():
            if "error" in r:
                lines.append(f"| {corpus} | | {system} | failed: {r['error']} | | | | | | |")
                continue
            ratio = ""
            if system == "sift" and base and "hybrid" in base:
                ratio = f"{r['hybrid']['p50'] / base['hybrid']['p50']:.2f}x"
            label = system if system != "sift" else f"sift ({r.get('vector_index', '')})"
            lines.append(
                f"| {corpus} | {r['chunks']:,} | {label} | {r['passages_per_s']:,.0f} | "
                + " | ".join(f"{r[m]['p50']:.1f} / {r[m]['p95']:.1f}" for m in MODES)
                + f" | {ratio} | {r['peak_rss_mb']:,.0f} | "
                + (f"{r['embed_only_per_s']:,.0f} |" if "embed_only_per_s" in r else " |")
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", nargs="+", default=[*REAL, "synth-100k", "synth-1m"])
    parser.add_argument("--systems", nargs="+", default=["sift", "baseline"])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", nargs=2, metavar=("CORPUS", "SYSTEM"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.queries)
        return
    if not DATA.exists():
        sys.exit(f"benchmark data not found at {DATA}")
    unknown = set(args.corpora) - set(REAL) - set(SYNTHETIC)
    if unknown:
        sys.exit(f"unknown corpora {sorted(unknown)}; valid: {[*REAL, *SYNTHETIC]}")
    info = machine()
    command = "python benchmarks/store_speed.py " + " ".join(sys.argv[1:])
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for corpus in args.corpora:
        for system in args.systems:
            console.print(f"[bold]{corpus}[/] / {system}")
            argv = [sys.executable, __file__, "--child", corpus, system]
            proc = subprocess.run(
                [*argv, "--queries", str(args.queries)],
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                result = json.loads(proc.stdout.strip().splitlines()[-1])
            except (IndexError, ValueError):
                result = {"error": f"exit code {proc.returncode}"}
            results.setdefault(corpus, {})[system] = result
            if args.json:
                args.json.write_text(json.dumps(results, indent=2))
            if args.markdown:
                args.markdown.write_text(markdown(results, command, info))
    table = Table(title="store speed")
    for col in ("corpus", "system", "passages/s", *(f"{m} p50" for m in MODES), "RSS MB"):
        table.add_column(col)
    for corpus, systems in results.items():
        for system, r in systems.items():
            if "error" in r:
                table.add_row(corpus, system, r["error"])
                continue
            table.add_row(
                corpus,
                system,
                f"{r['passages_per_s']:,.0f}",
                *(f"{r[m]['p50']:.1f}" for m in MODES),
                f"{r['peak_rss_mb']:,.0f}",
            )
    console.print(table)


if __name__ == "__main__":
    main()
