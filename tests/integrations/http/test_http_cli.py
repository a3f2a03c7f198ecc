"""`sift serve` as a user runs it: a subprocess configured by options and environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx


def test_sift_serve_runs_the_service(tmp_path: Path):
    keys = tmp_path / "keys.toml"
    keys.write_text(
        '[[keys]]\nkey = "cli-key-0123456789"\nname = "dify"\ncollections = ["notes"]\n'
    )
    collections = tmp_path / "collections.json"
    collections.write_text(json.dumps({"collections": {"notes": {"mode": "single_shot"}}}))
    env = {
        **os.environ,
        "SIFT_SERVER_MAX_TOP_K": "7",
        "SIFT_HOME": str(tmp_path / "home"),
        # This test checks answers, not speed: no deadline a loaded machine could miss.
        "SIFT_SERVER_RETRIEVAL_DEADLINE_S": "600",
        "SIFT_SERVER_DEADLINE_GRACE_S": "60",
        "SIFT_SERVER_QUEUE_WAIT_S": "600",
    }
    process = _start_serve(
        tmp_path,
        env,
        "--keys-file",
        str(keys),
        "--collections",
        str(collections),
        "--embedder",
        "hash",
        "--search-processes",
        "1",
    )
    try:
        url = _url(process)
        auth = {"Authorization": "Bearer cli-key-0123456789"}
        with httpx.Client(base_url=url, headers=auth, timeout=120) as client:
            assert client.get("/healthz").json()["status"] == "ok"
            _wait_ready(client)
            assert client.post("/retrieval").json() == {"records": []}
            stored = client.post(
                "/v1/collections/notes/documents",
                json={
                    "documents": [
                        {
                            "id": "n1",
                            "title": "Rivers",
                            "text": "The Loire is the longest river in France.",
                        }
                    ]
                },
            )
            assert stored.status_code == 200 and stored.json()["added"] == 1
            info = client.get("/v1/collections/notes").json()
            assert info["mode"] == "single_shot" and info["stats"]["documents"] == 1
            answer = client.post(
                "/retrieval",
                json={
                    "knowledge_id": "notes",
                    "query": "longest river in France",
                    "retrieval_setting": {"top_k": 3, "score_threshold": 0.0},
                },
            )
            assert answer.json()["records"][0]["metadata"]["doc_id"] == "n1"
            # The search ran in its one search process, the server's only child.
            children = _children(process.pid)
            assert len(children) == 1, children
            too_many = client.post(
                "/retrieval",
                json={
                    "knowledge_id": "notes",
                    "query": "x",
                    "retrieval_setting": {"top_k": 8, "score_threshold": 0.0},
                },
            )
            assert too_many.status_code == 422  # SIFT_SERVER_MAX_TOP_K=7 from the env
            other = client.get("/v1/collections/elsewhere")
            assert other.json()["error_code"] == 1002  # the key is limited to "notes"
        assert (tmp_path / "root" / "notes").exists()
    finally:
        process.terminate()
        process.wait(timeout=20)
    # Stopping the server stops its search process: nothing is left behind.
    for pid in children:
        _wait_gone(pid)


def _start_serve(tmp_path: Path, env: dict[str, str], *options: str) -> subprocess.Popen[str]:
    """`sift serve` on a free loopback port over the collections root tmp_path/root."""
    command = [
        sys.executable,
        "-c",
        "from sift.integrations.cli import main; main()",
        "serve",
        "--port",
        "0",
        "--store",
        str(tmp_path / "root"),
        "--log-level",
        "info",
        *options,
    ]
    return subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)


def _url(process: subprocess.Popen[str]) -> str:
    """The address uvicorn says it listens on (read from the server's log)."""
    log = []
    deadline = time.monotonic() + 60  # bounds a broken run only
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        log.append(line)
        found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", line)
        if found:
            return found.group(1)
    raise AssertionError("".join(log))


def _wait_ready(client: httpx.Client) -> None:
    """Polls /readyz; the limit only bounds a broken run."""
    ready_by = time.monotonic() + 120
    while client.get("/readyz").status_code != 200:
        assert time.monotonic() < ready_by, "never ready"
        time.sleep(0.05)


def _children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == parent:
                found.append(int(entry.name))
    return found


def _wait_gone(pid: int) -> None:
    """Polls until `pid` has exited (the limit only bounds a broken run)."""
    end = time.monotonic() + 60
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return  # gone
        if ") Z" in stat:
            return  # exited, waiting to be reaped
        assert time.monotonic() < end, f"process {pid} outlived the server"
        time.sleep(0.05)


def test_sift_serve_reports_a_bad_keys_file(tmp_path: Path):
    from typer.testing import CliRunner

    from sift.integrations.cli import app

    keys = tmp_path / "keys.json"
    keys.write_text('{"keys": [{"key": "short"}]}')
    result = CliRunner().invoke(app, ["serve", "--keys-file", str(keys), "--store", str(tmp_path)])
    assert result.exit_code == 2
    assert "at least 8 characters" in result.output


def test_search_processes_never_outlive_a_killed_server(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "SIFT_HOME": str(tmp_path / "home"),
        "SIFT_STORE": str(tmp_path / "store"),
    }
    # A root of collections yet to be made: its folder must exist (a missing one is
    # refused as a likely typo).
    (tmp_path / "root").mkdir()
    process = _start_serve(tmp_path, env, "--allow-anonymous", "--search-processes", "2")
    try:
        with httpx.Client(base_url=_url(process), timeout=120) as client:
            _wait_ready(client)
        children = _children(process.pid)
        assert len(children) == 2, children
        process.kill()  # SIGKILL: nothing of the server runs after this
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    # Each search process sees its request pipe close, and exits.
    for pid in children:
        _wait_gone(pid)
