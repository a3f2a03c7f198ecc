"""sift as a LangChain tool: its schema (what the model sees), its answers, its errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from sift.graphs import ScriptedPolicy
from sift.integrations.langchain import SiftRetriever, create_sift_tool
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document, SearchResult

DOCS = [
    Document(
        id="vesuvius",
        title="Mount Vesuvius",
        text="Mount Vesuvius is a volcano near Naples; in 79 AD it buried Pompeii.",
        metadata={"region": "europe", "page": 12},
    ),
    Document(
        id="etna",
        title="Mount Etna",
        text="Mount Etna is an active volcano on Sicily.",
        metadata={"region": "europe"},
    ),
    Document(
        id="rainier",
        title="Mount Rainier",
        text="Mount Rainier is a volcano near Seattle.",
        metadata={"region": "america"},
    ),
    Document(
        id="fuji",
        title="富士山",
        text="富士山は日本一高い火山で、標高は3776メートルです。",
        metadata={"region": "asia"},
    ),
]


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[SqliteCorpus]:
    store = SqliteCorpus(tmp_path / "store", embedder="hash")
    store.upsert(DOCS)
    yield store
    store.close()


def call(tool: BaseTool, **arguments: Any) -> ToolMessage:
    """Invokes the tool as an agent does: with a tool call, which yields a ToolMessage."""
    message = tool.invoke(
        {"type": "tool_call", "id": "call-1", "name": tool.name, "args": arguments}
    )
    assert isinstance(message, ToolMessage)
    return message


def test_the_model_sees_when_to_delegate_and_what_to_send(corpus: SqliteCorpus) -> None:
    tool = create_sift_tool(corpus)
    assert tool.name == "sift_search"
    declared = convert_to_openai_tool(tool)["function"]
    assert declared["name"] == "sift_search"
    for phrase in ("sub-agent", "does not answer", "cite the document ids"):
        assert phrase in declared["description"]
    parameters = declared["parameters"]
    assert parameters["required"] == ["question"]
    assert set(parameters["properties"]) == {"question", "filters", "top_k", "max_turns"}
    top_k = parameters["properties"]["top_k"]["anyOf"][0]
    assert (top_k["minimum"], top_k["maximum"]) == (1, 200)


def test_a_call_answers_text_for_the_model_and_the_result_for_the_app(
    corpus: SqliteCorpus,
) -> None:
    policy = ScriptedPolicy([[{"name": "search_corpus", "arguments": {"query": "Pompeii"}}]])
    tool = create_sift_tool(corpus, policy=policy, top_k=2)
    message = call(tool, question="Which volcano buried Pompeii?")
    assert message.status == "success"
    assert isinstance(message.artifact, SearchResult)
    assert message.artifact.evidence[0].doc_id == "vesuvius"
    text = str(message.content)
    assert text.startswith("sift found ")
    assert "[1] Mount Vesuvius (doc vesuvius; chunk vesuvius_0; p. 12)" in text
    assert text.count("\n[") <= 2  # top_k passages at most
    # The call's own arguments win over the tool's defaults.
    america = call(tool, question="volcano", filters={"region": "america"}, top_k=1)
    assert [e.doc_id for e in america.artifact.evidence] == ["rainier"]


async def test_the_tool_runs_async_and_in_japanese(corpus: SqliteCorpus) -> None:
    tool = create_sift_tool(corpus, top_k=4)
    message = await tool.ainvoke(
        {
            "type": "tool_call",
            "id": "c",
            "name": tool.name,
            "args": {"question": "富士山の標高は？"},
        }
    )
    assert message.artifact.question == "富士山の標高は？"
    assert "富士山 (doc fuji; chunk fuji_0)" in message.content
    assert "3776メートル" in message.content


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"question": "   "}, "the question is empty"),
        ({"question": "why " * 1000}, "the limit is 2,000"),
        ({"question": "volcano", "top_k": 0}, "invalid arguments: top_k: Input should be"),
        ({"question": "volcano", "max_turns": 500}, "max_turns=500 is above the limit of 100"),
        (
            {"question": "volcano", "filters": {"conditions": [{"field": "x", "op": "like"}]}},
            "not a valid metadata filter",
        ),
    ],
)
def test_bad_arguments_come_back_to_the_model_as_errors(
    corpus: SqliteCorpus, arguments: dict[str, Any], expected: str
) -> None:
    message = call(create_sift_tool(corpus), **arguments)
    assert message.status == "error"
    assert expected in str(message.content)


def test_a_retriever_becomes_the_same_tool(corpus: SqliteCorpus) -> None:
    retriever = SiftRetriever(corpus=corpus, k=1, filters={"region": "asia"})
    tool = retriever.as_tool()
    assert tool.name == "sift_search" and "sub-agent" in tool.description
    message = call(tool, question="volcano")
    assert [e.doc_id for e in message.artifact.evidence] == ["fuji"]  # its k and filters
    named = retriever.as_tool(name="search_docs", description="Search the docs.")
    assert (named.name, named.description) == ("search_docs", "Search the docs.")
    with pytest.raises(ValueError, match="single-shot SiftRetriever"):
        SiftRetriever(corpus=corpus, mode="single_shot").as_tool()
    # LangChain's generic form stays available (LangChain marks it beta).
    with pytest.warns(Warning, match="beta"):
        generic = retriever.as_tool(arg_types={"input": str}, name="plain")
    assert generic.name == "plain"


def test_bad_defaults_fail_when_the_tool_is_made(corpus: SqliteCorpus) -> None:
    with pytest.raises(ValueError, match="top_k must be between 1 and 200"):
        create_sift_tool(corpus, top_k=0)
    with pytest.raises(ValueError, match="not a valid metadata filter"):
        create_sift_tool(corpus, filters={"conditions": [{"field": "", "op": "eq"}]})
