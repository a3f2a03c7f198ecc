"""`sift mcp --transport streamable-http`: a real server process on a free loopback port,
driven by the SDK's Client."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from sift.integrations.mcp import SearchReport

HANG_GUARD_S = 240


@pytest.fixture(scope="module")
def http_server(
    store_path: Path, sift_mcp: Callable[..., list[str]]
) -> Iterator[tuple[str, list[str]]]:
    """Starts `sift mcp --transport streamable-http --port 0`; yields its URL and log."""
    process = subprocess.Popen(
        sift_mcp("--store", str(store_path), "--transport", "streamable-http", "--port", "0"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    log: list[str] = []
    try:
        assert process.stderr is not None
        url = None
        while url is None:
            line = process.stderr.readline()
            if not line:
                break
            log.append(line)
            found = re.search(r"sift: MCP server at (http://127\.0\.0\.1:\d+/mcp)", line)
            url = found.group(1) if found else None
        assert url, "".join(log)
        yield url, log
    finally:
        process.terminate()
        process.wait(timeout=60)


async def test_streamable_http_lists_searches_and_reports_progress(
    http_server: tuple[str, list[str]],
) -> None:
    url, _ = http_server
    with anyio.fail_after(HANG_GUARD_S):
        async with Client(url) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == {"search", "read_document", "grep"}
            assert tools["search"].output_schema is not None
            progress: list[str] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(message or "")

            result = await client.call_tool(
                "search",
                {"question": "Who wrote letters about the eruption of Vesuvius?", "top_k": 4},
                progress_callback=on_progress,
            )
            assert not result.is_error
            report = SearchReport.model_validate(result.structured_content)
            assert "pliny" in [item.doc_id for item in report.evidence]
            assert progress[0].startswith("turn 1/") and progress[-1].startswith("finished")
            refused = await client.call_tool("search", {"question": "volcano", "top_k": 0})
            assert refused.is_error and "top_k" in refused.content[0].text
            again = await client.call_tool("grep", {"pattern": "Sicily"})
            assert [hit["doc_id"] for hit in again.structured_content["hits"]] == ["etna"]


def test_a_foreign_host_header_is_refused(http_server: tuple[str, list[str]]) -> None:
    # On loopback the SDK's DNS rebinding protection is on: a page elsewhere cannot reach
    # the server through a name that resolves to 127.0.0.1.
    url, _ = http_server
    answer = httpx.post(
        url,
        headers={"Host": "evil.example:80", "Content-Type": "application/json"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=60,
    )
    assert answer.status_code in (400, 403, 421)


def _http(sift_mcp: Callable[..., list[str]], store: Path, host: str, *more: str) -> list[str]:
    return sift_mcp(
        "--store", str(store), "--transport", "streamable-http", "--host", host, "--port", "0",
        *more,
    )  # fmt: skip


def _start(
    command: list[str], pattern: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str, list[str]]:
    """Starts a server process; returns it, the first group of `pattern` in its log (its
    port or URL) and its log so far."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    log: list[str] = []
    assert process.stderr is not None
    while True:
        line = process.stderr.readline()
        if not line:
            process.wait(timeout=60)
            raise AssertionError("".join(log))
        log.append(line)
        found = re.search(pattern, line)
        if found:
            return process, found.group(1), log


_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
_INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
_JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_host_and_origin_are_checked_on_any_loopback_address(
    store_path: Path, sift_mcp: Callable[..., list[str]]
) -> None:
    """127.0.0.2 is loopback too, and the path 0.0.0.0 or a LAN address takes: the SDK's
    own check was off there, and a foreign Host and Origin opened a session."""
    process, url, log = _start(
        _http(sift_mcp, store_path, "127.0.0.2", "--allow-host", "mcp.example.org"),
        r"sift: MCP server at (http://127\.0\.0\.2:\d+/mcp)",
    )
    try:
        assert any("has no key" in line for line in log), log
        port = url.split(":")[2].split("/")[0]
        foreign = httpx.post(url, headers={**_JSON, "Host": f"evil.example:{port}"}, json=_INIT)
        assert foreign.status_code == 421, foreign.text
        assert "evil.example" in foreign.json()["error_msg"]
        cross = httpx.post(url, headers={**_JSON, "Origin": "http://evil.example"}, json=_INIT)
        assert cross.status_code == 403, cross.text
        for host in (f"127.0.0.2:{port}", f"localhost:{port}", f"mcp.example.org:{port}"):
            fine = httpx.post(url, headers={**_JSON, "Host": host}, json=_INIT)
            assert fine.status_code == 200, (host, fine.text)
        same = httpx.post(url, headers={**_JSON, "Origin": f"http://127.0.0.2:{port}"}, json=_INIT)
        assert same.status_code == 200, same.text
    finally:
        process.terminate()
        process.wait(timeout=60)


def test_beyond_loopback_a_key_is_required(
    store_path: Path, sift_mcp: Callable[..., list[str]]
) -> None:
    refused = subprocess.run(
        _http(sift_mcp, store_path, "0.0.0.0"),
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "SIFT_MCP_KEY"},
        check=False,
    )
    assert refused.returncode == 2
    assert "needs a key" in refused.stderr and "SIFT_MCP_KEY" in refused.stderr


def test_with_a_key_every_request_must_carry_it(
    store_path: Path, sift_mcp: Callable[..., list[str]]
) -> None:
    key = "mcp-key-0123456789"
    process, port, log = _start(
        _http(sift_mcp, store_path, "0.0.0.0"),
        r"sift: MCP server at http://0\.0\.0\.0:(\d+)/mcp",
        env={**os.environ, "SIFT_MCP_KEY": key},
    )
    try:
        assert not any("has no key" in line for line in log)
        url = f"http://127.0.0.1:{port}/mcp"
        assert httpx.post(url, headers=_JSON, json=_INIT).status_code == 401
        wrong = {**_JSON, "Authorization": "Bearer not-the-key-at-all"}
        assert httpx.post(url, headers=wrong, json=_INIT).status_code == 401
        right = {**_JSON, "Authorization": f"Bearer {key}"}
        assert httpx.post(url, headers=right, json=_INIT).status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=60)
