"""Harness overhead per model turn, excluding the model's and the store's time.

An instant policy (no model) drives the real graph over a real embedded store built from
the HotpotQA benchmark corpus. It searches until the context holds about `--tokens`
estimated tokens, then keeps it there: each turn prunes the oldest chunks and issues three
new parallel searches, so every measured turn renders, counts and budgets a context of
that size. Per model turn the harness time is the wall time between the end of one
`decide()` and the start of the next, minus the time the store spent answering that
turn's calls (the union of their intervals). The policy's own time is outside that gap
by construction.

Baseline, in the same process: serialising the same rendered context to JSON, the least
any harness must do per turn to hand a context to a model server.

Target (issue 4 item 7): p50 <= 10 ms.

    python benchmarks/harness_overhead.py [--turns 60] [--tokens 20000] [--embedder static]
        [--out benchmarks/results/harness_overhead.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from sift.graphs import HarnessConfig, asearch
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Decision, Document, PolicyView, ToolCall

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks" / "hotpotqa"


class TimedCorpus:
    """Delegates to a store and records the (start, end) of every search/grep/read."""

    def __init__(self, inner: SqliteCorpus) -> None:
        self.inner = inner
        self.intervals: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def _timed(self, name: str, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return getattr(self.inner, name)(*args, **kwargs)
        finally:
            with self._lock:
                self.intervals.append((start, time.perf_counter()))

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed("search", *args, **kwargs)

    def grep(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed("grep", *args, **kwargs)

    def read(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed("read", *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class SteadyPolicy:
    """Fills the context to `target` tokens, then prunes the oldest chunks and searches
    again every turn; records when each decision started and ended."""

    def __init__(self, queries: list[str], target: int, turns: int) -> None:
        self.queries = queries
        self.target = target
        self.turns = turns
        self.next_query = 0
        self.spans: list[tuple[float, float, int]] = []
        # Main-thread CPU time at the start and end of each decision.
        self.cpu: list[tuple[float, float]] = []
        self.json_ms: list[float] = []

    def _searches(self) -> list[ToolCall]:
        calls = []
        for _ in range(3):
            query = self.queries[self.next_query % len(self.queries)]
            self.next_query += 1
            calls.append(ToolCall(name="search_corpus", arguments={"query": query}))
        return calls

    async def decide(self, view: PolicyView) -> Decision:
        # The baseline first, so that its time falls inside this decision's span, which
        # the measurement excludes: serialise the rendered context as a client would.
        cpu_began = time.thread_time()
        began = time.perf_counter()
        json.dumps([m.model_dump(exclude_none=True) for m in view.messages])
        self.json_ms.append((time.perf_counter() - began) * 1000)
        if view.turn > self.turns:
            decision = Decision()
        else:
            calls = self._searches()
            if view.tokens_used > self.target - 4500:
                live = [cid for cid, seen in view.seen.items() if not seen.pruned]
                freed, oldest = 0, []
                for cid in live:
                    if view.tokens_used - freed <= self.target - 4500:
                        break
                    oldest.append(cid)
                    freed += view.seen[cid].tokens + 12
                if oldest:
                    calls.insert(0, ToolCall(name="prune_chunks", arguments={"chunk_ids": oldest}))
            decision = Decision(tool_calls=calls)
        self.spans.append((began, time.perf_counter(), view.tokens_used))
        self.cpu.append((cpu_began, time.thread_time()))
        return decision


def load(limit: int | None) -> tuple[list[Document], list[str]]:
    corpus, questions = DATA / "corpus.jsonl", DATA / "questions.jsonl"
    if not corpus.exists():
        sys.exit(f"benchmark data not found at {DATA}; see ../shared/benchmarks/README.md")
    docs = []
    with corpus.open() as fh:
        for line in fh:
            row = json.loads(line)
            docs.append(Document(id=row["id"], title=row.get("title", ""), text=row["text"]))
            if limit and len(docs) >= limit:
                break
    with questions.open() as fh:
        asked = [json.loads(line)["question"] for line in fh]
    return docs, asked


def union_ms(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    inside = sorted((max(a, start), min(b, end)) for a, b in intervals if b > start and a < end)
    total, cursor = 0.0, start
    for a, b in inside:
        a = max(a, cursor)
        if b > a:
            total += b - a
            cursor = b
    return total * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    docs, questions = load(args.docs)
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteCorpus(Path(folder) / "store", embedder=args.embedder)
        began = time.perf_counter()
        store.upsert(docs)
        build_s = time.perf_counter() - began
        timed = TimedCorpus(store)
        policy = SteadyPolicy(questions, args.tokens, args.turns)
        config = HarnessConfig(max_turns=args.turns + 1, max_failed_turns=args.turns)
        began = time.perf_counter()
        result = await asearch(questions[0], timed, policy=policy, config=config)
        episode_s = time.perf_counter() - began
        store.close()
    rows = []
    pairs = zip(policy.spans, policy.spans[1:], policy.cpu, policy.cpu[1:], strict=False)
    for (_, end, _), (start, _, tokens), (_, cpu_end), (cpu_start, _) in pairs:
        gap = (start - end) * 1000
        store_ms = union_ms(timed.intervals, end, start)
        rows.append(
            {
                "tokens": tokens,
                "gap": gap,
                "store": store_ms,
                "harness": gap - store_ms,
                "cpu": (cpu_start - cpu_end) * 1000,
            }
        )
    # Turns whose context is within -15%/+20% of the target (the rejection level, where
    # searches are refused and the store is idle, lies above).
    low, high = args.tokens * 0.85, args.tokens * 1.2
    steady = [r for r in rows if low <= r["tokens"] <= high]
    baseline = [
        ms for ms, (_, _, t) in zip(policy.json_ms, policy.spans, strict=True) if low <= t <= high
    ]
    return {
        "rows": rows,
        "steady": steady,
        "baseline": baseline,
        "result": result,
        "build_s": build_s,
        "episode_s": episode_s,
        "docs": len(docs),
    }


def report(args: argparse.Namespace, data: dict[str, Any]) -> str:
    steady = data["steady"]
    if not steady:
        return "no turn reached the target context size; raise --turns"
    harness = [r["harness"] for r in steady]
    cpu = [r["cpu"] for r in steady]
    store = [r["store"] for r in steady]
    tokens = [r["tokens"] for r in steady]
    base = data["baseline"]
    p50, p95 = percentile(harness, 0.5), percentile(harness, 0.95)
    b50 = percentile(base, 0.5)
    cpu50 = percentile([r["cpu"] for r in steady], 0.5)
    verdict = (
        f"wall-clock p50 {p50:.2f} ms: **{'met' if p50 <= 10 else 'not met'}**; the "
        f"harness's own compute (event-loop CPU) p50 {cpu50:.2f} ms: "
        f"**{'met' if cpu50 <= 10 else 'not met'}**"
    )
    usage = data["result"].usage
    waiting = (
        " here it is dominated by waiting for worker threads to get a CPU (rerun on "
        "an idle machine to separate the two)."
        if p50 > 2 * cpu50
        else " the CPU row shows what the harness itself computes."
    )
    return f"""# Harness overhead per model turn

