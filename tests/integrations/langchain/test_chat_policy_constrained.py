"""Constrained decisions through ChatModelPolicy (issue 45), at the wire: the real ChatOpenAI
against a loopback server speaking OpenAI's /v1/chat/completions (as llama.cpp's server
and vLLM do) gets the decision's schema as `response_format`; the real ChatOllama against
the loopback Ollama gets it as `format` through its structured output."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_ollama import ChatOllama
from langchain_openai import ChatOpenAI

from sift.graphs import HarnessConfig, asearch
from sift.integrations.langchain import ChatModelPolicy
from sift.integrations.ollama.testing import FakeOllama, reply
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document, Message, PolicyView
from tests.core.test_llm_constrained import final_enum, max_calls, seeded_view
from tests.integrations.openai_loopback import OpenAICompatible

QUESTION = "宝永大噴火で灰が降った都市はどこ？"


def openai_model(server: OpenAICompatible, **fields: Any) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base,
        api_key="not-needed",
        model="qwen2.5-coder-1.5b",
        temperature=0,
        max_retries=0,
        timeout=60,
        **fields,
    )


def shown_view(*ids: str) -> PolicyView:
    return seeded_view(QUESTION, *ids)


async def test_chat_openai_sends_the_schema_as_response_format_and_reads_the_final_list():
    graded = '{"final": {"fuji_0": 0, "hoei_0": 2, "edo_3": 1}}'
    with OpenAICompatible((graded, "stop")) as server:
        policy = ChatModelPolicy(openai_model(server, max_tokens=768), constrained=True)
        d = await policy.decide(shown_view("fuji_0", "hoei_0", "edo_3"))
    [body] = server.requests
    assert not body.get("tools")
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert (fmt["json_schema"]["name"], fmt["json_schema"]["strict"]) == ("decision", True)
    schema = fmt["json_schema"]["schema"]  # where llama.cpp's server reads it
    assert final_enum(schema) == ["fuji_0", "hoei_0", "edo_3"]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert "<Document" not in body["messages"][1]["content"]
    # By grade, 0 last: the list ranks every chunk shown.
    assert [f.id for f in d.final or []] == ["hoei_0", "edo_3", "fuji_0"] and d.error is None
    assert (d.prompt_tokens, d.completion_tokens) == (500, 64)


async def test_chat_openai_constrained_calls_become_the_decision():
    calls = {
        "calls": [
            {"name": "search_corpus", "arguments": {"query": "江戸 降灰 1707"}},
            {"name": "prune_chunks", "arguments": {"chunk_ids": ["fuji_0"]}},
        ]
    }
    with OpenAICompatible((json.dumps(calls, ensure_ascii=False), "stop")) as server:
        policy = ChatModelPolicy(openai_model(server), constrained=True)
        d = await policy.decide(shown_view("fuji_0", "hoei_0"))
    assert [(c.name, c.arguments) for c in d.tool_calls] == [
        ("search_corpus", {"query": "江戸 降灰 1707"}),
        ("prune_chunks", {"chunk_ids": ["fuji_0"]}),
    ]
    assert d.answer_repeats and d.calls_from_text == 0


async def test_chat_openai_cut_off_is_asked_again_shorter_then_an_error():
    cut = ('{"final": ["hoei_0", "fu', "length")
    with OpenAICompatible(cut, cut) as server:
        policy = ChatModelPolicy(openai_model(server, max_tokens=512), constrained=True)
        d = await policy.decide(shown_view("fuji_0", "hoei_0"))
    first, second = server.requests
    assert "shorter" in second["messages"][-1]["content"]
    schemas = [b["response_format"]["json_schema"]["schema"] for b in (first, second)]
    assert max_calls(schemas[1]) < max_calls(schemas[0])
    assert d.final is None and not d.tool_calls
    assert d.error is not None and "by the token limit twice" in d.error


async def test_a_chat_model_without_bind_tools_is_constrained_by_default():
    # FakeListChatModel implements no bind_tools: auto turns constrained decisions on.
    model = FakeListChatModel(responses=['{"final": ["hoei_0"]}'])
    assert ChatModelPolicy(model).constrained
    with OpenAICompatible() as server:
        assert not ChatModelPolicy(openai_model(server)).constrained


@pytest.fixture
def ollama():
    with FakeOllama(models=["qwen2.5-coder:1.5b"], family="qwen2") as fake:
        yield fake


async def test_chat_ollama_gets_the_schema_as_format_through_structured_output(ollama):
    ollama.script(reply('{"final": ["hoei_0"]}'))
    model = ChatOllama(
        model="qwen2.5-coder:1.5b",
        base_url=ollama.host,
        num_predict=768,
        async_client_kwargs={"timeout": 60.0},
        client_kwargs={"timeout": 60.0},
    )
    policy = ChatModelPolicy(model, constrained=True)
    assert policy.reply_tokens == 768
    d = await policy.decide(shown_view("fuji_0", "hoei_0"))
    [body] = ollama.chat_requests()
    assert final_enum(body["format"]) == ["fuji_0", "hoei_0"]
    assert not body.get("tools")
    assert [f.id for f in d.final or []] == ["hoei_0"]


async def test_a_whole_episode_on_constrained_decisions_through_chat_openai(tmp_path):
    store = SqliteCorpus(tmp_path / "store", embedder="hash")
    docs = [
        Document(id="hoei", title="宝永大噴火", text="宝永大噴火は1707年、江戸にも灰が降った。"),
        Document(id="edo", title="江戸", text="江戸は現在の東京である。"),
        Document(id="etna", title="Etna", text="Mount Etna is a volcano on Sicily."),
    ]
    assert not store.upsert(docs).failed

    def search_edo(body: dict[str, Any]) -> tuple[str, str]:
        call = {"name": "search_corpus", "arguments": {"query": "江戸 東京"}}
        return json.dumps({"calls": [call]}, ensure_ascii=False), "stop"

    def conclude(body: dict[str, Any]) -> tuple[str, str]:
        enum = final_enum(body["response_format"]["json_schema"]["schema"])
        assert "hoei_0" in enum and "edo_0" in enum
        grades = {i: 2 if i == "hoei_0" else int(i == "edo_0") for i in enum}
        return json.dumps({"final": grades}), "stop"

    with OpenAICompatible(search_edo, conclude) as server:
        result = await asearch(
            QUESTION,
            store,
            policy=ChatModelPolicy(openai_model(server, max_tokens=768), constrained=True),
            config=HarnessConfig(seed_search=True, keep_plain_search=False, max_turns=5),
        )
    store.close()
    assert result.stopped_because == "final", result.error
    assert [e.chunk_id for e in result.evidence[:2]] == ["hoei_0", "edo_0"]
    # Tool results reach the model as user turns (no tool messages a template may drop).
    roles = [m["role"] for m in server.requests[-1]["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]


async def test_ask_constrained_sends_the_choice_schema_as_response_format():
    """`ChatModelPolicy.ask_constrained` is AssistedPlanner's ConstrainedAsk: to an
    OpenAI-compatible server (llama-server) the short question's schema goes as
    `response_format.json_schema.schema`, the messages as they are."""
    choice = {
        "type": "object",
        "properties": {"name": {"type": "string", "enum": ["Edo", "none of these"]}},
        "required": ["name"],
        "additionalProperties": False,
    }
    with OpenAICompatible(('{"name": "Edo"}', "stop")) as server:
        policy = ChatModelPolicy(openai_model(server, max_tokens=64), constrained=True)
        asked = [Message(role="system", content="JSON only."), Message(role="user", content="?")]
        answer = await policy.ask_constrained(asked, choice)
    assert json.loads(answer.content) == {"name": "Edo"} and not answer.cut_off
    [body] = server.requests
    assert body["response_format"]["json_schema"]["schema"] == choice
    assert [m["content"] for m in body["messages"]] == ["JSON only.", "?"]
    assert not body.get("tools")
