"""How long a `sift` command takes end to end, against `python -c pass` in the same run.

    python benchmarks/cli_startup.py [--runs 20] [--store DIR] [--markdown FILE] [--json FILE]

Each command runs `--runs` times as a child process (after two warm-up runs), the
commands taking turns so that a burst of load on the machine hits them all alike; the
time is wall clock from spawn to exit. The ratio is a command's median over the median
of `python -c pass` (the interpreter's own start-up) measured in the same run, so it
says what sift adds, whatever the machine's speed. The store is built once from the
HotpotQA dev corpus with the static embedder (6,640 passages) unless `--store` names one.
Targets (issue 15): `sift --help` within 0.5 s and a one-shot search within 0.8 s on
an idle machine; the load average is recorded beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks"
QUESTION = "Which film directed by S. Sylvan Simon starred Wallace Beery?"


def _sift() -> list[str]:
    script = Path(sys.executable).parent / "sift"
    if script.exists():
        return [str(script)]
    found = shutil.which("sift")
    return [found] if found else [sys.executable, "-m", "sift.integrations.cli"]


def commands(store: Path) -> dict[str, list[str]]:
    sift = _sift()
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import sift.integrations.cli": [sys.executable, "-c", "import sift.integrations.cli"],
        "sift --help": [*sift, "--help"],
        "sift search --single-shot": [
            *sift,
            "search",
            "--single-shot",
            "--json",
            "--store",
            str(store),
            QUESTION,
        ],
        "sift search (heuristic agent)": [
            *sift,
            "search",
            "--json",
            "--quiet",
            "--store",
            str(store),
            QUESTION,
        ],
    }


def build_store(path: Path) -> None:
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    with open(DATA / "hotpotqa" / "corpus.jsonl", encoding="utf-8") as handle:
        docs = [Document.model_validate(json.loads(line)) for line in handle if line.strip()]
    with SqliteCorpus(path, embedder="static") as store:
        store.upsert(docs)


def measure(cmds: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for round_ in range(runs + 2):
        for name, argv in cmds.items():
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, check=False)
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                sys.exit(f"{name} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
            if round_ >= 2:  # the first two warm the page cache
                times[name].append(elapsed)
    return times


def summary(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    base = statistics.median(times["python -c pass"])
    out = {}
    for name, values in times.items():
        values = sorted(values)
        median = statistics.median(values)
        out[name] = {
            "median_s": median,
            "p90_s": values[min(len(values) - 1, int(len(values) * 0.9))],
            "min_s": values[0],
            "ratio": median / base,
            "over_python_s": median - base,
        }
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| command | median s | p90 s | min s | over `python -c pass` s | ratio |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in result["commands"].items():
        lines.append(
            f"| `{name}` | {row['median_s']:.3f} | {row['p90_s']:.3f} | {row['min_s']:.3f} "
            f"| {row['over_python_s']:.3f} | {row['ratio']:.1f}x |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sift-startup-") as tmp:
        store = args.store
        if store is None:
            store = Path(tmp) / "store"
            build_store(store)
        load_before = os.getloadavg()
        times = measure(commands(store), args.runs)
        load_after = os.getloadavg()
    result = {
        "runs": args.runs,
        "machine": f"{os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}",
        "load_before": load_before,
        "load_after": load_after,
        "commands": summary(times),
        "times": times,
    }
    table = markdown(result)
    print(table)
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}; {result['machine']}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    if args.markdown:
        args.markdown.write_text(table)


if __name__ == "__main__":
    main()
