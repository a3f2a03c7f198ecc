"""Ingest throughput of this checkout against another one, alternating in one session.

    git worktree add /tmp/before <revision>
    (cd /tmp/before && python setup.py -q build_ext --inplace)   # its C parts
    python benchmarks/ingest_ab.py --before /tmp/before \\
        [--corpora synth-100k 2wikimultihopqa hotpotqa] [--rounds 4] \\
        [--json FILE] [--markdown FILE]

This machine is shared: a neighbour's load moves a run by up to 30 % within minutes, so a
change to the ingest is judged by alternating the two checkouts, round after round, and
comparing their means, never by a run against a figure from another hour. Each run is a
fresh interpreter that ingests one corpus into a new embedded store with the static
embedder (the documents made before the clock starts, as in store_speed.py) and reports
passages/s and the process's CPU per passage; "before" runs with the other checkout's
`sift` put first on PYTHONPATH (assembled from its root folders the way .ci/mypy does),
and each run says which `sift` it imported, so the two sides cannot be the same code.
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
REPO = HERE.parent


def _farm(checkout: Path, into: Path) -> Path:
    """A `sift` package of symlinks into `checkout`'s root folders (setup.py's mapping)."""
    package = into / "sift"
    package.mkdir(parents=True)
    for item in (checkout / "core").iterdir():
        (package / item.name).symlink_to(item)
    for sub in ("nodes", "graphs", "integrations"):
        (package / sub).symlink_to(checkout / sub)
    return into


def one(corpus: str) -> dict[str, Any]:
    """One ingest of `corpus`, in this interpreter."""
    sys.path.insert(0, str(HERE))
    from store_speed import passages

    import sift
    from sift.integrations.embedders import get_embedder
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    documents = [Document.model_validate(p) for p in passages(corpus)]
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteCorpus(Path(folder) / "store", embedder=get_embedder("static"))
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        report = store.upsert(documents)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        store.close()
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {
        "corpus": corpus,
        "sift": str(Path(sift.__file__).resolve().parent),
        "passages": len(documents),
        "failed": len(report.failed),
        "passages_per_s": len(documents) / wall,
        "cpu_us_per_passage": cpu / len(documents) * 1e6,
    }


def _run(corpus: str, pythonpath: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, __file__, "--one", corpus],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the {corpus} run failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def compare(before: Path, corpora: list[str], rounds: int) -> dict[str, Any]:
    from rich.progress import Progress

    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as folder, Progress() as progress:
        farm = str(_farm(before.resolve(), Path(folder)))
        task = progress.add_task("ingest A/B", total=rounds * 2 * len(corpora))
        for number in range(rounds):
            for side, path in (("before", farm), ("after", None)):
                for corpus in corpora:
                    result = _run(corpus, path)
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
    lines = [
        "| corpus | before passages/s | after | gain | before CPU us a passage | after | change |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus in corpora:

        def mean(side: str, key: str, corpus: str = corpus) -> float:
            return statistics.mean(r[key] for r in runs[side] if r["corpus"] == corpus)

        rate_b, rate_a = mean("before", "passages_per_s"), mean("after", "passages_per_s")
        cpu_b, cpu_a = mean("before", "cpu_us_per_passage"), mean("after", "cpu_us_per_passage")
        lines.append(
            f"| {corpus} | {rate_b:,.0f} | {rate_a:,.0f} | {rate_a / rate_b:.2f}x "
            f"| {cpu_b:.0f} | {cpu_a:.0f} | {(cpu_a / cpu_b - 1) * 100:+.0f} % |"
        )
    lines += ["", "Each run, passages/s (CPU us a passage):", ""]
    lines.append("| run | " + " | ".join(corpora) + " |")
    lines.append("|---|" + "---:|" * len(corpora))
    for number in sorted({r["round"] for r in runs["after"]}):
        for side in ("before", "after"):
            cells = []
            for corpus in corpora:
                (r,) = [x for x in runs[side] if x["round"] == number and x["corpus"] == corpus]
                cells.append(f"{r['passages_per_s']:,.0f} ({r['cpu_us_per_passage']:.0f})")
            lines.append(f"| {side}, round {number} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="the other checkout's root folder")
    parser.add_argument("--corpora", nargs="+", default=["synth-100k", "2wikimultihopqa"])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    if args.before is None or not (args.before / "core").is_dir():
        parser.error("--before must name a checkout of sift (a folder holding core/)")
    result = compare(args.before, args.corpora, args.rounds)
    table = markdown(result)
    print(table)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(table)


if __name__ == "__main__":
    main()
