"""Where an embedded-store ingest spends its time, by function: the writer's thread, its
other threads, and the chunk-and-embed children, sampled with py-spy.

    python benchmarks/ingest_profile.py [--corpus synth-100k] [--passages 100000]
        [--rate 100] [--top 12] [--markdown benchmarks/results/ingest_profile.md]

Runs this script again with `--run` under `py-spy record --subprocesses` (py-spy is in
the dev extra): that process builds the documents (store_speed.py's passages, in a list,
not counted), then ingests them into a new `SqliteCorpus` with the static embedder in one
`upsert`. py-spy samples every thread of it and of its children `--rate` times a second,
leaving out threads blocked on a lock, a pipe or the GIL. Per role, each function's share
of the role's samples: "self" where it is the innermost Python frame (native code it
calls included), "with callees" wherever it is on the stack.
Roles: the writer (the thread in `SqliteCorpus.upsert`), the ingest's other Python
threads (the children's couriers, the HNSW worker), and the children. tantivy's and
usearch's native threads hold no Python frame and are not sampled: store_speed.py's
per-thread CPU gives them.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import store_speed
from rich.console import Console

console = Console(stderr=True)
_LOCATION = re.compile(r" \((.*?):\d+\)$")
ROLES = ("writer", "ingest threads", "children")


def run(corpus: str, passages: int, figures: Path) -> None:
    """The profiled process: one ingest; writes its figures to `figures` as JSON."""
    from itertools import islice

    from sift.integrations.embedders import get_embedder
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    documents = [Document.model_validate(p) for p in islice(store_speed.passages(corpus), passages)]
    with tempfile.TemporaryDirectory() as workdir:
        store = SqliteCorpus(Path(workdir) / "store", embedder=get_embedder("static"))
        before = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        store.upsert(documents)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        store.close()

    def cpu(a: resource.struct_rusage, b: resource.struct_rusage) -> float:
        return a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime

    figures.write_text(
        json.dumps(
            {
                "passages": len(documents),
                "wall_s": wall,
                "process_cpu_s": cpu(after, before),
                "children_cpu_s": cpu(children_after, children),
            }
        ),
        encoding="utf-8",
    )


def frames(stack: str) -> tuple[str, list[str]]:
    """(role or "", the Python frames of one py-spy raw stack, outermost first, as
    `file:function`)."""
    if "_child import serve" in stack:
        role = "children"
    elif "SqliteCorpus.upsert" in stack:
        role = "writer"
    elif "Thread._bootstrap" in stack:
        role = "ingest threads"
    else:
        return "", []  # building the documents, imports: not the ingest
    out = []
    for frame in stack.split(";"):
        match = _LOCATION.search(frame)
        if match is None:
            continue  # "process N:..." headers (a child's command line holds ";" too)
        function = frame[: match.start()]
        out.append(f"{Path(match.group(1)).name}:{function}")
    return role, out


def aggregate(raw: Path) -> dict[str, tuple[int, Counter[str], Counter[str]]]:
    """Per role: (samples, samples by innermost frame, samples with the frame anywhere)."""
    result = {role: (Counter[str](), Counter[str]()) for role in ROLES}
    for line in raw.read_text(encoding="utf-8").splitlines():
        stack, _, count = line.rpartition(" ")
        role, names = frames(stack)
        if not role or not names:
            continue
        own, within = result[role]
        own[names[-1]] += int(count)
        for name in set(names):
            within[name] += int(count)
    # Every sample has one innermost frame: a role's samples are its `own` counts summed.
    return {role: (sum(own.values()), own, within) for role, (own, within) in result.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="synth-100k")
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--run", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run(args.corpus, args.passages, args.run)
        return
    spy = shutil.which("py-spy")
    if spy is None:
        sys.exit("py-spy is not installed: pip install -e '.[dev]'")
    with tempfile.TemporaryDirectory() as tmp:
        raw, measured = Path(tmp) / "raw.txt", Path(tmp) / "figures.json"
        command = [
            *(spy, "record", "--subprocesses", "--format", "raw", "--nonblocking"),
            *("--rate", str(args.rate), "--output", str(raw), "--"),
            *(sys.executable, __file__, "--run", str(measured)),
            *("--corpus", args.corpus, "--passages", str(args.passages)),
        ]
        with console.status(f"ingesting {args.passages:,} {args.corpus} passages under py-spy"):
            done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not raw.exists() or not measured.exists():
            sys.exit(f"the profiled ingest failed ({done.returncode}):\n{done.stderr[-2000:]}")
        figures = json.loads(measured.read_text(encoding="utf-8"))
        roles = aggregate(raw)
    n = figures["passages"]
    everything = sum(roles[role][0] for role in ROLES)

    def share(samples: int, total: int) -> str:
        return f"{100 * samples / total:.1f} %"

    lines = [
        "# Where an ingest spends its time",
        "",
        f"Command: `python benchmarks/ingest_profile.py {' '.join(sys.argv[1:])}`",
        f"Machine: {platform.machine()}, Python {platform.python_version()}; "
        f"{n:,} {args.corpus} passages in {figures['wall_s']:.1f} s "
        f"({figures['wall_s'] / n * 1e6:.0f} us a passage); CPU "
        f"{figures['process_cpu_s'] / n * 1e6:.0f} us a passage in the ingest's process "
        "(native threads included), "
        f"{figures['children_cpu_s'] / n * 1e6:.0f} in its children (getrusage).",
        "",
        "py-spy counts a thread that is ready to run but waiting for a core as busy, so",
        "its samples give shares, not CPU time: the children's shares are of the children's",
        "CPU above; the writer's and the ingest threads' are of the Python part of the",
        "process's CPU (tantivy's and usearch's native threads are not sampled).",
        "",
        "| role | samples | share |",
        "|---|---:|---:|",
        *(
            f"| {role} | {roles[role][0]:,} | {share(roles[role][0], everything)} |"
            for role in ROLES
        ),
    ]
    for role in ROLES:
        total, own, within = roles[role]
        if not total:
            continue
        lines += [
            "",
            f"## {role}",
            "",
            "| function | self | with callees |",
            "|---|---:|---:|",
        ]
        for name, samples in own.most_common(args.top):
            lines.append(f"| `{name}` | {share(samples, total)} | {share(within[name], total)} |")
    text = "\n".join(lines) + "\n"
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
