"""sift.llm: the tool declarations follow the configuration, and a reply with an unreadable
batch beside readable calls keeps the readable ones."""

from __future__ import annotations

from sift.config import HarnessConfig
from sift.llm import (
    MULTI_TOOL,
    TOOL_NAMES,
    build_decision,
    expand_calls,
    tool_schemas,
)
from sift.types import PolicyView


def descriptions(tools: list[dict]) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in tools}


def view(turn: int = 1) -> PolicyView:
    return PolicyView(
        question="q", turn=turn, max_turns=5, messages=[], threshold=1, rejection=2, budget=3
    )


def test_default_declarations_are_the_trained_ones():
    tools = tool_schemas()
    assert [t["function"]["name"] for t in tools] == [*TOOL_NAMES, MULTI_TOOL]
    text = descriptions(tools)
    assert text["search_corpus"] == (
        "Hybrid (keyword + semantic) search over the corpus. Returns up to 10 new chunks, "
        "never one an earlier search already returned. Each chunk starts with "
        "'# DOCUMENT ID: <chunk_id> (<n> tokens)'."
    )
    assert text["grep_corpus"] == (
        "Regular-expression search over every chunk (RE2 syntax). Returns up to 5 matching "
        "chunks. Use it for exact names, numbers, quoted phrases and identifiers."
    )


def test_declared_result_sizes_follow_the_configuration(monkeypatch):
    text = descriptions(tool_schemas(search_max_chunks=4, grep_max_hits=2))
    assert "Returns up to 4 new chunks" in text["search_corpus"]
    assert "Returns up to 2 matching chunks" in text["grep_corpus"]
    monkeypatch.setenv("SIFT_SEARCH_MAX_CHUNKS", "7")
    assert HarnessConfig().search_max_chunks == 7
    assert "Returns up to 7 new chunks" in descriptions(tool_schemas())["search_corpus"]
    assert len(tool_schemas(multi_tool_use=False)) == len(TOOL_NAMES)


def test_an_unreadable_batch_beside_readable_calls_keeps_them():
    calls = expand_calls(
        [
            ("search_corpus", {"query": "Vesuvius"}),
            ("multi_tool_use", {"tool_calls": "search a, then b"}),
            ("grep_corpus", {"pattern": "Pompeii"}),
        ],
        id_prefix="t1",
    )
    decision = build_decision(calls, content="", thinking=None, view=view())
    assert decision.error is None
    assert [c.name for c in decision.tool_calls] == [
        "search_corpus",
        MULTI_TOOL,
        "grep_corpus",
    ]


def test_an_unreadable_batch_alone_is_a_policy_error():
    calls = expand_calls([("multi_tool_use", {"tool_calls": "search a"})], id_prefix="t1")
    decision = build_decision(calls, content="", thinking=None, view=view())
    assert decision.tool_calls == []
    assert decision.error.startswith('multi_tool_use needs {"tool_calls": [{"name": <tool>,')
