"""Documents as MCP resources: any document id reads back its document through its URI
(ids are keys, not paths: the SDK's path checks do not apply to them), slashes and
Japanese as written; every document is listed, page by page, with title and mime type."""

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
                assert uri.startswith("sift://doc/") and uri.isascii()
                contents = (await client.read_resource(uri)).contents
                assert contents[0].text.startswith(f"# title {doc_id} (doc {doc_id};")
                assert f"text of {doc_id}" in contents[0].text
                read = await client.call_tool("read_document", {"doc_id": doc_id})
                assert read.structured_content["uri"] == uri
            with pytest.raises(MCPError, match=re.escape("no document with id 'nope/../x'")):
                await client.read_resource(document_uri("nope/../x"))
    finally:
        corpus.close()


async def test_ids_with_slashes_and_japanese_read_as_written(tmp_path: Path) -> None:
    """`sift://doc/{+doc_id}`: an id's slashes and Unicode go in the URI as they are (a
    client need not percent-encode them), and the template says so."""
    corpus = SqliteCorpus(tmp_path / "store", embedder="hash")
    ids = {"reports/2024/q3.pdf": "Revenue rose in Q3.", "議事録/梅雨.md": "梅雨入りは六月です。"}
    try:
        corpus.upsert([Document(id=i, title=i, text=t) for i, t in ids.items()])
        async with Client(create_server(corpus)) as client:
            for doc_id, text in ids.items():
                for uri in (f"sift://doc/{doc_id}", document_uri(doc_id)):
                    contents = (await client.read_resource(uri)).contents
                    assert text in contents[0].text and contents[0].mime_type == "text/markdown"
            assert document_uri("議事録/梅雨.md").startswith("sift://doc/%E8%AD%B0")
            assert "/" in document_uri("議事録/梅雨.md")[len("sift://doc/") :]
            (template,) = (await client.list_resource_templates()).resource_templates
            assert template.uri_template == "sift://doc/{+doc_id}"
            assert "slashes" in (template.description or "")
            assert "議事録/梅雨.md" in (template.description or "")
    finally:
        corpus.close()


async def test_every_document_is_listed_page_by_page(tmp_path: Path) -> None:
    corpus = SqliteCorpus(tmp_path / "store", embedder="hash")
    docs = [
        Document(id=f"notes/{n:03d}.md", title=f"Note {n}", text=f"note {n}") for n in range(205)
    ]
    docs.append(Document(id="議事録/梅雨.md", title="梅雨の記録", text="梅雨入りは六月です。"))
    try:
        corpus.upsert(docs)
        async with Client(create_server(corpus)) as client:
            listed = []
            cursor = None
            pages = 0
            while True:
                page = await client.list_resources(cursor=cursor)
                assert len(page.resources) <= 100
                listed += page.resources
                pages += 1
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert pages == 3
            by_name = {r.name: r for r in listed}
            assert sorted(by_name) == sorted(d.id for d in docs)
            ja = by_name["議事録/梅雨.md"]
            assert ja.title == "梅雨の記録" and ja.mime_type == "text/markdown"
            assert str(ja.uri) == document_uri("議事録/梅雨.md")
            assert by_name["notes/003.md"].title == "Note 3"
            # A listed URI reads its document.
            contents = (await client.read_resource(str(ja.uri))).contents
            assert "梅雨入りは六月です。" in contents[0].text
            with pytest.raises(MCPError, match="invalid cursor"):
                await client.list_resources(cursor="not a cursor")
    finally:
        corpus.close()
