"""The MCP server over a store of whole JSQuAD articles beside English pages: a Japanese
question's gold paragraph is in the search tool's structured result, and grep finds
Japanese patterns."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from sift.integrations.mcp import create_server
from sift.integrations.stores.sqlite import SqliteCorpus

QUESTION = "国際連合平和維持活動において常に最低限、統制的に実施しなければならないのは？"


async def test_search_and_grep_in_japanese(tmp_path: Path, japanese_sample) -> None:
    corpus = SqliteCorpus(tmp_path / "store")  # the default embedder
    try:
        assert not corpus.upsert(japanese_sample.documents).failed
        async with Client(create_server(corpus)) as client:
            result = await client.call_tool("search", {"question": QUESTION, "top_k": 10})
            assert not result.is_error
            evidence = result.structured_content["evidence"]
            assert japanese_sample.gold(QUESTION) in [e["doc_id"] for e in evidence]
            grep = await client.call_tool("grep", {"pattern": "東京都[^。]*区", "limit": 20})
            assert not grep.is_error
            hits = grep.structured_content["hits"]
            assert hits and all("東京都" in h["text"] for h in hits)
    finally:
        corpus.close()
