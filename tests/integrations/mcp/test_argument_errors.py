"""Tool errors an orchestrating model can act on (issue 43): arguments the schema refuses
and a question with no word in it are one short line naming the argument, never
pydantic's report with its type codes and documentation URL; the server keeps serving."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from sift.integrations.mcp import create_server
from sift.integrations.stores.sqlite import SqliteCorpus

from .conftest import build_store


@pytest.fixture
def corpus(tmp_path: Path):
    store = SqliteCorpus(build_store(tmp_path / "store"), embedder="hash")
    yield store
    store.close()


def _text(result) -> str:
    return "\n".join(block.text for block in result.content)


BAD = [
    ("search", {"question": ""}, "Error executing tool search: question is empty"),
    ("search", {}, "Error executing tool search: question is required"),
    (
        "search",
        {"question": "volcano", "top_k": -1},
        "Error executing tool search: top_k must be greater than or equal to 1 (got -1)",
    ),
    (
        "search",
        {"question": "富士山", "top_k": "たくさん"},
        "Error executing tool search: top_k must be a valid integer, unable to parse string "
        "as an integer (got 'たくさん')",
    ),
    (
        "search",
        {"question": 42},
        "Error executing tool search: question must be a valid string (got 42)",
    ),
    (
        "search",
        {"question": "volcano", "filters": "region=asia"},
        "Error executing tool search: filters must be a valid dictionary (got 'region=asia')",
    ),
    ("grep", {"pattern": ""}, "Error executing tool grep: pattern is empty"),
    (
        "read_document",
        {"doc_id": "fuji", "start_chunk": -1},
        "Error executing tool read_document: start_chunk must be greater than or equal to 0 "
        "(got -1)",
    ),
    (
        "search",
        {"question": "?!?..."},
        "Error executing tool search: the question '?!?...' has no word to search for (only "
        "punctuation, symbols or spaces); ask with at least one word",
    ),
    (
        "search",
        {"question": "。、！？"},  # Japanese punctuation alone / 日本語の句読点だけ
        "Error executing tool search: the question '。、！？' has no word to search for (only "
        "punctuation, symbols or spaces); ask with at least one word",
    ),
]


async def test_bad_arguments_are_short_messages_naming_them(corpus: SqliteCorpus) -> None:
    async with Client(create_server(corpus)) as client:
        for tool, arguments, expected in BAD:
            answer = await client.call_tool(tool, arguments)
            assert answer.is_error, (tool, arguments)
            text = _text(answer)
            assert text == expected, (tool, arguments, text)
            assert "pydantic" not in text and "\n" not in text and "type=" not in text
        # A long value is cut short in the message.
        answer = await client.call_tool("search", {"question": "volcano", "max_turns": "x" * 500})
        assert answer.is_error and len(_text(answer)) < 160
        # Still serving, in both languages.
        for question, doc in (("Which volcano buried Pompeii?", "vesuvius"), ("富士山", "fuji")):
            found = await client.call_tool("search", {"question": question, "top_k": 5})
            assert not found.is_error, _text(found)
            assert doc in {e["doc_id"] for e in found.structured_content["evidence"]}
