"""Documents as MCP resources: any document id, percent-encoded, reads back its document
(ids are keys, not paths: the SDK's path checks do not apply to them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from sift.integrations.mcp import create_server, document_uri
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

IDS = ["notes/a b.md", "../etc/passwd", "/abs/x.txt", "富士山", "q?x=1#y", "plain"]


async def test_every_document_id_round_trips_through_its_uri(tmp_path: Path) -> None:
    corpus = SqliteCorpus(tmp_path / "store", embedder="hash")
    try:
        corpus.upsert([Document(id=i, title=f"title {i}", text=f"text of {i}") for i in IDS])
        async with Client(create_server(corpus)) as client:
            for doc_id in IDS:
                uri = document_uri(doc_id)
                assert uri.startswith("sift://doc/") and "/" not in uri[len("sift://doc/") :]
                contents = (await client.read_resource(uri)).contents
                assert contents[0].text.startswith(f"# title {doc_id} (doc {doc_id};")
                assert f"text of {doc_id}" in contents[0].text
                read = await client.call_tool("read_document", {"doc_id": doc_id})
                assert read.structured_content["uri"] == uri
            with pytest.raises(MCPError, match=re.escape("no document with id 'nope/../x'")):
                await client.read_resource(document_uri("nope/../x"))
    finally:
        corpus.close()
