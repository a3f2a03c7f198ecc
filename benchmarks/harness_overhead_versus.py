"""Harness overhead per turn of this tree against older trees, as ratios.

Runs `benchmarks/harness_overhead.py` in this tree and in each `--baseline` (a checkout
of older code with its own venv at `<baseline>/.venv`), one after the other, the order
rotated and reversed from run to run so that a change of load during the session falls
on every side alike. Reports each run's event-loop CPU per turn (p50 and mean over the
steady turns) and, per side, the median over the runs and its ratio to the first
baseline. The CPU of the event-loop thread is the harness's own compute; the wall p50 is
printed too, but on a shared machine it measures the load.

    python benchmarks/harness_overhead_versus.py --baseline /tmp/base339
        [--baseline /tmp/basemain ...] [--runs 10] [--turns 40] [--tokens 20000]
        [--embedder static] [--out FILE]

A baseline tree is made with, for example:

    git archive 339cab4 | tar -x -C /tmp/base339
    python3 -m venv /tmp/base339/.venv && /tmp/base339/.venv/bin/pip install -e "/tmp/base339[dev]"

and reads the benchmark data from `<baseline>/../shared/benchmarks` (link it there).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from rich.progress import Progress

HERE = Path(__file__).resolve().parents[1]
ROW = re.compile(
    r"^\| (?P<name>[^|]+?) \| (?P<p50>[\d.]+) \| (?P<p95>[\d.]+) \| (?P<mean>[\d.]+) \|$"
)
EPISODE = re.compile(r"One episode of (\d+) turns, (\d+) tool calls, peak context (\d+) tokens")


def run(tree: Path, python: str, args: argparse.Namespace) -> dict[str, float | str]:
    command = [
        python,
        "benchmarks/harness_overhead.py",
        f"--turns={args.turns}",
        f"--tokens={args.tokens}",
        f"--embedder={args.embedder}",
    ]
    out = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=True).stdout
    found: dict[str, float | str] = {}
    for line in out.splitlines():
        row = ROW.match(line)
        if row and row["name"].startswith("sift harness, CPU"):
            found["cpu_p50"], found["cpu_mean"] = float(row["p50"]), float(row["mean"])
        elif row and row["name"].startswith("sift harness (excl"):
            found["wall_p50"] = float(row["p50"])
    episode = EPISODE.search(out)
    if episode is None or len(found) != 3:
        sys.exit(f"unexpected output from {tree}:\n{out}")
    found["episode"] = ", ".join(episode.groups())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, action="append", required=True)
    parser.add_argument("--runs", type=int, default=10, help="runs per side")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--tokens", type=int, default=20000)
    parser.add_argument("--embedder", default="static")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    sides = {b.name: (b, str(b / ".venv" / "bin" / "python")) for b in args.baseline}
    sides["this tree"] = (HERE, sys.executable)
    names = list(sides)
    results: dict[str, list[dict[str, float | str]]] = {name: [] for name in names}
    with Progress() as progress:
        task = progress.add_task("interleaved runs", total=len(names) * args.runs)
        for i in range(args.runs):
            shift = i % len(names)
            order = names[shift:] + names[:shift]
            for name in reversed(order) if i % 2 else order:
                results[name].append(run(*sides[name], args))
                progress.advance(task)

    def median(name: str, key: str) -> float:
        return statistics.median(float(r[key]) for r in results[name])

    head = "| run | " + " | ".join(f"{n}: CPU p50 | {n}: CPU mean" for n in names) + " |"
    lines = [head, "|---|" + "---|---|" * len(names)]
    for i in range(args.runs):
        cells = " | ".join(
            f"{results[n][i]['cpu_p50']:.2f} | {results[n][i]['cpu_mean']:.2f}" for n in names
        )
        lines.append(f"| {i + 1} | {cells} |")
    first = names[0]
    lines += [
        "",
        "| side | CPU p50 (median) | CPU mean (median) | wall p50 (median) | "
        f"CPU p50 / {first} | CPU mean / {first} |",
        "|---|---|---|---|---|---|",
    ]
    for name in names:
        lines.append(
            f"| {name} | {median(name, 'cpu_p50'):.2f} | {median(name, 'cpu_mean'):.2f} | "
            f"{median(name, 'wall_p50'):.2f} | "
            f"{median(name, 'cpu_p50') / median(first, 'cpu_p50'):.3f} | "
            f"{median(name, 'cpu_mean') / median(first, 'cpu_mean'):.3f} |"
        )
    episodes = {str(r["episode"]) for side in results.values() for r in side}
    lines += [
        "",
        f"Episodes (turns, tool calls, peak tokens): {'; '.join(sorted(episodes))}. "
        f"Load average at the end: {os.getloadavg()[0]:.1f}.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
