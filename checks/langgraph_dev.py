"""Check that `langgraph dev` serves sift from langgraph.json, with the LangGraph SDK.

A check script rather than a test of the suite: the `langgraph-server` extra
(langgraph-cli[inmem], langgraph-sdk) cannot share the dev environment (langgraph-api
pins grpcio and jsonschema-rs against weaviate-client's and schemathesis's ranges), takes
about a minute and a half to install, and the server takes seconds to start. Run it in
a venv of its own:

    python3 -m venv .venv-langgraph && . .venv-langgraph/bin/activate
    pip install -e ".[langgraph-server]"
    python checks/langgraph_dev.py [--out checks/results/langgraph_dev.md]

What it does: indexes the shipped demo corpus (2WikiMultihopQA passages) into a temporary
store; starts `langgraph dev --no-browser --no-reload` on a free loopback port with the
store in SIFT_STORE, CLI analytics, the version check and LangSmith tracing off,
and every HTTP(S) proxy variable pointing at a loopback recorder (an attempt to reach
another host through a client that honours them shows up there instead of leaving; a
probe first proves the recorder catches one). Then, through langgraph-sdk: finds the
`sift` assistant and its input, output and context schemas; runs a two-hop question on a
thread (`runs.wait`) and one with `max_turns=1` as its context; reads the thread's
checkpointed state; streams a run in `custom` mode (sift's events); checks that an input
without a question fails with the graph's own message; and reads the server's log for
refused blocking calls and checkpoint type warnings. Exit status 0 when every check
passes; the results file lists each check and the timings.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from langgraph_sdk import get_client
from rich.console import Console

from sift.integrations.demo import DEFAULT_QUESTION, demo_documents
from sift.integrations.stores.sqlite import SqliteCorpus

ROOT = Path(__file__).resolve().parents[1]
console = Console(stderr=True)


class Recorder:
    """A loopback listener standing in for an HTTP proxy: it records every connection
    (the first line of each request) and answers 502."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.seen: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(4096).split(b"\r\n", 1)[0]
                except OSError:
                    first = b"(no request line)"
                self.seen.append(first.decode("latin-1"))
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")

    def close(self) -> None:
        self.sock.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def build_store(folder: Path) -> tuple[Path, int, float]:
    started = time.perf_counter()
    path = folder / "store"
    corpus = SqliteCorpus(path, embedder="static")
    try:
        added = corpus.upsert(demo_documents()).added
    finally:
        corpus.close()
    return path, added, time.perf_counter() - started


def quiet_environment(store: Path, proxy: str) -> dict[str, str]:
    return {
        **os.environ,
        "SIFT_STORE": str(store),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "HTTP_PROXY": proxy,
        "HTTPS_PROXY": proxy,
        "ALL_PROXY": proxy,
        "http_proxy": proxy,
        "https_proxy": proxy,
        "all_proxy": proxy,
        # Loopback stays direct: only what would leave the machine reaches the recorder.
        "NO_PROXY": "127.0.0.1,localhost,::1",
        "no_proxy": "127.0.0.1,localhost,::1",
    }


def detector_works(recorder: Recorder, env: dict[str, str]) -> bool:
    """A client that honours the proxy variables, run with the server's environment,
    reaches the recorder: the check below can see what it claims to."""
    probe = (
        "import urllib.request\n"
        "try:\n"
        "    urllib.request.urlopen('http://example.com/', timeout=10)\n"
        "except Exception:\n"
        "    pass\n"
    )
    subprocess.run([sys.executable, "-c", probe], env=env, timeout=60, check=True)
    seen = any("example.com" in line for line in recorder.seen)
    recorder.seen.clear()
    return seen


def start_server(port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "langgraph_cli",
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(ROOT / "langgraph.json"),
    ]
    handle = log.open("wb")
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT)


def wait_ready(url: str, process: subprocess.Popen[bytes], hang_guard_s: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < hang_guard_s:
        if process.poll() is not None:
            raise RuntimeError(f"langgraph dev exited with status {process.returncode}")
        try:
            if httpx.get(f"{url}/ok", timeout=2, trust_env=False).status_code == 200:
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"langgraph dev did not answer /ok within {hang_guard_s:.0f} s")


