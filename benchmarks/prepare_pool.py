"""How fast the ingest's chunk-and-embed children go on their own, against the embedder.

    python benchmarks/prepare_pool.py [--corpora synth-100k hotpotqa] [--rounds 2]
        [--markdown benchmarks/results/prepare_pool.md]

The embedded store's ingest chunks and embeds in child processes (`sqlite/_prepare.py`:
one, and a second past 8,192 documents) while its own process writes SQLite, tantivy and
the grep signatures. This measures the children without the writer, through the same
`Preparer` the store uses (`sift.integrations.stores.sqlite.testing.children_pace`):
every batch of 512 documents submitted at once, the children already up (their start-up
is not timed), against the static embedder alone over the same texts (title and text,
as the store embeds them) in this process. Each round measures, in turn: the embedder
alone, one child, two children, the embedder alone again; rates are passages per second
and the ratios are against the mean of the two embedder-alone runs of the round, as this
machine is shared and its pace drifts.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import store_speed
from rich.console import Console

from sift.integrations.embedders import get_embedder
from sift.integrations.stores.sqlite.testing import children_pace

BATCH = 512
console = Console(stderr=True)


def embedder_alone(texts: list[str]) -> float:
    embedder = get_embedder("static")
    start = time.perf_counter()
    for i in range(0, len(texts), BATCH):
        embedder.embed(texts[i : i + BATCH])
    return len(texts) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", nargs="+", default=["synth-100k", "hotpotqa"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for corpus in args.corpora:
        passages = list(itertools.islice(store_speed.passages(corpus), 100_000))
        items = [(f"d{i}", p.get("title", ""), p["text"]) for i, p in enumerate(passages)]
        texts = [f"{title}\n{text}" if title else text for _, title, text in items]
        for round_ in range(1, args.rounds + 1):
            console.print(f"{corpus}, round {round_}")
            before = embedder_alone(texts)
            one = children_pace(get_embedder("static"), items, children=1)
            two = children_pace(get_embedder("static"), items, children=2)
            after = embedder_alone(texts)
            rows.append(
                {
                    "corpus": corpus,
                    "round": round_,
                    "passages": len(items),
                    "before": before,
                    "one": one,
                    "two": two,
                    "after": after,
                }
            )
            alone = (before + after) / 2
            console.print(
                f"  embedder alone {before:,.0f} / {after:,.0f}, one child {one:,.0f} "
                f"({one / alone:.2f}x), two children {two:,.0f} ({two / alone:.2f}x)"
            )
    if args.markdown:
        args.markdown.write_text(markdown(rows, " ".join(sys.argv)))


def markdown(rows: list[dict[str, Any]], command: str) -> str:
    load = os.getloadavg()[0]
    lines = [
        "# The ingest's chunk-and-embed children alone, against the embedder",
        "",
        f"Command: `python {command}`",
        "",
        f"Machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; load average at the end {load:.1f}",
        "",
        "Passages per second. One child and two children chunk and embed (the store's "
        "`Preparer`, batches of 512, children already up, no writer); the embedder alone "
        "only embeds, in this process, before and after them; ratios are against the "
        "mean of the two.",
        "",
        "| corpus | passages | round | embedder alone (before / after) | one child | "
        "two children |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        alone = (r["before"] + r["after"]) / 2
        lines.append(
            f"| {r['corpus']} | {r['passages']:,} | {r['round']} | "
            f"{r['before']:,.0f} / {r['after']:,.0f} | "
            f"{r['one']:,.0f} ({r['one'] / alone:.2f}x) | "
            f"{r['two']:,.0f} ({r['two'] / alone:.2f}x) |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
