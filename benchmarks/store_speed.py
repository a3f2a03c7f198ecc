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
words; their queries are the real dev questions. The baseline must hold every text to
index it; sift is given its documents in a list (below), except on synth-1m, where they
are streamed into the store, so that its peak memory is the store's (for the ingest's own
peak, see ingest_memory.py).

Latency is wall time per call after 10 warm-up calls, reported as p50/p95 in ms.

sift's ingest is compared with the static embedder alone over the same texts, measured in
the same process before and after the ingest (the issue's "index / embedder" ratio). The
ingest is given its documents already made, as the embedder is given its texts, except on
synth-1m, where they are generated while the store ingests them (35-50 us a passage on
the ingest's main thread).
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
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
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


class _ThreadClock:
    """CPU seconds per thread of this process, read from /proc while it runs (a thread's
    figures vanish when it ends), by thread name: where an ingest spends its time."""

    def __init__(self) -> None:
        self._seen: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bench-clock", daemon=True)

    def _read(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        # Python threads are all "python" to the kernel: their own names are better.
        names = {str(t.native_id): t.name for t in threading.enumerate()}
        for tid in os.listdir("/proc/self/task"):
            try:
                name = names.get(tid) or Path(f"/proc/self/task/{tid}/comm").read_text().strip()
                stat = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            self._seen[f"{name}:{tid}"] = (int(stat[11]) + int(stat[12])) / tick

    def _loop(self) -> None:
        while not self._stop.wait(0.05):
            self._read()

    def __enter__(self) -> _ThreadClock:
        if Path("/proc/self/task").is_dir():
            self._read()
            self._start = dict(self._seen)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join()
            self._read()

    def by_name(self) -> dict[str, float]:
        """CPU seconds spent since entering, summed by thread name (numbers dropped)."""
        out: dict[str, float] = {}
        for key, seconds in self._seen.items():
            spent = seconds - getattr(self, "_start", {}).get(key, 0.0)
            name = re.sub(r"[_-]?\d+$", "", key.rsplit(":", 1)[0])
            if spent > 0:
                out[name] = out.get(name, 0.0) + spent
        return out


def _embed_rate(embedder: Any, texts: list[str]) -> float:
    start = time.perf_counter()
    for i in range(0, len(texts), 512):
        embedder.embed(texts[i : i + 512])
    return len(texts) / (time.perf_counter() - start)


def _grep_patterns(qs: list[str]) -> list[str]:
    """Patterns an agent would grep for: a question's longest word as written, the same
    word case-insensitively with a word class after it, and a two-word phrase."""
    out = []
    for q in qs:
        words = re.findall(r"[A-Za-z][A-Za-z'-]{3,}", q)
        if not words:
            continue
        longest = max(words, key=len)
        out += [re.escape(longest), rf"(?i){re.escape(longest[:5])}\w*"]
        if len(words) >= 2:
            out.append(re.escape(" ".join(words[-2:])))
    return out


def run_sift(corpus: str, n_queries: int, workdir: Path) -> dict[str, Any]:
    from sift.integrations.embedders import get_embedder
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    total = corpus_size(corpus)
    qs = questions(corpus, n_queries)
    load_start = os.getloadavg()[0]
    # The embedder alone over the texts the store embeds (passages fit one chunk), each
    # rate from a fresh embedder as the ingest has: the ceiling for ingest throughput.
    # Measured before and after the ingest (this machine is shared: a neighbour's load
    # moves it by up to 30 % within minutes), and the ingest is compared with their mean.
    # "whole" tokenises every text whole (the embedder before issue 15).
    sample = []
    for p in passages(corpus):
        sample.append(f"{p.get('title', '')}\n{p['text']}")
        if len(sample) >= 200_000:
            break
    embed_before = _embed_rate(get_embedder("static"), sample)
    whole_rate = _embed_rate(get_embedder("static", remember_pieces=False), sample[:20_000])
    # The documents are made before the clock starts, as the embedder's texts are: the
    # ingest is timed, not this script's text generator and JSON parsing (35-50 us a
    # passage on the main thread). synth-1m streams them (a million in memory would
    # be most of its peak RSS), so its ingest also pays for making them.
    materialised = corpus != "synth-1m"
    documents: Iterable[Document] = (Document.model_validate(p) for p in passages(corpus))
    if materialised:
        documents = list(documents)
    with _progress() as progress:
        task = progress.add_task(f"sift index {corpus}", total=total)
        store = SqliteCorpus(workdir / "store", embedder=get_embedder("static"))
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        with _ThreadClock() as clock:
            report = store.upsert(documents, on_progress=lambda n: progress.advance(task, n))
        index_s = time.perf_counter() - start
        self_after = resource.getrusage(resource.RUSAGE_SELF)
        children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        progress.remove_task(task)
        del documents
        embed_after = _embed_rate(get_embedder("static"), sample)
        del sample
        stats = store.stats()

        def cpu(after: Any, before: Any) -> float:
            return float(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)

        result: dict[str, Any] = {
            "passages": total,
            "chunks": stats.chunks,
            "index_s": index_s,
            "passages_per_s": total / index_s,
            "failed": len(report.failed),
            "embed_only_per_s": (embed_before + embed_after) / 2,
            "embed_only_before_after": [embed_before, embed_after],
            "embed_whole_per_s": whole_rate,
            "documents_in_memory": materialised,
            "vector_index": stats.extra["vector_index"],
            "cpu_us_per_passage": {
                "process": cpu(self_after, self_before) / total * 1e6,
                "child process": cpu(children_after, children_before) / total * 1e6,
                **{
                    f"thread {name}": seconds / total * 1e6
                    for name, seconds in sorted(clock.by_name().items(), key=lambda kv: -kv[1])
                    if seconds / total * 1e6 >= 1
                },
            },
            "load_start": load_start,
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
        result["grep"] = _latencies(
            lambda pattern: store.grep(pattern, k=5), _grep_patterns(qs), progress, "sift grep"
        )
        store.close()
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["child_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result["load_end"] = os.getloadavg()[0]
    return result


def run_baseline(corpus: str, n_queries: int, workdir: Path) -> dict[str, Any]:
    import bm25s
    import Stemmer

    from sift.fusion import fuse
    from sift.integrations.embedders import get_embedder

    embedder = get_embedder("static")
    stemmer = Stemmer.Stemmer("english")
    total = corpus_size(corpus)
    qs = questions(corpus, n_queries)
    load_start = os.getloadavg()[0]
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
    result["load_start"], result["load_end"] = load_start, os.getloadavg()[0]
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


def _ms(r: dict[str, Any], key: str) -> str:
    return f"{r[key]['p50']:.1f} / {r[key]['p95']:.1f}" if key in r else ""


def markdown(results: dict[str, dict[str, dict[str, Any]]], command: str, info: str) -> str:
    """Three tables: ingest throughput (with the embedder alone, the ceiling), query
    latency, and where an ingest's CPU time goes."""
    lines = [
        f"Command: `{command}`",
        "",
        f"Machine: {info}",
        "",
        "| corpus | chunks | system | index passages/s "
        "| embedder alone passages/s (before / after the ingest) "
        "| index / embedder | embedder, texts whole | peak RSS MB (child) | load start / end |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus, systems in results.items():
        for system, r in systems.items():
            if "error" in r:
                lines.append(f"| {corpus} | | {system} | failed: {r['error']} | | | | | |")
                continue
            label = system if system != "sift" else f"sift ({r.get('vector_index', '')})"
            embed = r.get("embed_only_per_s")
            child = r.get("child_peak_rss_mb")
            around = r.get("embed_only_before_after")
            embed_cell = f"{embed:,.0f}" if embed else ""
            if around:
                embed_cell += f" ({around[0]:,.0f} / {around[1]:,.0f})"
            lines.append(
                f"| {corpus} | {r['chunks']:,} | {label} | {r['passages_per_s']:,.0f} | "
                + (f"{embed_cell} | {r['passages_per_s'] / embed:.2f}x | " if embed else " | | ")
                + (f"{r['embed_whole_per_s']:,.0f} | " if "embed_whole_per_s" in r else " | ")
                + f"{r['peak_rss_mb']:,.0f}"
                + (f" ({child:,.0f})" if child else "")
                + f" | {r.get('load_start', 0):.1f} / {r.get('load_end', 0):.1f} |"
            )
    lines += [
        "",
        "Latency of one call (the query embedded inside it), p50 / p95 in ms; hybrid ratio "
        "is sift's hybrid p50 over the baseline's; grep is `grep(pattern, k=5)` over "
        "patterns taken from the questions (a word, a case-insensitive prefix, two words).",
        "",
        "| corpus | system | bm25 | dense | hybrid | hybrid ratio | grep |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for corpus, systems in results.items():
        base = systems.get("baseline")
        for system, r in systems.items():
            if "error" in r:
                continue
            ratio = ""
            if system == "sift" and base and "hybrid" in base:
                ratio = f"{r['hybrid']['p50'] / base['hybrid']['p50']:.2f}x"
            lines.append(
                f"| {corpus} | {system} | {_ms(r, 'bm25')} | {_ms(r, 'dense')} | "
                f"{_ms(r, 'hybrid')} | {ratio} | {_ms(r, 'grep')} |"
            )
    lines += [
        "",
        "Where sift's ingest spends CPU, in microseconds per passage: the whole process "
        "(every thread), its child processes (only the entity graph's worker, which these "
        "stores do not keep: 0), and the process's threads by name (MainThread writes "
        "SQLite and feeds the indexes; sift-prepare chunks and embeds; thrd-tantivy-* "
        "index BM25).",
        "",
    ]
    for corpus, systems in results.items():
        r = systems.get("sift", {})
        if "cpu_us_per_passage" in r:
            parts = ", ".join(f"{k} {v:,.0f}" for k, v in r["cpu_us_per_passage"].items())
            lines.append(f"- {corpus}: {parts}")
    return "\n".join(lines) + "\n"


def plot(results: dict[str, dict[str, dict[str, Any]]], path: Path) -> None:
    """Ingest throughput against corpus size: sift, the baseline, the embedder alone."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[int, float]]] = {}
    for systems in results.values():
        for system, r in systems.items():
            if "error" in r:
                continue
            series.setdefault(system, []).append((r["passages"], r["passages_per_s"]))
            if "embed_only_per_s" in r:
                series.setdefault("embedder alone", []).append(
                    (r["passages"], r["embed_only_per_s"])
                )
    fig, ax = plt.subplots(figsize=(7, 4))
    styles = {"sift": "o-", "baseline": "s--", "embedder alone": "^:"}
    for name, points in series.items():
        points.sort()
        ax.plot(*zip(*points, strict=True), styles.get(name, "o-"), label=name)
    ax.set_xscale("log")
    ax.set_xlabel("passages in the corpus")
    ax.set_ylabel("passages indexed per second")
    ax.set_ylim(bottom=0)
    ax.set_title("Ingest throughput (static embedder, 2 cores)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", nargs="+", default=[*REAL, "synth-100k", "synth-1m"])
    parser.add_argument("--systems", nargs="+", default=["sift", "baseline"])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--plot", type=Path, default=None, help="ingest throughput PNG")
    parser.add_argument(
        "--render",
        nargs="+",
        type=Path,
        default=None,
        help="write --markdown/--plot from the --json files of earlier runs (no run)",
    )
    parser.add_argument("--child", nargs=2, metavar=("CORPUS", "SYSTEM"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.queries)
        return
    if args.render:
        merged: dict[str, dict[str, dict[str, Any]]] = {}
        for path in args.render:
            for corpus, systems in json.loads(path.read_text()).items():
                merged.setdefault(corpus, {}).update(systems)
        if args.markdown:
            args.markdown.write_text(markdown(merged, "(rendered from earlier runs)", machine()))
        if args.plot:
            plot(merged, args.plot)
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
    if args.plot:
        plot(results, args.plot)
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
