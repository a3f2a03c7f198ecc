"""Whole episodes: the real graph (`sift.graphs.asearch`) over a real SQLite store, with
the Ollama policy talking to the loopback Ollama. Asserts the requests on the wire and
the SearchResult that comes out."""

from __future__ import annotations

import re
from typing import Any

from sift.graphs import HarnessConfig, asearch
from sift.integrations.ollama import OllamaPolicy
from sift.integrations.ollama.testing import (
    FakeOllama,
    Fault,
    final_answer,
    multi_tool_use,
    reply,
    tool_call,
    tool_parse_error,
)
from sift.llm import task_prompt

QUESTION = "Which volcano buried Pompeii, and in which country is it?"

# Quick retries; timeouts that only bound a broken run (the fake answers at once), never
# reached on a loaded machine.
FAST = {"timeout": 60.0, "connect_timeout": 60.0, "backoff": 0.01}
_BLOCK = re.compile(r"# DOCUMENT ID: (\S+)")


def _config(**settings: object) -> HarnessConfig:
    """The recorded episodes' evidence is the model's list as it gave it (the harness's
    own plain-search picks are tested in tests/graphs/policies/test_planner_depth.py)."""
    return HarnessConfig(keep_plain_search=False, **settings)  # type: ignore[arg-type]


def seen_ids(body: dict[str, Any]) -> list[str]:
    """Chunk ids shown to the model so far, in order, from the request's tool messages."""
    ids: list[str] = []
    for m in body["messages"]:
        if m["role"] == "tool":
            ids += [i for i in _BLOCK.findall(m.get("content", "")) if i not in ids]
    return ids


def answer_with_seen(body: dict[str, Any]):
    ids = seen_ids(body)
    return final_answer([(i, f"shown as {i}") for i in ids[:2]])


