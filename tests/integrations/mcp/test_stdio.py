"""`sift mcp` as a desktop client runs it: a stdio subprocess, driven by the SDK's Client."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from sift.integrations.mcp import DocumentReport, GrepReport, SearchReport

# A hang guard only: a loaded CI box may take tens of seconds to start Python.
HANG_GUARD_S = 240


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_stdio_server_tools_search_progress_and_errors(
    store_path: Path, stdio_server: Callable[..., StdioServerParameters]
) -> None:
    with anyio.fail_after(HANG_GUARD_S):
        # The initialize handshake (mode="legacy"): what desktop clients speak today; the
        # streamable HTTP test speaks the newer protocol.
        async with Client(stdio_server("--store", str(store_path)), mode="legacy") as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(listed) == {"search", "read_document", "grep"}
            search = listed["search"]
            assert "sub-agent" in (search.description or "")
            assert search.input_schema["required"] == ["question"]
            assert search.input_schema["properties"]["top_k"]["anyOf"][0]["minimum"] == 1
            schema = search.output_schema or {}
            assert set(schema["properties"]) == set(SearchReport.model_fields)
            evidence = schema["$defs"]["EvidenceItem"]["properties"]
            for field in ("doc_id", "chunk_id", "title", "text", "justification", "found_by"):
                assert field in evidence
            assert evidence["page"]["anyOf"][0]["type"] == "integer"
            assert set(schema["properties"]["stopped_because"]["enum"]) == {
                "final",
                "max_turns",
                "budget",
                "error",
                "deadline",
            }
            assert set(listed["read_document"].output_schema["properties"]) == set(
                DocumentReport.model_fields
            )
            assert set(listed["grep"].output_schema["properties"]) == set(GrepReport.model_fields)
            assert all(
                tool.annotations and tool.annotations.read_only_hint for tool in listed.values()
            )
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["sift://doc/{+doc_id}"]

            # One agentic episode, with progress per turn and per tool call.
            progress: list[tuple[float, float | None, str | None]] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append((value, total, message))

            result = await client.call_tool(
                "search",
                {"question": "Which volcano buried Pompeii?", "top_k": 3},
                progress_callback=on_progress,
            )
            assert not result.is_error, text_of(result)
            report = SearchReport.model_validate(result.structured_content)
            assert report.question == "Which volcano buried Pompeii?"
            assert 1 <= len(report.evidence) <= 3
            assert report.stopped_because == "final"
            ids = [item.doc_id for item in report.evidence]
            assert "vesuvius" in ids
            vesuvius = report.evidence[ids.index("vesuvius")]
            assert vesuvius.page == 3 and vesuvius.pages == [3]
            assert vesuvius.chunk_id == "vesuvius_0" and vesuvius.found_by
            assert vesuvius.metadata["region"] == "europe"
            assert [item.rank for item in report.evidence] == list(range(1, len(ids) + 1))
            text = text_of(result)
            assert "Mount Vesuvius (doc vesuvius; chunk vesuvius_0; p. 3)" in text
            assert vesuvius.text in text
            messages = [m or "" for _, _, m in progress]
            assert any(m.startswith("turn 1/10") for m in messages)
            assert any("search_corpus(" in m for m in messages)
            assert messages[-1].startswith("finished after")
            values = [v for v, _, _ in progress]
            assert values == sorted(values) and len(set(values)) == len(values)
            assert {t for _, t, _ in progress} == {10.0}

            # Japanese passes through intact, both ways.
            japanese = await client.call_tool(
                "search", {"question": "富士山の標高は？", "top_k": 5}
            )
            assert not japanese.is_error, text_of(japanese)
            found = SearchReport.model_validate(japanese.structured_content)
            assert found.question == "富士山の標高は？"
            fuji = next(item for item in found.evidence if item.doc_id == "fuji")
            assert fuji.title == "富士山" and "3776メートル" in fuji.text
            assert "富士山 (doc fuji; chunk fuji_0)" in text_of(japanese)
            grep = await client.call_tool("grep", {"pattern": "標高は[0-9]+"})
            assert [hit["doc_id"] for hit in grep.structured_content["hits"]] == ["fuji"]

            # The other tools and the resource.
            read = await client.call_tool("read_document", {"doc_id": "pompeii"})
            document = DocumentReport.model_validate(read.structured_content)
            assert document.total_chunks == 1 and document.next_chunk is None
            assert document.chunks[0].pages == [4, 5] and document.uri == "sift://doc/pompeii"
            resource = await client.read_resource("sift://doc/pliny")
            assert "Tacitus" in resource.contents[0].text

            # Bad arguments: clear tool errors, and the server keeps serving.
            bad = {
                ("search", "question"): {"question": ""},
                ("search", "the question is empty"): {"question": "   "},
                ("search", "limit is 2,000"): {"question": "why " * 1000},
                ("search", "top_k"): {"question": "volcano", "top_k": -1},
                ("search", "max_turns=101 is above"): {"question": "volcano", "max_turns": 101},
                ("search", "not a valid metadata filter"): {
                    "question": "volcano",
                    "filters": {"conditions": [{"field": "region", "op": "like"}]},
                },
                ("grep", "invalid grep pattern"): {"pattern": "(unclosed"},
                ("read_document", "no document with id 'nowhere'"): {"doc_id": "nowhere"},
                ("read_document", "start_chunk=5 is past the end"): {
                    "doc_id": "etna",
                    "start_chunk": 5,
                },
            }
            for (tool, expected), arguments in bad.items():
                answer = await client.call_tool(tool, arguments)
                assert answer.is_error, (tool, arguments)
                assert expected in text_of(answer), (expected, text_of(answer))
            with pytest.raises(MCPError, match="no document with id 'nowhere'"):
                await client.read_resource("sift://doc/nowhere")

            filtered = await client.call_tool(
                "search", {"question": "volcano", "filters": {"region": "america"}}
            )
            assert {e["doc_id"] for e in filtered.structured_content["evidence"]} == {"rainier"}


async def test_a_missing_store_is_an_error_naming_it(
    tmp_path: Path, stdio_server: Callable[..., StdioServerParameters]
) -> None:
    missing = tmp_path / "no-such-store"
    with (tmp_path / "stderr.txt").open("w+", encoding="utf-8") as errlog:
        with anyio.fail_after(HANG_GUARD_S), pytest.raises(BaseException) as failure:
            async with Client(
                stdio_client(stdio_server("--store", str(missing)), errlog=errlog)
            ) as client:
                await client.list_tools()
        errlog.seek(0)
        logged = errlog.read()
    assert f"sift: error: no sift store at {missing}" in logged
    assert not missing.exists()  # no empty store created in its place
    closed = failure.value
    while isinstance(closed, BaseExceptionGroup):
        closed = closed.exceptions[0]
    assert isinstance(closed, MCPError) and "Connection closed" in str(closed)
