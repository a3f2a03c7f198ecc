"""Constrained decisions through the Ollama policy (issue 45), at the wire: the decision's
JSON schema is sent as `format` (no tools), a constrained reply becomes the Decision, a
reply cut off by num_predict is asked again shorter, and a whole episode over a real store
runs on them, its repeated search answered as such."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from sift.errors import ModelServerError
from sift.graphs import HarnessConfig, asearch
from sift.integrations.ollama import OllamaPolicy, OllamaSettings
from sift.integrations.ollama.testing import FakeOllama, Reply, reply, tool_call
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.llm import task_prompt
from sift.types import Document, Message, PolicyView
from tests.core.test_llm_constrained import final_enum, max_calls, seeded_view

FAST = {"timeout": 60.0, "connect_timeout": 60.0, "backoff": 0.01}
QUESTION = "富士山が最後に噴火したのは何年ですか？"
_BLOCK = re.compile(r"# DOCUMENT ID: (\S+)")

DOCS = [
    Document(
        id="fuji",
        title="富士山",
        text="富士山は日本で最も高い山である。最後の噴火は1707年の宝永大噴火である。",
    ),
    Document(
        id="hoei",
        title="宝永大噴火",
        text="宝永大噴火は1707年に富士山で起きた噴火で、江戸にも灰が降った。",
    ),
    Document(
        id="etna",
        title="Mount Etna",
        text="Mount Etna is an active volcano on the island of Sicily.",
    ),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    store = SqliteCorpus(tmp_path_factory.mktemp("constrained") / "store", embedder="hash")
    assert not store.upsert(DOCS).failed
    yield store
    store.close()


def small_model(**kwargs: Any) -> FakeOllama:
    """A model without native tool calls, as /api/show describes qwen2.5-coder:1.5b's
    build without a tool template."""
    return FakeOllama(
        models=["qwen2.5-coder:1.5b"], family="qwen2", capabilities=["completion"], **kwargs
    )


def decision(**value: Any) -> Reply:
    return reply(json.dumps(value, ensure_ascii=False))


def shown_view(*ids: str) -> PolicyView:
    return seeded_view(QUESTION, *ids)


async def test_a_model_without_tools_gets_the_decision_schema_as_format():
    with small_model() as server:
        server.script(decision(final={"fuji_0": 1, "hoei_0": 2}))
        p = OllamaPolicy("qwen2.5-coder:1.5b", host=server.host, num_predict=768, **FAST)
        d = await p.decide(shown_view("fuji_0", "hoei_0"))
        await p.aclose()
    assert p.constrained  # auto: /api/show lists no "tools"
    assert [f.id for f in d.final or []] == ["hoei_0", "fuji_0"] and d.error is None
    [body] = server.chat_requests()
    assert not body.get("tools")  # the client sends null
    assert body["options"]["num_predict"] == 768
    assert final_enum(body["format"]) == ["fuji_0", "hoei_0"]
    assert body["format"] == p.request_for(shown_view("fuji_0", "hoei_0"))["format"]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert body["messages"][1]["content"] == task_prompt(
        QUESTION, 30, constrained=True, graded=True
    )
    assert json.loads(body["messages"][2]["content"])["calls"][0]["arguments"] == {
        "query": QUESTION
    }


async def test_constrained_calls_are_read_straight_from_the_reply():
    with small_model() as server:
        server.script(
            decision(
                calls=[
                    {"name": "search_corpus", "arguments": {"query": "宝永大噴火"}},
                    {"name": "grep_corpus", "arguments": {"pattern": "1707"}},
                ]
            )
        )
        p = OllamaPolicy("qwen2.5-coder:1.5b", host=server.host, **FAST)
        d = await p.decide(shown_view("fuji_0"))
        await p.aclose()
    assert [(c.name, c.arguments) for c in d.tool_calls] == [
        ("search_corpus", {"query": "宝永大噴火"}),
        ("grep_corpus", {"pattern": "1707"}),
    ]
    assert d.calls_from_text == 0 and d.answer_repeats and not d.cut_off


async def test_constrained_can_be_chosen_for_a_tool_calling_model(server):
    server.script(decision(calls=[{"name": "search_corpus", "arguments": {"query": "Etna"}}]))
    p = OllamaPolicy(host=server.host, constrained=True, **FAST)
    d = await p.decide(shown_view("etna_0"))
    await p.aclose()
    [body] = server.chat_requests()
    assert "format" in body and not body.get("tools")
    assert d.tool_calls[0].arguments == {"query": "Etna"}


async def test_a_tool_calling_model_keeps_native_tools_by_default(server):
    server.script(reply(tool_calls=[tool_call("search_corpus", query="Etna")]))
    p = OllamaPolicy(host=server.host, **FAST)
    await p.decide(shown_view("etna_0"))
    await p.aclose()
    [body] = server.chat_requests()
    assert "tools" in body and "format" not in body and not p.constrained


async def test_constrained_off_refuses_a_model_without_tools():
    with small_model() as server:
        p = OllamaPolicy("qwen2.5-coder:1.5b", host=server.host, constrained=False, **FAST)
        with pytest.raises(ModelServerError, match="SIFT_OLLAMA_CONSTRAINED"):
            await p.decide(shown_view("fuji_0"))
        await p.aclose()


def test_the_setting_reads_the_environment(monkeypatch):
    monkeypatch.setenv("SIFT_OLLAMA_CONSTRAINED", "true")
    assert OllamaSettings().constrained is True
    monkeypatch.setenv("SIFT_OLLAMA_CONSTRAINED", "auto")
    assert OllamaSettings().constrained is None


async def test_a_cut_off_reply_is_asked_again_shorter_then_taken():
    with small_model() as server:
        server.script(
            Reply(content='{"final": ["fuji_0", "ho', done_reason="length", eval_count=768),
            decision(final=["hoei_0"]),
        )
        p = OllamaPolicy("qwen2.5-coder:1.5b", host=server.host, num_predict=768, **FAST)
        d = await p.decide(shown_view("fuji_0", "hoei_0", "etna_0"))
        await p.aclose()
    assert [f.id for f in d.final or []] == ["hoei_0"] and d.error is None
    first, second = server.chat_requests()
    note = second["messages"][-1]
    assert note["role"] == "user" and "cut off at 768 tokens" in note["content"]
    assert "shorter" in note["content"]
    assert max_calls(second["format"]) < max_calls(first["format"])
    assert second["messages"][:-1][1:] == first["messages"][1:]


async def test_a_reply_cut_off_twice_is_an_error_never_a_decision():
    cut = Reply(content='{"final": ["fuji_0", "hoe', done_reason="length", eval_count=768)
    with small_model() as server:
        server.script(cut, cut)
        p = OllamaPolicy("qwen2.5-coder:1.5b", host=server.host, num_predict=768, **FAST)
        d = await p.decide(shown_view("fuji_0", "hoei_0"))
        await p.aclose()
    assert len(server.chat_requests()) == 2
    assert d.final is None and not d.tool_calls
    assert d.error is not None and "cut off at 768 tokens by the token limit twice" in d.error


def shown(body: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for m in body["messages"]:
        if m["content"].startswith("[search_corpus results]"):
            ids += [i for i in _BLOCK.findall(m["content"]) if i not in ids]
    return ids


async def test_an_episode_on_constrained_decisions_answers_a_repeated_search(corpus):
    def repeat_the_question(body: dict[str, Any]) -> Reply:
        # What a small model does (issue 45): the question again, and a new search.
        calls = [
            {"name": "search_corpus", "arguments": {"query": f"  {QUESTION} "}},
            {"name": "search_corpus", "arguments": {"query": "宝永大噴火 江戸"}},
        ]
        return decision(calls=calls)

    def answer(body: dict[str, Any]) -> Reply:
        # Every id the context shows is in the schema; one it never showed is not.
        enum = final_enum(body["format"])
        assert enum == shown(body) and "hoei_0" in enum
        return decision(final={i: 2 if i == "hoei_0" else 1 for i in enum})

    with small_model() as server:
        server.script(repeat_the_question, answer)
        policy = OllamaPolicy("qwen2.5-coder:1.5b", host=server.host, **FAST)
        result = await asearch(
            QUESTION,
            corpus,
            policy=policy,
            config=HarnessConfig(seed_search=True, keep_plain_search=False, max_turns=6),
        )
        await policy.aclose()
    assert result.stopped_because == "final", result.error
    assert result.evidence[0].chunk_id == "hoei_0"
    first, second = server.chat_requests()
    # Turn 2 (the model's first) already offers the seed search's chunks as the final list.
    assert final_enum(first["format"]) == shown(first)
    [turn] = [t for t in result.trace if t.turn == 2]
    repeat, fresh = turn.calls
    assert repeat.error is not None and "already ran and is not run again" in repeat.error
    assert not repeat.added and fresh.error is None
    # The model is told, in the transcript it reads next.
    [told] = [m for m in second["messages"] if "already ran" in m["content"]]
    assert told["role"] == "user" and told["content"].startswith("[search_corpus results]")
    assert QUESTION in told["content"]


@pytest.mark.parametrize(
    ("setting", "answer", "first"),
    [
        # The default: a grade for each id shown, the list by grade (0s last).
        (None, lambda ids: {i: 2 if i == "hoei_0" else 0 for i in ids}, "hoei_0"),
        ("list", lambda ids: ["hoei_0"], "hoei_0"),
    ],
)
async def test_the_run_settings_choose_how_the_final_answer_is_written(
    corpus, setting, answer, first
):
    """HarnessConfig.constrained_final reaches the schema from the run's settings, as
    `--set constrained_final=list` or SIFT_CONSTRAINED_FINAL does."""
    overrides = {} if setting is None else {"constrained_final": setting}

    def conclude(body: dict[str, Any]) -> Reply:
        return decision(final=answer(final_enum(body["format"])))

    with small_model() as server:
        server.script(conclude)
        policy = OllamaPolicy("qwen2.5-coder:1.5b", host=server.host, **FAST)
        result = await asearch(
            QUESTION,
            corpus,
            policy=policy,
            config=HarnessConfig(seed_search=True, keep_plain_search=False, **overrides),
        )
        await policy.aclose()
    assert result.stopped_because == "final", result.error
    assert result.evidence[0].chunk_id == first
    [body] = server.chat_requests()
    [final] = [b for b in body["format"]["anyOf"] if "final" in b["properties"]]
    shape = final["properties"]["final"]
    assert shape["type"] == ("array" if setting == "list" else "object")
    if setting is None:
        # Every chunk shown is ranked; the justification says the model's grade.
        assert [e.justification for e in result.evidence][:1] == [
            "graded 2: it states part of the answer"
        ]
        assert len(result.evidence) == len(shape["required"])


# ---------------------------------------------------------------- AssistedPlanner's ask


CHOICE = {
    "type": "object",
    "properties": {"passages": {"type": "array", "items": {"type": "integer", "enum": [1, 2]}}},
    "required": ["passages"],
    "additionalProperties": False,
}


async def test_ask_constrained_sends_the_choice_schema_as_format():
    """`OllamaPolicy.ask_constrained` is AssistedPlanner's ConstrainedAsk: the short
    question's messages as they are, its schema as `format`, no tools."""
    with small_model() as server:
        server.script(reply('{"passages": [2]}'))
        p = OllamaPolicy("qwen2.5-coder:1.5b", host=server.host, num_predict=64, **FAST)
        asked = [
            Message(role="system", content="JSON only."),
            Message(role="user", content="1 or 2?"),
        ]
        answer = await p.ask_constrained(asked, CHOICE)
        await p.aclose()
    assert json.loads(answer.content) == {"passages": [2]} and not answer.cut_off
    [body] = server.chat_requests()
    assert body["format"] == CHOICE and not body.get("tools")
    assert body["messages"] == [
        {"role": "system", "content": "JSON only."},
        {"role": "user", "content": "1 or 2?"},
    ]
    assert body["options"]["num_predict"] == 64