async def test_full_episode_over_the_wire(corpus):
    with FakeOllama() as server:
        server.script(
            reply(
                thinking="Two concepts: the volcano and Pompeii.",
                tool_calls=[
                    multi_tool_use(
                        tool_call("search_corpus", query="volcano that buried Pompeii"),
                        tool_call("grep_corpus", pattern="Vesuvius"),
                    )
                ],
            ),
            reply(
                thinking="Read the Vesuvius page.",
                tool_calls=[tool_call("read_document", doc_id="vesuvius")],
            ),
            answer_with_seen,
        )
        policy = OllamaPolicy(host=server.host, num_predict=2048, **FAST)
        result = await asearch(QUESTION, corpus, policy=policy, config=_config(max_turns=6))
        await policy.aclose()

    assert result.stopped_because == "final", result.error
    bodies = server.chat_requests()
    assert len(bodies) == 3
    for body in bodies:
        assert body["options"]["num_ctx"] >= 32768 + 2048
        assert (body["think"], body["stream"], body["model"]) == ("high", True, "gpt-oss:20b")
        assert body["messages"][0] == {"role": "user", "content": task_prompt(QUESTION, 30)}

    # Turn 2 sees turn 1 as the model wrote it: its thinking, one multi_tool_use call,
    # answered by one combined tool message.
    second = bodies[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool"]
    assert second[1]["thinking"] == "Two concepts: the volcano and Pompeii."
    [batch] = second[1]["tool_calls"]
    assert batch["function"]["name"] == "multi_tool_use"
    assert [c["name"] for c in batch["function"]["arguments"]["tool_calls"]] == [
        "search_corpus",
        "grep_corpus",
    ]
    assert second[2]["tool_name"] == "multi_tool_use"
    assert "# DOCUMENT ID: vesuvius_0" in second[2]["content"]
    assert re.search(r"\[Token usage: \d+/16384\]", second[2]["content"])

    third = bodies[2]["messages"]
    assert [m["role"] for m in third] == ["user", "assistant", "tool", "assistant", "tool"]
    assert third[3]["thinking"] == "Read the Vesuvius page."
    assert third[4]["tool_name"] == "read_document"

    # The result: the answered chunks, in order, with their justifications and provenance.
    expected = seen_ids(bodies[2])[:2]
    assert [e.chunk_id for e in result.evidence[:2]] == expected
    assert [e.justification for e in result.evidence[:2]] == [f"shown as {i}" for i in expected]
    assert result.evidence[0].found_by
    # The budget followed Ollama's exact counts, not the estimate.
    server_counts = [server.prompt_tokens(b) for b in bodies]
    assert result.usage.prompt_tokens == sum(server_counts)
    assert result.usage.turns == 3


async def test_unknown_tool_and_repaired_arguments_reach_the_model_as_observations(corpus):
    with FakeOllama() as server:
        server.script(
            reply(tool_calls=[tool_call("web_search", q="Pompeii")]),
            # gpt-oss's lone backslash: Ollama answers 500; sift repairs the raw text.
            tool_parse_error('We need years. {"pattern": "\\d\\d AD"}'),
            answer_with_seen,
        )
        policy = OllamaPolicy(host=server.host, **FAST)
        result = await asearch(QUESTION, corpus, policy=policy, config=_config())
        await policy.aclose()

    assert result.stopped_because == "final", result.error
    bodies = server.chat_requests()
    assert len(bodies) == 3
    unknown = bodies[1]["messages"][-1]
    assert unknown["role"] == "tool" and "web_search" in unknown["content"]
    grep_turn = bodies[2]["messages"]
    assert grep_turn[-2]["tool_calls"][0]["function"] == {
        "name": "grep_corpus",
        "arguments": {"pattern": "\\d\\d AD"},
    }
    assert "# DOCUMENT ID: vesuvius_0" in grep_turn[-1]["content"]  # "79 AD" matched
    assert [e.chunk_id for e in result.evidence][:1] == ["vesuvius_0"]


async def test_model_server_failing_mid_episode_stops_with_error_and_keeps_evidence(corpus):
    with FakeOllama() as server:
        server.script(
            reply(tool_calls=[tool_call("search_corpus", query="Pompeii volcano")]),
            *(Fault(status=500, error="CUDA out of memory") for _ in range(3)),
        )
        policy = OllamaPolicy(host=server.host, retries=2, **FAST)
        result = await asearch(QUESTION, corpus, policy=policy, config=_config())
        await policy.aclose()

    assert result.stopped_because == "error"
    assert "CUDA out of memory" in result.error and server.host in result.error
    assert result.evidence, "the chunks found before the failure are returned"
    assert len(server.chat_requests()) == 4  # one turn, then 1 try + 2 retries


async def test_repeated_unreadable_replies_end_the_episode_with_error(corpus):
    with FakeOllama() as server:
        server.responder = lambda _body: tool_parse_error("just prose, no call")
        policy = OllamaPolicy(host=server.host, retries=0, **FAST)
        result = await asearch(
            QUESTION, corpus, policy=policy, config=_config(max_failed_turns=2, max_turns=8)
        )
        await policy.aclose()
    assert result.stopped_because == "error"
    assert "could not be read" in result.error
    assert len(server.chat_requests()) == 2
    # The model was told what went wrong before its second try.
    assert "could not be read" in server.chat_requests()[1]["messages"][-1]["content"]


async def test_final_list_recovered_from_thinking_is_flagged(corpus):
    def thinking_only(body):
        ids = seen_ids(body)
        return reply(
            "", thinking=f"Final: <Document id={ids[0]}><Justification>k</Justification></Document>"
        )

    with FakeOllama() as server:
        server.script(
            reply(tool_calls=[tool_call("search_corpus", query="Pompeii")]), thinking_only
        )
        policy = OllamaPolicy(host=server.host, **FAST)
        result = await asearch(QUESTION, corpus, policy=policy, config=_config())
        await policy.aclose()
    assert result.stopped_because == "final"
    assert "final_from_thinking" in result.flags
    assert result.evidence[0].chunk_id == seen_ids(server.chat_requests()[1])[0]


async def test_missing_model_stops_the_episode_naming_ollama_pull(corpus):
    with FakeOllama(models=["llama3.2:1b"]) as server:
        policy = OllamaPolicy("gpt-oss:20b", host=server.host, **FAST)
        result = await asearch(QUESTION, corpus, policy=policy, config=_config())
        await policy.aclose()
    assert result.stopped_because == "error"
    assert "ollama pull gpt-oss:20b" in result.error


async def test_rollouts_fork_seeds_and_merge(corpus):
    def first_turn(body):
        return reply(tool_calls=[tool_call("search_corpus", query="Pompeii volcano")])

    def turn(body):
        answered = any(m["role"] == "tool" for m in body["messages"])
        return answer_with_seen(body) if answered else first_turn(body)

    with FakeOllama(responder=turn) as server:
        policy = OllamaPolicy(host=server.host, temperature=0.0, **FAST)
        result = await asearch(QUESTION, corpus, policy=policy, rollouts=3)
        await policy.aclose()
    assert result.stopped_because == "final", result.error
    options = {(b["options"]["seed"], b["options"]["temperature"]) for b in server.chat_requests()}
    assert options == {(0, 1.0), (1, 1.0), (2, 1.0)}
    assert len(server.chat_requests()) == 6
    assert server.paths().count("/api/show") == 1
    assert result.evidence


async def test_seed_search_reaches_the_model_as_its_first_call_and_its_results(corpus):
    # The first request the model gets already holds the harness's search of the
    # question, as an assistant tool call answered by a tool message, in Ollama's shape.
    with FakeOllama() as server:
        server.script(answer_with_seen)
        policy = OllamaPolicy(host=server.host, num_predict=2048, **FAST)
        config = _config(max_turns=3, seed_search=True)
        result = await asearch(QUESTION, corpus, policy=policy, config=config)
        await policy.aclose()
    assert result.stopped_because == "final", result.error
    [body] = server.chat_requests()
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    [seed] = messages[1]["tool_calls"]
    assert seed["function"]["name"] == "search_corpus"
    assert seed["function"]["arguments"] == {"query": QUESTION}
    assert seen_ids(body) == result.trace[0].calls[0].added
    # The model's final list names two of them: the evidence.
    assert [e.chunk_id for e in result.evidence] == seen_ids(body)[:2]
