"""How fast any ingest with sift's parts could go: the floor under issue 15's item 1.

    python benchmarks/ingest_floor.py [--corpora synth-100k hotpotqa musique 2wikimultihopqa]
        [--rounds 3] [--json FILE] [--markdown FILE]

Item 1 asks the embedded store's ingest for 0.8x of the static embedder's pace alone.
Whatever the store does beside embedding costs CPU, and an ingest can at best spread its
CPU evenly over the cores. So no ingest that embeds every passage, stores its text and
indexes it for BM25 can beat

    ceiling = cores x (embedder alone, wall us a passage) / (the ingest's CPU us a passage)

This script measures, in one fresh interpreter per corpus and round, on the same texts
and in this order:

- the embedder alone: the static embedder, fresh (as the store's is), over each
  passage's "title\\ntext" in batches of 512 (store_speed.py's "embedder alone");
- SQLite alone: the texts into one table of (rowid, text), a transaction per 512, in
  WAL mode with synchronous=NORMAL, as the store commits its batches: the least a
  durable store of the texts can do (the store also keeps documents, vectors and a
  change log);
- tantivy alone: each passage lower-cased and handed to tantivy under its whitespace
  tokenizer (no stemming), one indexing thread and a 64 MB heap as the store's, one
  commit: the least a BM25 index can cost (the store also stems, and indexes titles);
- sift: `SqliteCorpus.upsert` of the same passages (documents made before the clock).

The floor is the sum of the first three's CPU; its ceiling is the best ratio any ingest
with those parts could reach here, and sift's ceiling is the same with sift's CPU. CPU
is the process's (every thread, getrusage), wall time from perf_counter. Rounds repeat
the whole set; the table gives their means, the JSON every run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PARTS = ("embedder alone", "SQLite alone", "tantivy alone", "sift")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _timed(work: Callable[[], None], count: int) -> dict[str, float]:
    """Wall and process CPU of `work`, in us a passage."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    work()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"wall_us": wall / count * 1e6, "cpu_us": cpu / count * 1e6}


def one(corpus: str) -> dict[str, Any]:
    """Every part over one corpus, in this interpreter."""
    sys.path.insert(0, str(HERE))
    import tantivy
    from store_speed import passages

    from sift.integrations.embedders import get_embedder
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    rows = list(passages(corpus))
    texts = [f"{p.get('title', '')}\n{p['text']}" for p in rows]
    documents = [Document.model_validate(p) for p in rows]
    count = len(texts)
    parts: dict[str, dict[str, float]] = {}

    embedder = get_embedder("static")

    def embed() -> None:
        for i in range(0, count, 512):
            embedder.embed(texts[i : i + 512])

    parts["embedder alone"] = _timed(embed, count)
    with tempfile.TemporaryDirectory() as folder:
        conn = sqlite3.connect(Path(folder) / "floor.db", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")

        def store_texts() -> None:
            for i in range(0, count, 512):
                conn.execute("BEGIN")
                conn.executemany(
                    "INSERT INTO chunks (id, text) VALUES (?, ?)",
                    [(i + j, text) for j, text in enumerate(texts[i : i + 512])],
                )
                conn.execute("COMMIT")

        parts["SQLite alone"] = _timed(store_texts, count)
        conn.close()

        builder = tantivy.SchemaBuilder()
        builder.add_unsigned_field("cid", indexed=True, fast=True)
        builder.add_text_field("text", tokenizer_name="floor", index_option="freq")
        schema = builder.build()
        (Path(folder) / "bm25").mkdir()
        index = tantivy.Index(schema, path=str(Path(folder) / "bm25"))
        index.register_tokenizer(
            "floor", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()
        )
        writer = index.writer(heap_size=64_000_000, num_threads=1)

        def index_texts() -> None:
            for cid, text in enumerate(texts):
                doc = tantivy.Document()
                doc.add_unsigned("cid", cid)
                doc.add_text("text", text.lower())
                writer.add_document(doc)
            writer.commit()
            writer.wait_merging_threads()

        parts["tantivy alone"] = _timed(index_texts, count)

        store = SqliteCorpus(Path(folder) / "store", embedder=get_embedder("static"))
        failed: list[Any] = []

        def ingest() -> None:
            failed.extend(store.upsert(documents).failed)

        parts["sift"] = _timed(ingest, count)
        store.close()
    if failed:
        raise SystemExit(f"{len(failed)} passage(s) of {corpus} failed: {failed[:3]}")
    return {"corpus": corpus, "passages": count, "cores": _cores(), "parts": parts}


def _run(corpus: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--one", corpus], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the {corpus} run failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def measure(corpora: list[str], rounds: int) -> list[dict[str, Any]]:
    from rich.progress import Progress

    runs = []
    with Progress() as progress:
        task = progress.add_task("ingest floor", total=rounds * len(corpora))
        for number in range(rounds):
            for corpus in corpora:
                result = _run(corpus)
                result["round"] = number + 1
                runs.append(result)
                progress.advance(task)
    return runs


def summary(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per corpus, the means over rounds, the floor and the ceilings."""
    out = []
    for corpus in dict.fromkeys(r["corpus"] for r in runs):
        mine = [r for r in runs if r["corpus"] == corpus]
        mean = {
            part: {
                key: statistics.mean(r["parts"][part][key] for r in mine)
                for key in ("wall_us", "cpu_us")
            }
            for part in PARTS
        }
        cores = mine[0]["cores"]
        embed_wall = mean["embedder alone"]["wall_us"]
        floor = sum(mean[p]["cpu_us"] for p in ("embedder alone", "SQLite alone", "tantivy alone"))
        out.append(
            {
                "corpus": corpus,
                "rounds": len(mine),
                "cores": cores,
                "mean": mean,
                "floor_cpu_us": floor,
                "floor_ceiling": cores * embed_wall / floor,
                "sift_ratio": embed_wall / mean["sift"]["wall_us"],
                "sift_ceiling": cores * embed_wall / mean["sift"]["cpu_us"],
            }
        )
    return out


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| corpus | embedder alone wall / CPU | SQLite alone CPU | tantivy alone CPU "
        "| floor CPU | floor's ceiling | sift wall / CPU | sift's ratio | sift's ceiling |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        m = row["mean"]
        lines.append(
            f"| {row['corpus']} | {m['embedder alone']['wall_us']:.0f} / "
            f"{m['embedder alone']['cpu_us']:.0f} | {m['SQLite alone']['cpu_us']:.1f} "
            f"| {m['tantivy alone']['cpu_us']:.0f} | {row['floor_cpu_us']:.0f} "
            f"| {row['floor_ceiling']:.2f}x | {m['sift']['wall_us']:.0f} / "
            f"{m['sift']['cpu_us']:.0f} | {row['sift_ratio']:.2f}x | {row['sift_ceiling']:.2f}x |"
        )
    cores = ", ".join(sorted({str(row["cores"]) for row in rows}))
    lines += [
        "",
        f"Figures in us a passage, means of {rows[0]['rounds']} round(s), {cores} core(s). "
        "A ceiling is cores x the embedder's wall time / the CPU: the best ratio to the "
        "embedder alone (issue 15's item 1) an ingest with that CPU could reach.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpora", nargs="+", default=["synth-100k", "hotpotqa", "musique", "2wikimultihopqa"]
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    runs = measure(args.corpora, args.rounds)
    rows = summary(runs)
    text = markdown(rows)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "summary": rows}, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