async def test_assisted_planner_through_ollama_falls_back_when_the_server_is_down(tmp_path):
    """The planner's result stands, whole, when the model's server cannot be reached;
    the failed ask is counted."""
    from sift.graphs.policies import AssistedPlanner, HeuristicPlanner
    from sift.integrations.ollama.testing import refused_host

    # Past 10 passages, so that the final list leaves the model something to bring up.
    many = DOCS + [
        Document(id=f"yama{i}", title=f"山{i}", text=f"富士山の近くの山{i}も噴火した火山である。")
        for i in range(14)
    ]
    store = SqliteCorpus(tmp_path / "store", embedder="hash")
    assert not store.upsert(many).failed
    p = OllamaPolicy("qwen2.5-coder:1.5b", host=refused_host(), retries=0, **FAST)
    policy = AssistedPlanner(p.ask_constrained)
    plain = await asearch(QUESTION, store, policy=HeuristicPlanner())
    result = await asearch(QUESTION, store, policy=policy)
    await p.aclose()
    store.close()
    assert len(plain.evidence) > 10
    assert [e.chunk_id for e in result.evidence] == [e.chunk_id for e in plain.evidence]
    assert len(policy.records) == policy.fallbacks == 1
    assert "ModelServerError" in (policy.records[0].fallback or "")
