"""The HTTP service under load, and under kill -9: issue 14 items 1, 2, 3 and 8, issue 42
item 7.

Load: `sift serve` (a subprocess, defaults except the ones printed) serves the HotpotQA
corpus as two collections over one store: `hotpotqa` (agentic) and `hotpotqa-quick`
(single-shot). Clients on loopback loop over four kinds of request in turn: /retrieval
agentic, /retrieval single-shot, /v1/search JSON (agentic) and /v1/search as server-sent
events, each with a HotpotQA dev question and a 4 s deadline. A 429 is honoured: the
client waits its Retry-After. A prober in a process of its own asks /healthz every 100 ms
(and measures how late it wakes from its own sleeps: the machine's scheduling delay).
First a warm-up (`--warmup-seconds`, not reported) at the highest level, so that "RSS
growth after warm-up" compares a warmed server with itself. Then `--rounds` rounds: one
sequential client (the baseline, same mix), then 10, 50 and 200 concurrent clients, each
for its share of `--baseline-seconds` / `--seconds`; each level's throughput is compared
with the sequential client's over the same rounds (and round by round), so that other work
on a shared machine weighs on both alike. Reported per level: requests, status counts,
connection errors, p50/p95/p99 per kind (answered requests), answers past deadline +
0.5 s, /healthz latency, RSS of the server (with its search processes) before and after,
successful requests per second against the sequential client, the load average, and
where the CPU went (the service's process, its search processes, the load generator, the
rest of the machine).

Faults: `--kills` rounds of: start `sift serve` on a fresh or existing store, ingest batches
of 20 documents over HTTP from a client, kill -9 the server at a random moment, restart it
on the same store. At the end every acknowledged document must be present and whole, no
document half-written (each stored document equals one that was sent), and SQLite's
`PRAGMA integrity_check` says ok.

Targets: zero 5xx and zero connection errors at every level; admitted requests within
deadline + 0.5 s; /healthz p99 under 50 ms at 200 clients; RSS growth under 10 % after
warm-up; throughput at 10 and 50 clients at least 1.5x the sequential client's on 2 cores
(issue 42 item 7).

    python benchmarks/http_load.py [--seconds 60] [--levels 10,50,200] [--kills 10]
        [--warmup-seconds 20] [--rounds 4] [--search-processes N]
        [--out benchmarks/results/http_load.md]

`--search-processes` sets `SIFT_SERVER_SEARCH_PROCESSES` (0: searches on the service's
worker threads); by default the server chooses (one per core up to max_concurrency).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "benchmarks" / "hotpotqa"
KEY = "load-benchmark-key-0123"
DEADLINE_S = 4.0
GRACE_S = 0.5
KINDS = ("retrieval_agentic", "retrieval_single_shot", "search_json", "search_sse")


# --------------------------------------------------------------------------- the server


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    log: list[str] = field(default_factory=list)

    def rss_mib(self) -> float:
        """The resident memory of the server and every process it started (its search
        processes and multiprocessing's resource tracker), summed: shared pages count
        once per process, so this overstates what the machine gives them."""
        return sum(_rss_kib(pid) for pid in _tree(self.process.pid)) / 1024

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        self.process.wait(timeout=60)


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds `pid` has used (0 once it has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


_TICKS = os.sysconf("SC_CLK_TCK")


def _machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (every process, every core)."""
    first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = [int(x) for x in first]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return (sum(ticks[:8]) - idle) / _TICKS


def cpu_by_role(server: Server) -> dict[str, float]:
    """CPU seconds so far of the service's own process, its search processes (every
    descendant), this load generator, and the whole machine."""
    tree = _tree(server.process.pid)
    times = os.times()
    return {
        "service": _cpu_s(server.process.pid),
        "search processes": sum(_cpu_s(pid) for pid in tree[1:]),
        "load generator": times.user + times.system,
        "machine": _machine_busy_s(),
    }


def _rss_kib(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0  # it ended meanwhile
    found = re.search(r"VmRSS:\s+(\d+)", status)
    return int(found[1]) if found else 0


def _tree(root: int) -> list[int]:
    """`root` and its descendants, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The fields after the command (in parentheses, which may hold spaces).
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry.name)] = int(fields[1])
    found, todo = [root], [root]
    while todo:
        pid = todo.pop()
        children = [child for child, parent in parents.items() if parent == pid]
        found += children
        todo += children
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(store: Path, collections: Path | None, env: dict[str, str]) -> Server:
    port = _free_port()
    command = [
        sys.executable,
        "-c",
        "from sift.integrations.cli import main; main()",
        "serve",
        "--port",
        str(port),
        "--store",
        str(store),
        "--log-level",
        "warning",
    ]
    if collections is not None:
        command += ["--collections", str(collections)]
    process = subprocess.Popen(
        command,
        env={**os.environ, "SIFT_SERVER_API_KEYS": KEY, **env},
        stderr=subprocess.PIPE,
        text=True,
    )
    log: list[str] = []
    # Keep draining stderr so the server never blocks on a full pipe.
    stderr = process.stderr
    assert stderr is not None
    threading.Thread(target=lambda: log.extend(stderr), daemon=True).start()
    server = Server(process, f"http://127.0.0.1:{port}", log)
    end = time.monotonic() + 300
    with httpx.Client(base_url=server.url, timeout=30) as client:
        while True:
            if process.poll() is not None:
                raise RuntimeError("sift serve ended:\n" + "".join(log))
            try:
                if client.get("/readyz").status_code == 200:
                    return server
            except httpx.HTTPError:
                pass
            if time.monotonic() > end:
                raise RuntimeError("never ready:\n" + "".join(log))
            time.sleep(0.1)


# --------------------------------------------------------------------------- load


@dataclass
class Level:
    clients: int
    seconds: float
    statuses: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    # Each 5xx answer's error_code, and each stream that ended in a `sift.error` event.
    codes: Counter[str] = field(default_factory=Counter)
    late: int = 0
    admitted: int = 0
    degraded: int = 0
    health: list[float] = field(default_factory=list)
    health_errors: int = 0
    # The prober's own wake-up delays (the machine's scheduling, not the service).
    wake_delays: list[float] = field(default_factory=list)
    rss_before: float = 0.0
    rss_after: float = 0.0
    load_before: float = 0.0
    load_after: float = 0.0
    # CPU seconds used during the level, by role (`cpu_by_role`).
    cpu: dict[str, float] = field(default_factory=dict)
    # Seconds from the first request sent to the last answered, over the rounds.
    wall: float = 0.0
    # Answered requests per second in each round.
    round_rates: list[float] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(sum(c.values()) for c in self.statuses.values()) + sum(self.errors.values())

    @property
    def ok(self) -> int:
        return sum(c[200] for c in self.statuses.values())

    def status_total(self) -> Counter[int]:
        total: Counter[int] = Counter()
        for counts in self.statuses.values():
            total.update(counts)
        return total


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _code(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error_code", response.status_code))
    except ValueError:
        return str(response.status_code)


class StreamError(RuntimeError):
    """A stream that answered 200 and ended in a `sift.error` event (its code)."""


async def _one(client: httpx.AsyncClient, kind: str, question: str) -> tuple[int, bool, str]:
    """One request of `kind`: its status, whether the answer was degraded, and the
    error_code of a 5xx."""
    if kind.startswith("retrieval"):
        collection = "hotpotqa" if kind == "retrieval_agentic" else "hotpotqa-quick"
        body: dict[str, Any] = {
            "knowledge_id": collection,
            "query": question,
            "retrieval_setting": {"top_k": 10, "score_threshold": 0.0},
        }
        response = await client.post("/retrieval", json=body)
        code = _code(response) if response.status_code >= 500 else ""
        return response.status_code, "x-sift-degraded" in response.headers, code
    body = {
        "collection": "hotpotqa",
        "question": question,
        "top_k": 10,
        "deadline_s": DEADLINE_S,
    }
    if kind == "search_json":
        response = await client.post("/v1/search", json=body)
        degraded = response.status_code == 200 and "degraded" in response.json()["flags"]
        return (
            response.status_code,
            degraded,
            _code(response) if response.status_code >= 500 else "",
        )
    async with client.stream(
        "POST", "/v1/search", json=body, headers={"Accept": "text/event-stream"}
    ) as response:
        text = "".join([chunk async for chunk in response.aiter_text()])
    if response.status_code == 200 and "event: sift.result" not in text:
        found = re.search(r'"error_code":\s*(\d+)', text)
        raise StreamError(f"stream ended in error {found.group(1) if found else 'none'}")
    return response.status_code, '"degraded"' in text, ""


def _http_client(url: str) -> httpx.AsyncClient:
    # One TLS context for all: httpx builds one per client otherwise (tens of ms of CPU
    # each, for a plain-HTTP URL), which at 200 clients blocked the generator's loop for
    # seconds at the start of a level, timed as the first requests' latency.
    return httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {KEY}"}, timeout=60, verify=_TLS
    )


_TLS = ssl.create_default_context()


async def _client(
    client: httpx.AsyncClient,
    level: Level,
    questions: list[str],
    start: int,
    until: float,
    retry: bool,
) -> None:
    turn = start
    async with client:
        while time.monotonic() < until:
            kind = KINDS[turn % len(KINDS)]
            question = questions[turn % len(questions)]
            turn += 1
            started = time.monotonic()
            try:
                status, degraded, code = await _one(client, kind, question)
            except StreamError as exc:
                level.errors["StreamError"] += 1
                level.codes[f"stream {str(exc).rsplit(' ', 1)[-1]}"] += 1
                continue
            except (httpx.HTTPError, RuntimeError) as exc:
                level.errors[type(exc).__name__] += 1
                continue
            if code:
                level.codes[f"{status} {code}"] += 1
            took = time.monotonic() - started
            level.statuses[kind][status] += 1
            if status == 200:
                level.latencies[kind].append(took)
                level.admitted += 1
                level.degraded += degraded
                level.late += took > DEADLINE_S + GRACE_S
            elif status == 429 and retry:
                await asyncio.sleep(1.0)


# The /healthz prober runs in a process of its own: in the load generator's event loop its
# timings would include the generator's own scheduling (200 clients parsing answers),
# which is not the server's latency. It keeps one connection, as a health checker does.
_PROBE = """
import http.client, json, sys, time
host, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
until = time.monotonic() + seconds
out = []
conn = http.client.HTTPConnection(host, port, timeout=30)
while time.monotonic() < until:
    started = time.monotonic()
    ok = True
    try:
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        response.read()
        ok = response.status == 200
    except (OSError, http.client.HTTPException):
        ok = False
        conn.close()
        conn = http.client.HTTPConnection(host, port, timeout=30)
    took = time.monotonic() - started
    # How late this process wakes from its sleep: the machine's scheduling delay, which
    # every /healthz timing above includes too (the prober waits for a core as well).
    slept = time.monotonic()
    time.sleep(0.1)
    out.append([took, ok, time.monotonic() - slept - 0.1])
print(json.dumps(out))
"""


async def _prober(url: str, level: Level, seconds: float) -> None:
    where = httpx.URL(url)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _PROBE,
        where.host,
        str(where.port),
        str(seconds),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await process.communicate()
    for took, ok, late in json.loads(out):
        level.health.append(took)
        level.health_errors += not ok
        level.wake_delays.append(late)


async def run_level(
    server: Server,
    clients: int,
    seconds: float,
    questions: list[str],
    into: Level | None = None,
) -> Level:
    """`clients` for `seconds`; added to `into` (a level's earlier rounds) when given."""
    level = into or Level(clients, 0.0)
    if not level.round_rates:  # its first round
        level.rss_before = server.rss_mib()
        level.load_before = os.getloadavg()[0]
    ok_before = level.ok
    # Each round its own questions, the same for every configuration compared.
    seed = clients * 1000 + len(level.round_rates)
    offsets = random.Random(seed).sample(range(len(questions)), clients)
    # Every client is made before the clock starts.
    made = [_http_client(server.url) for _ in range(clients)]
    cpu_before = cpu_by_role(server)
    began = time.monotonic()
    until = began + seconds
    await asyncio.gather(
        _prober(server.url, level, seconds),
        *(_client(made[i], level, questions, offsets[i], until, True) for i in range(clients)),
    )
    cpu_after = cpu_by_role(server)
    # The last requests end after `until`: CPU counts until they have.
    level.wall += time.monotonic() - began
    for role in cpu_before:
        level.cpu[role] = level.cpu.get(role, 0.0) + cpu_after[role] - cpu_before[role]
    level.seconds += seconds
    level.round_rates.append((level.ok - ok_before) / seconds)
    level.rss_after = server.rss_mib()
    level.load_after = os.getloadavg()[0]
    return level


# --------------------------------------------------------------------------- kill -9


def _document(i: int) -> dict[str, str]:
    words = " ".join(f"k{i}x{j}" for j in range(40))
    return {"id": f"kill-{i:05d}", "title": f"Kill {i}", "text": f"document {i}: {words}"}


def run_kills(rounds: int, workdir: Path) -> dict[str, Any]:
    store = workdir / "kill-root"
    acknowledged: dict[str, str] = {}
    sent: dict[str, str] = {}
    rng = random.Random(14)
    next_id = 0
    outcomes = []
    # The service refuses a root that does not exist, and a key that may use every
    # collection may not create one: the rounds' key names the collection they create.
    store.mkdir(parents=True, exist_ok=True)
    for round_number in range(rounds):
        server = start_server(
            store, None, {"SIFT_SERVER_EMBEDDER": "static", "SIFT_SERVER_API_KEYS": f"{KEY}=kill"}
        )
        kill_at = time.monotonic() + rng.uniform(0.3, 2.0)
        acked = failed = 0
        with httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=30
        ) as client:
            while True:
                batch = [_document(next_id + i) for i in range(20)]
                next_id += 20
                sent.update({d["id"]: d["text"] for d in batch})
                if time.monotonic() >= kill_at:
                    # Kill while a batch is in flight: send it, and kill before the answer.
                    pending = subprocess.Popen(
                        [
                            sys.executable,
                            "-c",
                            "import httpx, json, sys; httpx.post(sys.argv[1], json=json.loads("
                            "sys.argv[2]), headers={'Authorization': 'Bearer ' + sys.argv[3]}, "
                            "timeout=30)",
                            f"{server.url}/v1/collections/kill/documents",
                            json.dumps({"documents": batch}),
                            KEY,
                        ],
                        stderr=subprocess.DEVNULL,
                    )
                    time.sleep(rng.uniform(0.0, 0.3))
                    server.process.kill()
                    server.process.wait()
                    pending.wait()
                    break
                try:
                    response = client.post(
                        "/v1/collections/kill/documents", json={"documents": batch}
                    )
                except httpx.HTTPError:
                    failed += 1
                    continue
                if response.status_code == 200:
                    acknowledged.update({d["id"]: d["text"] for d in batch})
                    acked += 1
                else:
                    failed += 1
        outcomes.append({"round": round_number + 1, "batches_acknowledged": acked})
    # Integrity, after the last restart (which replays what the indexes missed).
    server = start_server(store, None, {})
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=60
    ) as client:
        stats = client.get("/v1/collections/kill").json()["stats"]
        probe = client.post(
            "/v1/search",
            json={"collection": "kill", "question": "document 7", "mode": "single_shot"},
        ).status_code
    server.stop()
    db = sqlite3.connect(store / "kill" / "sift.db")
    integrity = db.execute("PRAGMA integrity_check").fetchall()
    stored = dict(
        db.execute(
            "SELECT d.doc_id, group_concat(c.text, '') FROM documents d "
            "JOIN chunks c ON c.doc = d.id GROUP BY d.id ORDER BY d.id"
        ).fetchall()
    )
    counts = dict(
        db.execute(
            "SELECT d.doc_id, d.n_chunks - (SELECT count(*) FROM chunks c WHERE c.doc = d.id) "
            "FROM documents d"
        ).fetchall()
    )
    db.close()
    missing = [k for k in acknowledged if k not in stored]
    changed = [k for k, text in stored.items() if sent.get(k) != text]
    half = [k for k, gap in counts.items() if gap != 0]
    return {
        "rounds": outcomes,
        "acknowledged": len(acknowledged),
        "stored": len(stored),
        "stats_documents": stats["documents"],
        "search_after": probe,
        "missing": missing,
        "not_whole": changed,
        "chunk_count_mismatch": half,
        "integrity": integrity,
    }


# --------------------------------------------------------------------------- report


def report(args: argparse.Namespace, baseline: Level, levels: list[Level], kills: Any) -> str:
    def rate(level: Level) -> float:
        return level.ok / level.seconds

    lines = [
        "# The HTTP service under load and kill -9",
        "",
        f"Command: `python benchmarks/http_load.py --seconds {args.seconds:g} --levels "
        f"{args.levels} --kills {args.kills} --baseline-seconds {args.baseline_seconds:g} "
        f"--warmup-seconds {args.warmup_seconds:g} --rounds {args.rounds}`",
        f"Load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}.",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores shared with other running processes "
        "(the load generator runs on the same cores as the server).",
        "",
        "Server: `sift serve` with its defaults (max_concurrency 4, queue_size 64, "
        "queue_wait_s 2, retrieval deadline 4 s, grace 0.5 s, one search process per core "
        "up to max_concurrency at search_nice 5), static embedder, the HotpotQA "
        "corpus (6,640 passages) as `hotpotqa` (agentic) and `hotpotqa-quick` (single-shot). "
        "Each client loops over /retrieval agentic, /retrieval single-shot, /v1/search JSON "
        "and /v1/search SSE (deadline 4 s) with HotpotQA dev questions, waiting Retry-After "
        "on a 429. A prober in a process of its own asks /healthz every 100 ms and measures "
        "how late it wakes from its own sleeps (the machine's scheduling delay, which its "
        "/healthz timings include as well).",
        "",
        "| clients | s | requests | 200 | 429 | 5xx | other | conn. errors | ok/s | vs 1 client "
        "| each round | past deadline+0.5 s | degraded | /healthz p50 / p99 ms (fail) "
        "| prober wake-up delay p99 ms | RSS MiB before → after | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for level in [baseline, *levels]:
        total = level.status_total()
        five = sum(v for k, v in total.items() if k >= 500)
        other = sum(v for k, v in total.items() if k not in (200, 429) and k < 500)
        lines.append(
            f"| {level.clients}{' (seq.)' if level is baseline else ''} | {level.seconds:g} "
            f"| {level.requests} | {total[200]} | {total[429]} | {five} | {other} "
            f"| {sum(level.errors.values())} | {rate(level):.1f} "
            f"| {rate(level) / rate(baseline):.2f}x | {_each_round(level, baseline)} "
            f"| {level.late} | {level.degraded} "
            f"| {_pct(level.health, 50) * 1000:.1f} / {_pct(level.health, 99) * 1000:.1f} "
            f"({level.health_errors}) | {_pct(level.wake_delays, 99) * 1000:.1f} "
            f"| {level.rss_before:.0f} → {level.rss_after:.0f} "
            f"| {level.load_before:.1f} → {level.load_after:.1f} |"
        )
    lines += [
        "",
        "Latency of answered (200) requests, seconds, p50 / p95 / p99:",
        "",
        "| clients | " + " | ".join(KINDS) + " |",
        "|---|" + "---|" * len(KINDS),
    ]
    for level in [baseline, *levels]:
        cells = []
        for kind in KINDS:
            values = level.latencies.get(kind, [])
            cells.append(
                f"{_pct(values, 50):.3f} / {_pct(values, 95):.3f} / {_pct(values, 99):.3f} "
                f"(n={len(values)})"
            )
        lines.append(f"| {level.clients} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Where the CPU went: cores busy on average during the level (CPU seconds / seconds "
        "from its first request to its last answer) and CPU milliseconds per answered "
        "request, by process: the service's own "
        "process (HTTP, admission, the writer's store), its search processes, this load "
        "generator (200 httpx clients are work too), and the rest of the machine (the "
        "/healthz prober and anything else running):",
        "",
        "| clients | machine | service | search processes | load generator | rest |",
        "|---|---|---|---|---|---|",
    ]
    for level in [baseline, *levels]:
        lines.append(f"| {level.clients} | " + " | ".join(_cpu_cells(level)) + " |")
    warm = baseline.rss_before
    first = levels[0].rss_before if levels else warm
    last = levels[-1].rss_after if levels else baseline.rss_after
    lines += [
        "",
        f"RSS after warm-up ({args.warmup_seconds:.0f} s at the highest level) {warm:.0f} MiB; "
        f"at the end of the last round {last:.0f} MiB: growth "
        f"{100 * (last - warm) / warm:+.1f} % (from the start of the first concurrent "
        f"level, after the first sequential round, {first:.0f} MiB: "
        f"{100 * (last - first) / first:+.1f} %).",
    ]
    errors: Counter[str] = Counter()
    for level in [baseline, *levels]:
        errors.update(level.errors)
    if errors:
        lines.append(f"Connection/protocol errors by type: {dict(errors)}.")
    codes: Counter[str] = Counter()
    for level in [baseline, *levels]:
        codes.update(level.codes)
    if codes:
        lines.append(
            f"5xx answers and streams ended in an error, by error_code: {dict(codes)} "
            "(5040: not even the single-shot fallback finished within deadline + grace)."
        )
    if kills is not None:
        lines += [
            "",
            "## kill -9 during HTTP ingest",
            "",
            f"{args.kills} rounds: start `sift serve`, ingest 20-document batches over HTTP, "
            "kill -9 the server at a random moment (0.3-2 s in, with a batch in flight), "
            "restart on the same store. Then one more start (its open replays what the "
            "derived indexes missed) and the checks, straight from the SQLite file.",
            "",
            f"- batches acknowledged per round: "
            f"{', '.join(str(r['batches_acknowledged']) for r in kills['rounds'])}",
            f"- acknowledged documents: {kills['acknowledged']}; stored: {kills['stored']} "
            f"(the service's stats say {kills['stats_documents']}; a search after restart "
            f"answered {kills['search_after']})",
            f"- acknowledged but missing: {len(kills['missing'])}",
            f"- stored but not whole (text differs from what was sent): "
            f"{len(kills['not_whole'])}; chunk count mismatches: "
            f"{len(kills['chunk_count_mismatch'])}",
            f"- PRAGMA integrity_check: {kills['integrity']}",
        ]
    return "\n".join(lines) + "\n"


def _each_round(level: Level, baseline: Level) -> str:
    """The level's throughput against the sequential client's in each round."""
    return " ".join(
        f"{mine / theirs:.2f}" if theirs else "-"
        for mine, theirs in zip(level.round_rates, baseline.round_rates, strict=False)
    )


def _cpu_roles(level: Level) -> dict[str, float]:
    cpu = dict(level.cpu)
    named = sum(v for k, v in cpu.items() if k != "machine")
    cpu["rest"] = max(cpu.get("machine", 0.0) - named, 0.0)
    return cpu


def _cpu_cells(level: Level) -> list[str]:
    """`cores (ms/ok)` for the machine, then each role and the rest."""
    cpu = _cpu_roles(level)
    ok = max(level.ok, 1)
    return [
        f"{cpu.get(role, 0.0) / max(level.wall, 1e-9):.2f} ({1000 * cpu.get(role, 0.0) / ok:.0f})"
        for role in ("machine", "service", "search processes", "load generator", "rest")
    ]


def build_store(workdir: Path) -> tuple[Path, Path]:
    root = workdir / "collections"
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from sift.integrations.cli import main; main()",
            "index",
            str(DATA / "corpus.jsonl"),
            "--store",
            str(root / "hotpotqa"),
            "--embedder",
            "static",
            "-q",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    collections = workdir / "collections.json"
    collections.write_text(
        json.dumps(
            {
                "collections": {
                    "hotpotqa": {"mode": "agentic"},
                    "hotpotqa-quick": {
                        "location": str(root / "hotpotqa"),
                        "mode": "single_shot",
                    },
                }
            }
        )
    )
    return root, collections


async def main_async(args: argparse.Namespace) -> str:
    questions = [
        json.loads(line)["question"] for line in (DATA / "questions.jsonl").open(encoding="utf-8")
    ]
    with tempfile.TemporaryDirectory(prefix="sift-load-") as tmp:
        workdir = Path(tmp)
        root, collections = build_store(workdir)
        env = {}
        if args.search_processes is not None:
            env["SIFT_SERVER_SEARCH_PROCESSES"] = str(args.search_processes)
        server = start_server(root, collections, env)
        try:
            # A warm-up so that the baseline's RSS is the warmed server's: one client, then
            # (--warmup-seconds) the highest level, so that every worker thread, its
            # event loop and its malloc arena exist before RSS is first read.
            await run_level(server, 1, 5, questions)
            top = max([int(c) for c in args.levels.split(",") if c], default=1)
            if args.warmup_seconds > 0:
                await run_level(server, top, args.warmup_seconds, questions)
            # Rounds: the sequential client, then each level, again and again, so that
            # each ratio compares periods a few seconds apart. On a machine shared with
            # other work, a sequential minute measured before the levels' minutes
            # compared different loads: the same build read 0.95x in one run and 1.60x
            # in the next.
            counts = [int(c) for c in args.levels.split(",") if c]
            baseline = Level(1, 0.0)
            levels = [Level(clients, 0.0) for clients in counts]
            for number in range(args.rounds):
                await run_level(server, 1, args.baseline_seconds / args.rounds, questions, baseline)
                for level in levels:
                    await run_level(
                        server, level.clients, args.seconds / args.rounds, questions, level
                    )
                print(
                    f"round {number + 1}: "
                    + ", ".join(
                        f"{level.clients}: {level.round_rates[-1]:.1f} ok/s"
                        for level in [baseline, *levels]
                    ),
                    file=sys.stderr,
                )
            for level in [baseline, *levels]:
                print(
                    f"{level.clients} clients: {level.ok / level.seconds:.1f} ok/s, "
                    f"{dict(level.status_total())}, errors {dict(level.errors)}, "
                    f"/healthz p99 {_pct(level.health, 99) * 1000:.0f} ms (wake-up delay "
                    f"p99 {_pct(level.wake_delays, 99) * 1000:.0f} ms), cores (ms/ok) "
                    f"{_cpu_cells(level)}",
                    file=sys.stderr,
                )
        finally:
            server.stop()
        kills = run_kills(args.kills, workdir) if args.kills else None
    return report(args, baseline, levels, kills)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--baseline-seconds", type=float, default=60)
    parser.add_argument("--levels", default="10,50,200")
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument(
        "--warmup-seconds",
        type=float,
        default=20,
        help="warm-up at the highest level before the sequential run (0: none)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="the sequential client and the levels take turns this many times",
    )
    parser.add_argument("--search-processes", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    text = asyncio.run(main_async(args))
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
