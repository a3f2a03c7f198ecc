"""Cancelling a search: the client cancels while a store call is in flight; the episode
stops (no further turn, no further store call) and the server goes on serving.

Run in-process so the test can watch the store, over two wires: streamable HTTP on a
loopback port (`serve`), and JSON-RPC with `notifications/cancelled` (the handshake-era
protocol stdio clients speak, over the SDK's in-memory transport).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from sift.config import HarnessConfig
from sift.graphs import ScriptedPolicy
from sift.integrations.mcp import create_server, serve
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document, Hit

HANG_GUARD_S = 120


class GatedCorpus:
    """A real store whose searches wait at a gate, so a test can act while one is in
    flight. Counts the searches it was asked for."""

    def __init__(self, inner: SqliteCorpus) -> None:
        self.inner = inner
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.returned = threading.Event()
        self.searches = 0
        self._lock = threading.Lock()

    def search(self, query: str, **options: Any) -> list[Hit]:
        with self._lock:
            self.searches += 1
        self.entered.set()
        self.gate.wait(HANG_GUARD_S)
        try:
            return self.inner.search(query, **options)
        finally:
            self.returned.set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Flag(logging.Handler):
    """Set when the server logs that a search was cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.event = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "search cancelled" in record.getMessage():
            self.event.set()


@asynccontextmanager
async def over_http(server: Any) -> AsyncIterator[Client]:
    async with anyio.create_task_group() as group:
        ready: list[str] = []
        started = anyio.Event()

        def on_ready(url: str) -> None:
            ready.append(url)
            started.set()

        group.start_soon(
            lambda: serve(server, transport="streamable-http", port=0, on_ready=on_ready)
        )
        await started.wait()
        async with Client(ready[0]) as client:
            yield client
        group.cancel_scope.cancel()


@asynccontextmanager
async def over_jsonrpc(server: Any) -> AsyncIterator[Client]:
    async with Client(server, mode="legacy") as client:
        yield client


@pytest.mark.parametrize("connect", [over_http, over_jsonrpc], ids=["streamable-http", "jsonrpc"])
async def test_cancelling_a_search_stops_its_episode(
    tmp_path: Path, docs: list[Document], connect: Callable[[Any], Any]
) -> None:
    store = SqliteCorpus(tmp_path / "store", embedder="hash")
    store.upsert(docs)
    corpus = GatedCorpus(store)
    # Uncancelled, this episode would search thirty times.
    policy = ScriptedPolicy(
        [[{"name": "search_corpus", "arguments": {"query": f"volcano {n}"}}] for n in range(30)]
    )
    server = create_server(corpus, policy, config=HarnessConfig(max_turns=30))  # type: ignore[arg-type]
    flag = Flag()
    logging.getLogger("sift.mcp").addHandler(flag)
    logging.getLogger("sift.mcp").setLevel(logging.INFO)
    try:
        with anyio.fail_after(HANG_GUARD_S):
            async with connect(server) as client, anyio.create_task_group() as group:
                call = anyio.CancelScope()
                outcome: list[Any] = []

                async def search() -> None:
                    with call:
                        outcome.append(
                            await client.call_tool("search", {"question": "Which volcano?"})
                        )

                group.start_soon(search)
                assert await anyio.to_thread.run_sync(corpus.entered.wait, HANG_GUARD_S)
                call.cancel()  # the client abandons the request: it sends a cancellation
                assert await anyio.to_thread.run_sync(flag.event.wait, HANG_GUARD_S)
                corpus.gate.set()  # the store call in flight now returns, to nobody
                assert await anyio.to_thread.run_sync(corpus.returned.wait, HANG_GUARD_S)

                # The server keeps serving: another tool, then a whole search.
                grep = await client.call_tool("grep", {"pattern": "Sicily"})
                assert [hit["doc_id"] for hit in grep.structured_content["hits"]] == ["etna"]
                assert outcome == []  # the cancelled call never got an answer
                assert corpus.searches == 1  # the cancelled episode made no further call
                assert len(policy.views) == 1  # nor started another turn

                done = await client.call_tool("search", {"question": "Etna", "max_turns": 2})
                assert not done.is_error
                assert done.structured_content["usage"]["turns"] == 2
                # Its two searches and the harness's plain search of the question
                # (HarnessConfig.plain_first: the policy never searched it as written).
                assert corpus.searches == 4
    finally:
        logging.getLogger("sift.mcp").removeHandler(flag)
        store.close()
