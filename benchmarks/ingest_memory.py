"""Peak memory of an embedded-store ingest alone: synthetic passages streamed into a new
`SqliteCorpus` with the static embedder, nothing else in the process.

    python benchmarks/ingest_memory.py [--passages 1000000]

store_speed.py's peak RSS covers its whole child process: the embedder-alone measurement
before the ingest (200,000 texts held and embedded in the same process) and the queries
after it. This is the ingest's own: the process's resident set sampled every 0.5 s and
`ru_maxrss`, for this process and, separately, for the largest child process that
chunks and embeds; and the peak of this process and its children's resident sets summed,
sampled the same way (a long ingest has two children when the embedder holds the GIL;
with the static embedder's C part it has none). The passages are store_speed.py's
synthetic ones (same generator, same seed).
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import store_speed

from sift.integrations.embedders import get_embedder
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document


def rss_mb(pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read())[1]) // 1024  # type: ignore[index]


def children_rss_mb() -> int:
    """The resident sets of this process's child processes (a long ingest has two
    chunk-and-embed children), summed."""
    total = 0
    for task in Path("/proc/self/task").iterdir():
        try:
            pids = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in pids:
            try:
                total += rss_mb(pid)
            except (OSError, TypeError):
                continue  # ended between the two reads
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=1_000_000)
    args = parser.parse_args()
    peak = [0, 0]  # this process; this process and its children together

    def watch() -> None:
        while True:
            own = rss_mb()
            peak[0] = max(peak[0], own)
            peak[1] = max(peak[1], own + children_rss_mb())
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="sift-ingest-memory-") as tmp:
        store = SqliteCorpus(Path(tmp) / "store", embedder=get_embedder("static"))
        before = rss_mb()
        start = time.perf_counter()
        report = store.upsert(
            Document.model_validate(p) for p in store_speed.synthetic(args.passages)
        )
        seconds = time.perf_counter() - start
        after = rss_mb()
        store.close()
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    print(
        f"{report.added:,} passages in {seconds:.0f} s ({args.passages / seconds:,.0f}/s); "
        f"RSS before {before} MB, after {after} MB, sampled peak {peak[0]} MB, "
        f"with the chunk-and-embed children {peak[1]} MB; "
        f"ru_maxrss {own} MB, largest child {child} MB"
    )


if __name__ == "__main__":
    main()
