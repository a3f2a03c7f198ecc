"""`sift mcp --transport streamable-http`: a real server process on a free loopback port,
driven by the SDK's Client."""

from __future__ import annotations

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
