"""`sift mcp` over other policies and stores: a model served by Ollama (the loopback fake,
through the command's own options) and Weaviate (the loopback fake, in-process)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from sift.integrations.mcp import SearchReport, create_server
from sift.integrations.ollama import OllamaPolicy
from sift.integrations.ollama.testing import (
    FakeOllama,
    Fault,
    final_answer,
    refused_host,
    reply,
    tool_call,
)
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.integrations.stores.weaviate import WeaviateCorpus
from sift.integrations.stores.weaviate.testing import FakeWeaviate
from sift.types import Document

HANG_GUARD_S = 240


async def test_an_ollama_model_drives_the_search(
    store_path: Path, stdio_server: Callable[..., StdioServerParameters]
) -> None:
    with FakeOllama() as ollama:
        ollama.script(
            reply(tool_calls=[tool_call("search_corpus", query="volcano that buried Pompeii")]),
            final_answer([("vesuvius_0", "Its eruption in 79 AD buried Pompeii.")]),
        )
        # No --store: the default store, $SIFT_STORE, as for every sift command.
        command = stdio_server(
            "--policy",
            "ollama",
            "--model",
            "gpt-oss:20b",
            "--ollama-host",
            ollama.host,
        ).model_copy(update={"env": {"SIFT_STORE": str(store_path)}})
        with anyio.fail_after(HANG_GUARD_S):
            async with Client(command) as client:
                result = await client.call_tool(
                    "search", {"question": "Which volcano buried Pompeii?"}
                )
                assert not result.is_error, result.content
                report = SearchReport.model_validate(result.structured_content)
                assert report.evidence[0].chunk_id == "vesuvius_0"
                assert report.evidence[0].justification == "Its eruption in 79 AD buried Pompeii."
                assert report.stopped_because == "final"
                requests = ollama.chat_requests()
                assert len(requests) == 2 and requests[0]["model"] == "gpt-oss:20b"
                assert "Which volcano buried Pompeii?" in requests[0]["messages"][-1]["content"]

                # The model server fails: a tool error that says so; the server stays up.
                ollama.script(Fault(status=404, error="model 'gpt-oss:20b' not found"))
                failed = await client.call_tool("search", {"question": "Which volcano?"})
                assert failed.is_error
                assert "gpt-oss:20b" in failed.content[0].text
                grep = await client.call_tool("grep", {"pattern": "Pompeii"})
                assert not grep.is_error and grep.structured_content["hits"]


async def test_the_server_searches_a_weaviate_collection(docs: list[Document]) -> None:
    with FakeWeaviate() as fake:
        corpus = WeaviateCorpus(fake.settings(collection="Volcanoes"), embedder="hash")
        try:
            corpus.upsert(docs)
            server = create_server(corpus, top_k=3)
            async with Client(server) as client:
                result = await client.call_tool("search", {"question": "volcano near Seattle"})
                assert not result.is_error, result.content
                report = SearchReport.model_validate(result.structured_content)
                assert "rainier" in [item.doc_id for item in report.evidence]
                assert len(report.evidence) <= 3
                read = await client.call_tool("read_document", {"doc_id": "rainier"})
                assert "Seattle" in read.structured_content["chunks"][0]["text"]
                resource = await client.read_resource("sift://doc/fuji")
                assert "3776メートル" in resource.contents[0].text
        finally:
            corpus.close()


async def test_a_model_server_down_is_a_tool_error(tmp_path: Path, docs: list[Document]) -> None:
    corpus = SqliteCorpus(tmp_path / "store", embedder="hash")
    try:
        corpus.upsert(docs)
        policy = OllamaPolicy("gpt-oss:20b", host=refused_host(), retries=0)
        async with Client(create_server(corpus, policy)) as client:
            failed = await client.call_tool("search", {"question": "Which volcano?"})
            assert failed.is_error
            message = failed.content[0].text
            assert "cannot reach Ollama at http://127.0.0.1:" in message
            assert "ollama serve" in message
            assert not (await client.call_tool("grep", {"pattern": "Etna"})).is_error
    finally:
        corpus.close()