Command: `python benchmarks/harness_overhead.py --turns {args.turns} --tokens {args.tokens} \
--embedder {args.embedder}`
Machine: {platform.machine()}, Python {platform.python_version()}, {platform.system()}, \
2 cores shared with other running processes.

Store: SqliteCorpus ({args.embedder} embedder) built from {data["docs"]} HotpotQA passages \
in {data["build_s"]:.1f} s. Policy: instant (no model); it keeps the context near \
{args.tokens} tokens by pruning the oldest chunks and issuing three parallel searches per \
turn. One episode of {usage.turns} turns, {usage.tool_calls} tool calls, peak context \
{usage.peak_context_tokens} tokens, {data["episode_s"]:.2f} s wall.

Harness time per model turn = wall time between one `decide()` returning and the next
being called (LangGraph supersteps, call checks, Send fan-out, join, observation rendering,
de-duplication, budget tiers, token counting, the next view), minus the store's time on
that turn's calls (union of their intervals). It includes waiting: for worker threads to
be scheduled and for the GIL, which on a loaded machine dominates. The CPU row is the
event-loop thread's own CPU time over the same span: the harness's compute, unaffected by
load (the store's worker threads are not counted). {len(steady)} turns with contexts of
{min(tokens)}-{max(tokens)} tokens (mean {statistics.mean(tokens):.0f}); load average
at the end of the run: {os.getloadavg()[0]:.1f}.

| per turn | p50 ms | p95 ms | mean ms |
|---|---|---|---|
| sift harness (excl. model and store) | {p50:.2f} | {p95:.2f} | \
{statistics.mean(harness):.2f} |
| sift harness, CPU of the event-loop thread | {percentile(cpu, 0.5):.2f} | \
{percentile(cpu, 0.95):.2f} | {statistics.mean(cpu):.2f} |
| store calls (3 hybrid searches, concurrent) | {percentile(store, 0.5):.2f} | \
{percentile(store, 0.95):.2f} | {statistics.mean(store):.2f} |
| baseline: JSON-serialise the same context | {b50:.2f} | {percentile(base, 0.95):.2f} | \
{statistics.mean(base):.2f} |

sift harness / baseline at p50: {p50 / b50 if b50 else float("nan"):.1f}x.
Target p50 <= 10 ms: {verdict}. The wall-clock figure is the one a user sees;{waiting}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--tokens", type=int, default=20000)
    parser.add_argument("--embedder", default="static")
    parser.add_argument("--docs", type=int, default=None, help="limit corpus documents")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    text = report(args, asyncio.run(measure(args)))
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
