"""What the HNSW graph's build settings cost at insertion and give at search: CPU per
inserted vector against recall@10 of the graph's search, beside exact search.

    python benchmarks/hnsw_insertion.py [--data synthetic|real] [--passages 200000]
        [--queries 200] [--grid 48:12 32:12 24:12 16:12 48:12:f16] [--out FILE]

The vectors are store_speed.py's synthetic passages (same generator, same seed), or with
`--data real` the passages of the three English dev corpora (about 20,000), embedded with
the static model; the queries are dev questions of the three English sets, embedded the
same way. Each setting (`expansion_add:connectivity[:dtype]`, the dtype bf16 unless
given) builds a graph as the embedded store does during an ingest (`sqlite/_ann.py`):
two-byte scalars, inner product, batches of 512 added by one thread; then searches it
with the store's `expansion_search` (96).
Recall@10 is the share of the exact top 10 (float32 dot products over every vector) that
the graph's top 10 holds; the score error is how far the cosine the graph reports for each
hit it returns is from the float32 dot product.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from usearch.index import Index

sys.path.insert(0, str(Path(__file__).resolve().parent))

import store_speed

from sift.integrations.embedders import get_embedder

console = Console(stderr=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=["synthetic", "real"], default="synthetic")
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--grid", nargs="+", default=["48:12", "32:12", "24:12", "16:12"])
    parser.add_argument("--search-expansion", type=int, default=96)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    embedder = get_embedder("static")
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,}"),
        TimeElapsedColumn(),
        console=console,
    )
    if args.data == "real":
        real = [p for corpus in store_speed.REAL for p in store_speed.passages(corpus)]
        args.passages = len(real)
        source: Iterator[dict[str, Any]] = iter(real)
    else:
        source = store_speed.synthetic(args.passages)
    vectors = np.empty((args.passages, embedder.dim), dtype=np.float32)
    with progress:
        task = progress.add_task("embedding passages", total=args.passages)
        batch: list[str] = []
        row = 0
        for passage in source:
            batch.append(f"{passage['title']}\n{passage['text']}")
            if len(batch) == 1024:
                vectors[row : row + len(batch)] = embedder.embed(batch)
                row += len(batch)
                progress.advance(task, len(batch))
                batch = []
        if batch:
            vectors[row : row + len(batch)] = embedder.embed(batch)
            progress.advance(task, len(batch))
    queries = np.asarray(embedder.embed(store_speed.questions("synth-1m", args.queries)))
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    keys = np.arange(len(vectors), dtype=np.uint64)
    rows = []
    for setting in args.grid:
        expansion, connectivity, *rest = setting.split(":")
        index = Index(
            ndim=embedder.dim,
            metric="ip",
            dtype=rest[0] if rest else "bf16",
            connectivity=int(connectivity),
            expansion_add=int(expansion),
            expansion_search=args.search_expansion,
        )
        with progress:
            task = progress.add_task(f"inserting, {setting}", total=len(vectors))
            cpu = time.process_time()
            wall = time.perf_counter()
            for start in range(0, len(vectors), 512):
                index.add(keys[start : start + 512], vectors[start : start + 512], threads=1)
                progress.advance(task, min(512, len(vectors) - start))
            cpu = time.process_time() - cpu
            wall = time.perf_counter() - wall
        found = index.search(queries, 10, threads=1)
        recall = float(
            np.mean(
                [
                    len(set(found.keys[i].tolist()) & set(exact[i].tolist())) / 10
                    for i in range(len(queries))
                ]
            )
        )
        # How far the graph's cosine (1 - its distance) is from the float32 dot product,
        # over the hits it returns.
        reported = 1.0 - found.distances.astype(np.float64)
        true = np.einsum("qkd,qd->qk", vectors[found.keys.astype(np.int64)], queries)
        score_error = np.abs(reported - true)
        search_start = time.perf_counter()
        for query in queries:
            index.search(query, 10, threads=1)
        search_ms = 1000 * (time.perf_counter() - search_start) / len(queries)
        rows.append(
            (
                setting,
                1e6 * cpu / len(vectors),
                1e6 * wall / len(vectors),
                recall,
                float(score_error.mean()),
                float(score_error.max()),
                search_ms,
            )
        )
        console.print(rows[-1])
    lines = [
        "# HNSW insertion cost against recall",
        "",
        f"Command: `python benchmarks/hnsw_insertion.py {' '.join(sys.argv[1:])}`",
        f"Machine: {platform.machine()}, Python {platform.python_version()}; "
        f"{args.passages:,} {args.data} passages, {len(queries)} dev questions, "
        f"expansion_search {args.search_expansion}.",
        "",
        "| expansion_add:connectivity[:dtype] | CPU us / insert | wall us / insert "
        "| recall@10 vs exact | score error mean / max | search ms / query |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for setting, cpu_us, wall_us, recall, error_mean, error_max, search_ms in rows:
        lines.append(
            f"| {setting} | {cpu_us:.0f} | {wall_us:.0f} | {recall:.3f} "
            f"| {error_mean:.5f} / {error_max:.5f} | {search_ms:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
