"""A question the documents do not answer: the `search` tool's structured result carries
`not_found` (the names the question types that occur nowhere, or [] when nothing matches
its key terms) and its text says so before the passages, which are only the nearest text.
English beside Japanese, through the SDK's Client over the real server and store."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from sift.integrations.mcp import SearchReport, create_server
from sift.integrations.stores.sqlite import SqliteCorpus

NAMED = ["What does --frobnicate-depth control?", "--frobnicate-depth は何を制御しますか？"]
UNMATCHED = ["How do I bake a sourdough loaf with rye flour?", "ライ麦粉でサワードウを焼くには？"]
ANSWERED = ["Which volcano buried Pompeii?", "富士山の標高は？"]


async def _search(store_path: Path, question: str) -> tuple[SearchReport, str]:
    corpus = SqliteCorpus(store_path, embedder="hash")
    try:
        async with Client(create_server(corpus)) as client:
            (tool,) = [t for t in (await client.list_tools()).tools if t.name == "search"]
            assert "not_found" in (tool.output_schema or {})["properties"]
            result = await client.call_tool("search", {"question": question})
            assert not result.is_error
            text = "\n".join(block.text for block in result.content)
            return SearchReport.model_validate(result.structured_content), text
    finally:
        corpus.close()


@pytest.mark.parametrize("question", NAMED)
async def test_a_name_that_occurs_nowhere_is_reported(store_path: Path, question: str) -> None:
    report, text = await _search(store_path, question)
    assert report.not_found == ["--frobnicate-depth"]
    assert report.evidence  # the nearest text is still handed back
    head = text.split("\n\n[1] ", 1)[0]
    assert (
        "not found: '--frobnicate-depth' occurs nowhere in the corpus; the passages below "
        "are only the nearest text." in head.splitlines()
    )


@pytest.mark.parametrize("question", UNMATCHED)
async def test_a_question_nothing_matches_is_reported(store_path: Path, question: str) -> None:
    report, text = await _search(store_path, question)
    assert report.not_found == []
    assert report.evidence
    head = text.split("\n\n[1] ", 1)[0]
    assert (
        "not found: nothing in the corpus matches the question's key terms; the passages "
        "below are only the nearest text." in head.splitlines()
    )


@pytest.mark.parametrize("question", ANSWERED)
async def test_an_answered_question_says_nothing_of_it(store_path: Path, question: str) -> None:
    report, text = await _search(store_path, question)
    assert report.not_found is None
    assert "not found" not in text
