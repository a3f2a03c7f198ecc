"""Whole episodes over the wire with the reply shapes a real small model wrote (issue 27):
calls in text, a reply cut off by the token limit, prose instead of calls, a final list
naming chunks the model pruned. The real graph, a real SQLite store, the loopback Ollama."""

from __future__ import annotations

import re
from typing import Any

from sift.graphs import HarnessConfig, asearch
from sift.integrations.ollama import OllamaPolicy
from sift.integrations.ollama.testing import FakeOllama, final_answer, reply

QUESTION = "Which volcano buried Pompeii, and in which country is it?"
FAST = {"timeout": 60.0, "connect_timeout": 60.0, "backoff": 0.01, "num_predict": 512}
_BLOCK = re.compile(r"# DOCUMENT ID: (\S+)")


def qwen() -> FakeOllama:
    return FakeOllama(
        models=["qwen2.5-coder:1.5b"], family="qwen2", capabilities=["completion", "tools"]
    )


def policy(server: FakeOllama) -> OllamaPolicy:
    return OllamaPolicy("qwen2.5-coder:1.5b", host=server.host, **FAST)


def shown(body: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for m in body["messages"]:
        if m["role"] == "tool":
            ids += [i for i in _BLOCK.findall(m.get("content", "")) if i not in ids]
    return ids


def fenced(name: str, **arguments: Any) -> str:
    import json

    return f"```json\n{json.dumps({'name': name, 'arguments': arguments})}\n```"


async def test_a_cut_off_reply_runs_its_complete_calls_and_the_model_is_told(corpus):
    cut = (
        "I will search for the volcano and grep for Pompeii.\n"
        + fenced("search_corpus", query="volcano that buried Pompeii")
        + "\n"
        + fenced("grep_corpus", pattern="Pompeii")
        + '\n```json\n{"name": "read_document", "arguments": {"doc_id": "vesu'
    )

    def answer(body: dict[str, Any]):
        return final_answer([(i, "found") for i in shown(body)[:2]])

    with qwen() as server:
        server.script(reply(cut, done_reason="length", eval_count=512), answer)
        result = await asearch(
            QUESTION, corpus, policy=policy(server), config=HarnessConfig(max_turns=4)
        )
        second = server.chat_requests()[1]["messages"]
    assert result.stopped_because == "final"
    assert [c.tool for c in result.trace[0].calls] == [
        "search_corpus",
        "grep_corpus",
        "<unreadable call>",
    ]
    assert result.trace[0].calls[2].error.startswith("Error: this call could not be read")
    assert '"doc_id": "vesu' in result.trace[0].calls[2].error
    # The transcript holds the calls once, as calls; only the prose stays as text.
    assistant = next(m for m in second if m["role"] == "assistant")
    assert assistant["content"] == "I will search for the volcano and grep for Pompeii."
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == [
        "search_corpus",
        "grep_corpus",
        "<unreadable call>",
    ]
    tools = [m["content"] for m in second if m["role"] == "tool"]
    assert "cut off at 512 tokens" in tools[-1]
    assert result.evidence  # the final list of the next turn


async def test_a_cut_off_reply_naming_ids_is_not_a_final_list(corpus):
    def cut_prune(body: dict[str, Any]):
        ids = shown(body)
        # The shape that ended episodes before: a complete prune call naming seen ids,
        # then a block cut off; the final-list reader used to take those ids.
        text = fenced("prune_chunks", chunk_ids=ids[:2]) + '\n```json\n{"name": "sear'
        return reply(text, done_reason="length", eval_count=512)

    with qwen() as server:
        server.script(
            reply(fenced("search_corpus", query="Pompeii volcano")),
            cut_prune,
            reply("I think the documents are enough."),
            reply("Done."),
            reply("見つかりました。"),
        )
        result = await asearch(
            QUESTION, corpus, policy=policy(server), config=HarnessConfig(max_turns=8)
        )
        bodies = server.chat_requests()
    pruned = set(result.trace[1].calls[0].pruned)
    assert len(pruned) == 2
    assert result.stopped_because == "error"  # three prose replies in a row
    assert "neither a tool call nor a final list" in result.error
    assert len(bodies) == 5
    # Each prose reply was answered with a request for calls or a final list.
    for body in bodies[3:]:
        assert "neither a tool call nor a final list" in body["messages"][-1]["content"]
    # The evidence is what the context still holds, never the pruned chunks.
    assert result.evidence
    assert not pruned & {e.chunk_id for e in result.evidence}


async def test_a_final_list_naming_pruned_chunks_is_not_taken_as_is(corpus):
    picked: dict[str, list[str]] = {}

    def prune_first(body: dict[str, Any]):
        picked["ids"] = shown(body)
        return reply(fenced("prune_chunks", chunk_ids=picked["ids"][:1]))

    def final(body: dict[str, Any]):
        return final_answer([(i, "relevant") for i in picked["ids"]])

    with qwen() as server:
        server.script(reply(fenced("search_corpus", query="Vesuvius Pompeii")), prune_first, final)
        result = await asearch(QUESTION, corpus, policy=policy(server))
    ids = picked["ids"]
    assert len(ids) >= 2
    assert result.stopped_because == "final"
    assert [e.chunk_id for e in result.evidence] == ids[1:]
    assert f"final_ids_pruned:{ids[0]}" in result.flags


async def test_a_plan_naming_ids_is_answered_not_taken_as_the_final_list(corpus):
    def plan(body: dict[str, Any]):
        first = shown(body)[0]
        return reply(f"Next I will read {first} in full and then search for Italy.")

    with qwen() as server:
        server.script(
            reply(fenced("search_corpus", query="Pompeii")),
            plan,
            reply(
                "<tool_call>\n"
                + '{"name": "grep_corpus", "arguments": {"pattern": "Italy"}}'
                + "\n</tool_call>"
            ),
            lambda body: final_answer([(i, "x") for i in shown(body)[:3]]),
        )
        result = await asearch(QUESTION, corpus, policy=policy(server))
    assert result.stopped_because == "final"
    assert [t.note for t in result.trace][1].startswith("policy error: the reply held neither")
    assert [c.tool for c in result.trace[2].calls] == ["grep_corpus"]
    # The model's three (justified "x"; the plain search's first may lead, its note
    # before the model's words), then the harness's plain search fills the list.
    assert sum(e.justification.endswith("x") for e in result.evidence) == 3