async def exercise(url: str) -> tuple[list[tuple[str, bool, str]], dict[str, float]]:
    checks: list[tuple[str, bool, str]] = []
    timings: dict[str, float] = {}

    def check(name: str, ok: bool, detail: str = "") -> None:
        checks.append((name, ok, detail))
        console.print(f"{'[green]ok[/green]' if ok else '[red]FAILED[/red]'} {name} {detail}")

    # The SDK's own httpx client must not go through the recording proxy.
    client = get_client(url=url, headers={}, timeout=120)
    found = await client.assistants.search(graph_id="sift")
    check("the sift assistant exists", len(found) == 1, f"({len(found)} found)")
    assistant = found[0]["assistant_id"]
    schemas = await client.assistants.get_schemas(assistant)
    inputs = schemas["input_schema"]["properties"]
    outputs = schemas["output_schema"]["properties"]
    context = (schemas.get("context_schema") or {}).get("properties", {})
    check(
        "input, output and context schemas",
        {"question", "filters", "top_k", "max_turns"} <= set(inputs)
        and {"evidence", "usage", "stopped_because"} <= set(outputs)
        and "max_turns" in context,
        f"(input {sorted(inputs)})",
    )

    thread = await client.threads.create()
    started = time.perf_counter()
    out = await client.runs.wait(
        thread["thread_id"], assistant, input={"question": DEFAULT_QUESTION, "top_k": 10}
    )
    timings["runs.wait (first run)"] = time.perf_counter() - started
    assert isinstance(out, dict)
    titles = [e["title"] for e in out.get("evidence", [])]
    check(
        "a two-hop question finds both pages",
        "Boden's Boy" in titles and "Henry Edwards (actor)" in titles,
        f"(top titles {titles[:3]}, stopped because {out.get('stopped_because')})",
    )
    short = await client.threads.create()
    limited = await client.runs.wait(
        short["thread_id"],
        assistant,
        input={"question": DEFAULT_QUESTION},
        context={"max_turns": 1},
    )
    assert isinstance(limited, dict)
    check(
        "a run's context sets max_turns",
        limited["usage"]["turns"] == 1 and out["usage"]["turns"] > 1,
        f"(1 turn with max_turns=1 in the context; {out['usage']['turns']} without)",
    )

    state = await client.threads.get_state(thread["thread_id"])
    saved = state["values"]
    check(
        "the thread's checkpoint holds the episode's result",
        saved.get("stopped_because") == out["stopped_because"]
        and [e["chunk_id"] for e in saved.get("evidence", [])]
        == [e["chunk_id"] for e in out["evidence"]],
    )

    other = await client.threads.create()
    events: list[str] = []
    started = time.perf_counter()
    async for part in client.runs.stream(
        other["thread_id"],
        assistant,
        input={"question": "Who directed Boden's Boy?", "top_k": 5},
        stream_mode="custom",
    ):
        if part.event == "custom" and isinstance(part.data, dict):
            events.append(str(part.data.get("event")))
    timings["runs.stream (custom mode)"] = time.perf_counter() - started
    check(
        "sift's progress events stream in custom mode",
        bool(events) and events[0] == "sift.turn_started" and events[-1] == "sift.finished",
        f"({len(events)} events)",
    )

    broken = await client.threads.create()
    message = ""
    try:
        await client.runs.wait(broken["thread_id"], assistant, input={"top_k": 3}, raise_error=True)
    except Exception as exc:
        message = str(exc)
    check(
        "an input without a question says so",
        "no 'question' key" in message,
        f"({message[:80]!r})",
    )
    return checks, timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "checks/results/langgraph_dev.md")
    parser.add_argument("--hang-guard", type=float, default=300.0, help="seconds")
    options = parser.parse_args()

    recorder = Recorder()
    with tempfile.TemporaryDirectory() as folder:
        with console.status("indexing the demo corpus"):
            store, added, index_s = build_store(Path(folder))
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = Path(folder) / "langgraph-dev.log"
        env = quiet_environment(store, f"http://127.0.0.1:{recorder.port}")
        detector = detector_works(recorder, env)
        process = start_server(port, env, log)
        try:
            with console.status("starting langgraph dev"):
                ready_s = wait_ready(url, process, options.hang_guard)
            checks, timings = asyncio.run(exercise(url))
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
            server_log = log.read_text(encoding="utf-8", errors="replace")
        blocking = "BlockingError" in server_log
        checks.append(("no blocking call refused by langgraph dev", not blocking, ""))
        unregistered = "unregistered type" in server_log
        checks.append(("no checkpoint type warning", not unregistered, ""))
        outbound = list(recorder.seen)
        checks.append(
            (
                "no connection leaves the machine",
                detector and not outbound,
                f"({len(outbound)} attempts; the recorder caught a probe: {detector})",
            )
        )
    recorder.close()

    versions = {}
    for name in ("langgraph", "langgraph-api", "langgraph-cli", "langgraph-sdk"):
        try:
            from importlib.metadata import version

            versions[name] = version(name)
        except Exception:
            versions[name] = "?"
    passed = all(ok for _, ok, _ in checks)
    lines = [
        "# `langgraph dev` serving sift (langgraph.json)",
        "",
        "Command: `python checks/langgraph_dev.py` in a venv with "
        '`pip install -e ".[langgraph-server]"`',
        f"Machine: {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}, {os.cpu_count()} cores shared with other running processes.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        f"Store: the demo corpus ({added} passages, static embedder), indexed in {index_s:.1f} s.",
        f"`langgraph dev` answered `/ok` {ready_s:.1f} s after it was started.",
        "",
        "| check | result |",
        "|---|---|",
        *[f"| {name} {detail} | {'ok' if ok else '**FAILED**'} |" for name, ok, detail in checks],
        "",
        "| timing | seconds |",
        "|---|---|",
        *[f"| {name} | {seconds:.2f} |" for name, seconds in timings.items()],
        "",
        f"All checks passed: **{'yes' if passed else 'no'}**.",
    ]
    if outbound:
        lines += ["", "Outbound attempts seen by the recording proxy:", ""]
        lines += [f"- `{line}`" for line in outbound]
    options.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    console.print(f"results: {options.out}")
    raise SystemExit(0 if passed else 1)


if __name__ == "__main__":
    main()
