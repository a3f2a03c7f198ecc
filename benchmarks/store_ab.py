"""Ingest and query speed of this checkout against another one, on the dev corpora,
alternating the two in fresh interpreters, round after round.

    git worktree add /tmp/before <revision>
    (cd /tmp/before && python setup.py -q build_ext --inplace)   # its C parts, if any
    python benchmarks/store_ab.py --before /tmp/before [--rounds 3] \\
        [--corpora hotpotqa musique 2wikimultihopqa jsquad] [--markdown FILE]

Each run is a fresh interpreter that ingests one corpus (../shared/benchmarks) into a new
embedded store with the static embedder, the documents made before the clock starts,
then asks the corpus's questions (up to `--queries`, after 10 to warm up) in each search
mode. "before" runs with the other checkout's `sift` first on PYTHONPATH, and each run
says which `sift` it imported, so the two sides cannot be the same code. The machine is
shared and its load moves a run by tens of percent, so only the means of alternated
rounds are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / ".." / "shared" / "benchmarks"
CORPORA = ("hotpotqa", "musique", "2wikimultihopqa", "jsquad")
MODES = ("bm25", "dense", "hybrid")
WARMUP = 10


def one(corpus: str, queries: int) -> dict[str, Any]:
    """One ingest of `corpus` and its queries, in this interpreter."""
    import sift
    from sift.integrations.embedders import get_embedder
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    with (DATA / corpus / "corpus.jsonl").open(encoding="utf-8") as lines:
        documents = [Document.model_validate(json.loads(line)) for line in lines]
    with (DATA / corpus / "questions.jsonl").open(encoding="utf-8") as lines:
        questions = [json.loads(line)["question"] for line in lines][: WARMUP + queries]
    result: dict[str, Any] = {"corpus": corpus, "sift": str(Path(sift.__file__).resolve().parent)}
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteCorpus(Path(folder) / "store", embedder=get_embedder("static"))
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        report = store.upsert(documents)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        result.update(
            passages=len(documents),
            failed=len(report.failed),
            passages_per_s=len(documents) / wall,
            cpu_us_per_passage=cpu / len(documents) * 1e6,
        )
        for mode in MODES:
            times = []
            for number, question in enumerate(questions):
                start = time.perf_counter()
                store.search(question, k=10, mode=mode)  # type: ignore[arg-type]
                if number >= WARMUP:
                    times.append((time.perf_counter() - start) * 1000)
            times.sort()
            result[f"{mode}_p50_ms"] = statistics.median(times)
            result[f"{mode}_p95_ms"] = times[int(0.95 * (len(times) - 1))]
        store.close()
    return result


def farm(checkout: Path, into: Path) -> Path:
    """A `sift` package of symlinks into `checkout`'s root folders (setup.py's mapping)."""
    package = into / "sift"
    package.mkdir(parents=True)
    for item in (checkout / "core").iterdir():
        (package / item.name).symlink_to(item)
    for sub in ("nodes", "graphs", "integrations"):
        (package / sub).symlink_to(checkout / sub)
    return into


def _run(corpus: str, queries: int, pythonpath: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, __file__, "--one", corpus, "--queries", str(queries)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the {corpus} run failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def compare(before: Path, corpora: list[str], rounds: int, queries: int) -> dict[str, Any]:
    from rich.progress import Progress

    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as folder, Progress() as progress:
        before_farm = str(farm(before.resolve(), Path(folder)))
        task = progress.add_task("store A/B", total=rounds * 2 * len(corpora))
        for number in range(rounds):
            # Which side goes first alternates too: a neighbour's load that rises during
            # a round weighs on both sides alike.
            sides = [("before", before_farm), ("after", None)]
            for side, path in sides if number % 2 == 0 else sides[::-1]:
                for corpus in corpora:
                    result = _run(corpus, queries, path)
                    result["round"] = number + 1
                    runs[side].append(result)
                    progress.advance(task)
    sources = {side: sorted({r["sift"] for r in results}) for side, results in runs.items()}
    if set(sources["before"]) & set(sources["after"]):
        raise SystemExit(f"both sides imported the same sift: {sources}")
    return {"before_checkout": str(before), "sources": sources, "runs": runs}


def markdown(result: dict[str, Any]) -> str:
    runs = result["runs"]
    corpora = list(dict.fromkeys(r["corpus"] for r in runs["after"]))
    keys = [("passages_per_s", "ingest passages/s"), ("cpu_us_per_passage", "CPU us a passage")]
    keys += [(f"{mode}_p50_ms", f"{mode} p50 ms") for mode in MODES]
    keys += [(f"{mode}_p95_ms", f"{mode} p95 ms") for mode in MODES]
    lines = ["| corpus | figure | before | after | after / before |", "|---|---|---:|---:|---:|"]
    for corpus in corpora:
        for key, label in keys:
            b = statistics.mean(r[key] for r in runs["before"] if r["corpus"] == corpus)
            a = statistics.mean(r[key] for r in runs["after"] if r["corpus"] == corpus)
            lines.append(f"| {corpus} | {label} | {b:,.2f} | {a:,.2f} | {a / b:.2f}x |")
    rounds = len({r["round"] for r in runs["after"]})
    lines += ["", f"Means of {rounds} alternated rounds; before: {result['sources']['before']}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="the other checkout's root folder")
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.queries)))
        return
    if not DATA.is_dir():
        parser.error(f"needs the dev corpora in {DATA} (../shared/benchmarks)")
    if args.before is None or not (args.before / "core").is_dir():
        parser.error("--before must name a checkout of sift (a folder holding core/)")
    result = compare(args.before, args.corpora, args.rounds, args.queries)
    table = markdown(result)
    print(table)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(table)


if __name__ == "__main__":
    main()
