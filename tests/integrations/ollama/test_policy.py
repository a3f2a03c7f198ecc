"""The Ollama policy at the wire: the exact requests sift sends, and what it makes of
each reply and each fault, against a real HTTP server speaking Ollama's API."""

from __future__ import annotations

import asyncio
import logging

import pytest

from sift.errors import ModelNotFoundError, ModelServerError
from sift.integrations.ollama import OllamaPolicy, OllamaSettings, policy_from_settings
from sift.integrations.ollama.testing import (
    FakeOllama,
    Fault,
    final_answer,
    multi_tool_use,
    refused_host,
    reply,
    tool_call,
    tool_parse_error,
)
from sift.llm import UNPARSED_KEY, task_prompt, tool_schemas
from sift.types import Chunk, FoundBy, Message, PolicyView, SeenChunk, ToolCall

# Quick retries; timeouts that only bound a broken run (the fake answers at once), never
# reached on a loaded machine.
FAST = {"timeout": 60.0, "connect_timeout": 60.0, "backoff": 0.01}


def view(messages=None, *, turn=1, budget=32768, seen=None) -> PolicyView:
    return PolicyView(
        question="Who directed the film that won in 1998?",
        turn=turn,
        max_turns=10,
        messages=messages
        or [Message(role="user", content="You are a retrieval sub-agent. Find documents.")],
        seen=seen or {},
        threshold=16384,
        rejection=24576,
        budget=budget,
    )


def policy(server: FakeOllama, **settings) -> OllamaPolicy:
    return OllamaPolicy(host=server.host, **{**FAST, **settings})


# --------------------------------------------------------------------------- requests


async def test_first_request_carries_context_window_think_options_and_tools(server):
    server.script(reply(tool_calls=[tool_call("search_corpus", query="1998 film award")]))
    p = policy(server, seed=7, temperature=0.3, num_predict=2048, keep_alive="5m")
    await p.decide(view(budget=32768))
    assert server.paths() == ["/api/show", "/api/chat"]
    [body] = server.chat_requests()
    assert body["model"] == "gpt-oss:20b"
    assert body["stream"] is True
    assert body["think"] == "high"  # gpt-oss family: a level, never a boolean
    assert body["keep_alive"] == "5m"
    options = body["options"]
    assert options["num_ctx"] >= 32768 + 2048
    assert (options["seed"], options["temperature"], options["num_predict"]) == (7, 0.3, 2048)
    assert body["messages"] == [
        {"role": "user", "content": "You are a retrieval sub-agent. Find documents."}
    ]
    names = [t["function"]["name"] for t in body["tools"]]
    assert names == [
        "search_corpus",
        "grep_corpus",
        "read_document",
        "prune_chunks",
        "multi_tool_use",
    ]
    # The four corpus tools are declared exactly as the harness words them.
    assert body["tools"][:4] == tool_schemas(multi_tool_use=False)
    search = body["tools"][0]["function"]["parameters"]
    assert search["required"] == ["query"]
    assert search["properties"]["query"]["type"] == "string"
    prune = body["tools"][3]["function"]["parameters"]["properties"]["chunk_ids"]
    assert (prune["type"], prune["items"]) == ("array", {"type": "string"})
    assert body["tools"][4]["function"]["parameters"]["required"] == ["tool_calls"]
    multi = body["tools"][4]["function"]["parameters"]["properties"]["tool_calls"]
    assert multi["items"]["properties"]["name"]["enum"] == [
        "search_corpus",
        "grep_corpus",
        "read_document",
        "prune_chunks",
    ]
    await p.aclose()


async def test_num_ctx_grows_with_the_budget_and_never_shrinks_below_it(server):
    server.script(reply("x"), reply("x"))
    p = policy(server, num_ctx=8192, num_predict=1024)
    await p.decide(view(budget=65536))
    await p.decide(view(budget=4096))
    small, large = (b["options"]["num_ctx"] for b in server.chat_requests()[::-1])
    assert large >= 65536 + 1024
    assert small >= 8192  # the configured floor still holds for a small budget
    await p.aclose()


async def test_tool_turns_send_thinking_tool_name_and_batches_as_the_model_wrote_them(server):
    server.script(final_answer([("a_0", "why")]))
    history = [
        Message(role="user", content="task"),
        Message(
            role="assistant",
            thinking="I should search two things at once.",
            tool_calls=[
                ToolCall(
                    id="t1_0_0", name="search_corpus", arguments={"query": "a"}, batch_id="t1_0"
                ),
                ToolCall(
                    id="t1_0_1", name="grep_corpus", arguments={"pattern": "b"}, batch_id="t1_0"
                ),
            ],
        ),
        Message(
            role="tool", tool_name="multi_tool_use", content="# DOCUMENT ID: a_0 (3 tokens)\nx"
        ),
        Message(
            role="assistant",
            thinking="Now read it.",
            tool_calls=[ToolCall(id="t2_0", name="read_document", arguments={"doc_id": "a"})],
        ),
        Message(role="tool", tool_name="read_document", content="text\n[Token usage: 90/16384]"),
    ]
    p = policy(server)
    await p.decide(view(history, turn=3))
    [body] = server.chat_requests()
    # (the official client leaves out empty fields, so an empty content is not sent)
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "thinking": "I should search two things at once.",
            "tool_calls": [
                {
                    "function": {
                        "name": "multi_tool_use",
                        "arguments": {
                            "tool_calls": [
                                {"name": "search_corpus", "arguments": {"query": "a"}},
                                {"name": "grep_corpus", "arguments": {"pattern": "b"}},
                            ]
                        },
                    }
                }
            ],
        },
        {
            "role": "tool",
            "content": "# DOCUMENT ID: a_0 (3 tokens)\nx",
            "tool_name": "multi_tool_use",
        },
        {
            "role": "assistant",
            "thinking": "Now read it.",
            "tool_calls": [{"function": {"name": "read_document", "arguments": {"doc_id": "a"}}}],
        },
        {"role": "tool", "content": "text\n[Token usage: 90/16384]", "tool_name": "read_document"},
    ]
    await p.aclose()


async def test_non_streaming_mode_sends_stream_false_and_reads_the_whole_reply(server):
    server.script(reply(thinking="plan", tool_calls=[tool_call("grep_corpus", pattern="19\\d\\d")]))
    p = policy(server, stream=False)
    decision = await p.decide(view())
    assert server.chat_requests()[0]["stream"] is False
    assert [(c.name, c.arguments) for c in decision.tool_calls] == [
        ("grep_corpus", {"pattern": "19\\d\\d"})
    ]
    assert decision.thinking == "plan"
    await p.aclose()


@pytest.mark.parametrize(
    ("model", "family", "think", "sent"),
    [
        ("gpt-oss:20b", "gptoss", None, "high"),
        ("maternion/context-1:20b-q4_K_M", "gptoss", "medium", "medium"),
        ("my-finetune:latest", "gptoss", True, "high"),  # family from /api/show
        ("gpt-oss:20b", "gptoss", False, "low"),  # gpt-oss cannot switch reasoning off
        ("qwen3:8b", "qwen3", None, None),
        ("qwen3:8b", "qwen3", True, True),
        ("qwen3:8b", "qwen3", "low", True),  # a level means "think" to boolean models
    ],
)
async def test_think_follows_the_model_family(model, family, think, sent):
    with FakeOllama(models=[model], family=family) as server:
        server.script(reply("done"))
        p = OllamaPolicy(model, host=server.host, think=think, **FAST)
        await p.decide(view())
        assert server.chat_requests()[0].get("think") == sent
        await p.aclose()


def test_settings_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://10.1.2.3:11434")
    monkeypatch.setenv("SIFT_OLLAMA_MODEL", "qwen3:8b")
    monkeypatch.setenv("SIFT_OLLAMA_THINK", "low")
    monkeypatch.setenv("SIFT_OLLAMA_NUM_PREDICT", "1000")
    settings = OllamaSettings()
    assert (settings.host, settings.model, settings.think, settings.num_predict) == (
        "http://10.1.2.3:11434",
        "qwen3:8b",
        "low",
        1000,
    )
    p = policy_from_settings(model="gpt-oss:120b", think=None, timeout=3)
    assert (p.model, p.settings.think, p.settings.timeout) == ("gpt-oss:120b", "low", 3)
    assert p.host == "http://10.1.2.3:11434"


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="think must be low, medium, high"):
        OllamaSettings(think="maximum")
    with pytest.raises(TypeError, match="unknown Ollama setting"):
        OllamaPolicy("gpt-oss:20b", temprature=0.5)


# --------------------------------------------------------------------------- replies


async def test_multi_tool_use_in_every_shape_becomes_one_batch(server):
    calls = (tool_call("search_corpus", query="a"), tool_call("read_document", doc_id="d"))
    raw = (
        '[{"name":"search_corpus","arguments":{"query":"a"}},'
        '{"name":"read_document","arguments":{"doc_id":"d"}}]'
    )
    server.script(
        reply(tool_calls=[multi_tool_use(*calls)]),
        reply(tool_calls=[multi_tool_use(*calls, shape="uses")]),
        # The trained bare array: Ollama cannot parse it and answers 500 with the raw text.
        tool_parse_error(raw),
    )
    p = policy(server)
    for turn in (1, 2, 3):
        decision = await p.decide(view(turn=turn))
        assert [(c.name, c.arguments) for c in decision.tool_calls] == [
            ("search_corpus", {"query": "a"}),
            ("read_document", {"doc_id": "d"}),
        ]
        assert len({c.batch_id for c in decision.tool_calls}) == 1
        assert decision.tool_calls[0].batch_id.startswith(f"t{turn}")
    assert len(server.chat_requests()) == 3  # the repaired call needed no second request
    await p.aclose()


async def test_unknown_tool_and_bad_arguments_pass_through_for_an_error_observation(server):
    server.script(
        reply(tool_calls=[tool_call("web_search", q="x"), ("search_corpus", {"q": "wrong key"})])
    )
    p = policy(server)
    decision = await p.decide(view())
    assert [(c.name, c.arguments) for c in decision.tool_calls] == [
        ("web_search", {"q": "x"}),
        ("search_corpus", {"q": "wrong key"}),
    ]
    await p.aclose()


async def test_unrepairable_tool_call_is_retried_then_reported_as_a_policy_error(server):
    server.script(*(tool_parse_error("I think I should search") for _ in range(3)))
    p = policy(server, retries=2)
    decision = await p.decide(view())
    assert decision.tool_calls == []
    assert decision.error is not None and "could not be read, 3 times" in decision.error
    assert len(server.chat_requests()) == 3
    await p.aclose()


async def test_final_answer_with_exact_token_counts(server):
    server.script(
        final_answer([("a_0", "names the director"), ("b_2", "gives the year")]),
    )
    p = policy(server)
    decision = await p.decide(view())
    assert [(d.id, d.justification) for d in decision.final] == [
        ("a_0", "names the director"),
        ("b_2", "gives the year"),
    ]
    assert decision.final_from_thinking is False
    body = server.chat_requests()[0]
    # The counts are the server's own, not sift's estimate.
    assert decision.prompt_tokens == server.prompt_tokens(body)
    assert decision.completion_tokens and decision.completion_tokens > 0
    await p.aclose()


async def test_final_ids_found_only_in_thinking_are_flagged(server):
    server.script(reply("", thinking="Done. <Document id=a_0><Justification>k</Justification>"))
    p = policy(server)
    decision = await p.decide(view())
    assert [d.id for d in decision.final] == ["a_0"]
    assert decision.final_from_thinking is True
    await p.aclose()


async def test_plain_id_list_is_read_against_the_chunks_seen(server):
    chunk = Chunk(chunk_id="a_0", doc_id="a", index=0, text="t")
    seen = {
        "a_0": SeenChunk(
            chunk=chunk, tokens=3, found_by=[FoundBy(tool="search_corpus", argument="q", turn=1)]
        )
    }
    server.script(reply("Relevant: a_0, z_9"))
    p = policy(server)
    decision = await p.decide(view(seen=seen))
    assert [d.id for d in decision.final] == ["a_0"]
    await p.aclose()


async def test_empty_reply_cut_by_num_predict_is_an_error_that_names_the_setting(server):
    server.script(reply("", thinking="long thoughts", done_reason="length"))
    p = policy(server)
    decision = await p.decide(view())
    assert decision.final is None and decision.tool_calls == []
    assert "SIFT_OLLAMA_NUM_PREDICT" in decision.error
    await p.aclose()


async def test_large_token_mismatch_is_logged_once(server, caplog):
    server.script(reply("x", prompt_eval_count=50_000), reply("x", prompt_eval_count=50_000))
    p = policy(server)
    with caplog.at_level(logging.WARNING, logger="sift.integrations.ollama"):
        first = await p.decide(view())
        await p.decide(view())
    assert first.prompt_tokens == 50_000  # the exact count is what the budget gets
    warnings = [r for r in caplog.records if "prompt tokens" in r.getMessage()]
    assert len(warnings) == 1
    assert "50000" in warnings[0].getMessage()
    await p.aclose()


async def test_matching_counts_log_nothing(server, caplog):
    server.script(reply("x"))
    p = policy(server)
    with caplog.at_level(logging.WARNING, logger="sift.integrations.ollama"):
        await p.decide(view())
    assert not [r for r in caplog.records if "prompt tokens" in r.getMessage()]
    await p.aclose()


# --------------------------------------------------------------------------- faults


async def test_missing_model_names_ollama_pull():
    with FakeOllama(models=["llama3.2:1b"]) as server:
        p = policy(server, model="gpt-oss:20b")
        with pytest.raises(ModelNotFoundError, match=r"`ollama pull gpt-oss:20b`"):
            await p.decide(view())
        assert server.paths() == ["/api/show"]  # 404 is not retried
        await p.aclose()


async def test_model_without_tool_support_is_refused_clearly_when_not_constrained():
    # Left to auto, such a model's replies are decoded as JSON decisions (test_constrained).
    with FakeOllama(models=["gemma:2b"], family="gemma", capabilities=["completion"]) as server:
        p = OllamaPolicy("gemma:2b", host=server.host, constrained=False, **FAST)
        with pytest.raises(ModelServerError, match="does not support tool calling"):
            await p.decide(view())
        await p.aclose()


async def test_connection_refused_names_the_host_after_bounded_retries():
    host = refused_host()
    p = OllamaPolicy(host=host, retries=2, **FAST)
    with pytest.raises(ModelServerError, match="cannot reach Ollama at " + host) as info:
        await p.decide(view())
    assert "after 3 attempts" in str(info.value)
    await p.aclose()


@pytest.mark.parametrize("status", [500, 503, 429])
async def test_server_errors_and_rate_limits_are_retried(server, status):
    server.script(
        Fault(status=status, error="busy"), Fault(status=status, error="busy"), reply("x")
    )
    p = policy(server, retries=2)
    decision = await p.decide(view())
    assert decision.content == "x"
    assert len(server.chat_requests()) == 3
    await p.aclose()


async def test_retries_are_bounded(server):
    server.script(*(Fault(status=500, error="boom") for _ in range(5)))
    p = policy(server, retries=1)
    with pytest.raises(ModelServerError, match=r"boom.*after 2 attempts"):
        await p.decide(view())
    assert len(server.chat_requests()) == 2
    assert server.remaining() == 3
    await p.aclose()


async def test_mid_stream_error_line_is_retried(server):
    server.script(
        Fault(mid_stream=True, error="runner crashed", then=reply("partial", thinking="abc")),
        reply(tool_calls=[tool_call("search_corpus", query="q")]),
    )
    p = policy(server)
    decision = await p.decide(view())
    # Nothing of the broken stream leaks into the decision.
    assert decision.thinking is None and decision.content == ""
    assert [c.name for c in decision.tool_calls] == ["search_corpus"]
    await p.aclose()


async def test_reply_slower_than_the_timeout_fails_fast_with_the_setting_named(server):
    server.script(Fault(delay=30.0, then=reply("late")))  # far past the timeout, even loaded
    p = policy(server, timeout=0.2)
    with pytest.raises(ModelServerError, match=r"sent nothing for 0\.2 s.*SIFT_OLLAMA_TIMEOUT"):
        await p.decide(view())
    assert len(server.chat_requests()) == 1  # a slow model is not asked twice
    await p.aclose()


async def test_bad_request_is_not_retried(server):
    server.script(Fault(status=400, error="invalid think value"))
    p = policy(server)
    with pytest.raises(ModelServerError, match="invalid think value"):
        await p.decide(view())
    assert len(server.chat_requests()) == 1
    await p.aclose()


# --------------------------------------------------------------------------- rollouts


async def test_forks_differ_in_seed_and_sample_above_zero_temperature(server):
    server.script(reply("a"), reply("b"), reply("c"))
    base = policy(server, temperature=0.0, seed=1)
    forks = [base.fork(seed) for seed in (11, 12)]
    await asyncio.gather(base.decide(view()), *(f.decide(view()) for f in forks))
    options = sorted(
        (b["options"]["seed"], b["options"]["temperature"]) for b in server.chat_requests()
    )
    assert options == [(1, 0.0), (11, 1.0), (12, 1.0)]
    assert server.paths().count("/api/show") == 1  # the model is checked once for all
    await base.aclose()


async def test_a_policy_survives_one_event_loop_per_question(server):
    server.script(reply("a"), reply("b"))
    p = policy(server)
    # asyncio.run per question (the CLI's batch mode) must not reuse a closed loop's pool.
    first = await asyncio.to_thread(asyncio.run, p.decide(view()))
    second = await asyncio.to_thread(asyncio.run, p.decide(view()))
    assert (first.content, second.content) == ("a", "b")


def test_unparsed_key_is_stable():
    # The harness quotes a call's arguments in its error observation; this key is how
    # unreadable arguments travel there.
    assert UNPARSED_KEY == "_unparsed_arguments"


async def test_a_bare_view_gets_the_harness_task_prompt(server):
    server.script(reply("x"))
    p = policy(server)
    bare = view().model_copy(update={"messages": [], "top_k": 12})
    await p.decide(bare)
    assert server.chat_requests()[0]["messages"] == [
        {"role": "user", "content": task_prompt(bare.question, 12)}
    ]
    await p.aclose()


async def test_a_budget_beyond_the_trained_context_is_warned_about(server, caplog):
    server.script(reply("x"))
    p = policy(server)
    with caplog.at_level(logging.WARNING, logger="sift.integrations.ollama"):
        await p.decide(view(budget=200_000))
    [record] = [r for r in caplog.records if "trained for" in r.getMessage()]
    assert "131072" in record.getMessage()
    # Still sent whole: Ollama would otherwise cut the prompt's start silently.
    assert server.chat_requests()[0]["options"]["num_ctx"] >= 200_000
    await p.aclose()


async def test_a_call_written_as_text_is_run_rather_than_ending_the_episode(server):
    server.script(reply('{"name": "functions.search_corpus", "arguments": {"query": "q"}}'))
    p = policy(server)
    decision = await p.decide(view())
    assert [(c.name, c.arguments) for c in decision.tool_calls] == [
        ("search_corpus", {"query": "q"})
    ]
    await p.aclose()


async def test_an_unreadable_batch_is_explained_to_the_model(server):
    server.script(reply(tool_calls=[("multi_tool_use", {"tool_calls": "search a, then b"})]))
    p = policy(server)
    decision = await p.decide(view())
    assert decision.tool_calls == []
    assert decision.error.startswith('multi_tool_use needs {"tool_calls": [{"name": <tool>,')
    assert "search a, then b" in decision.error
    await p.aclose()


def test_host_comes_from_sift_then_ollama_variables_never_a_bare_host(monkeypatch):
    monkeypatch.setenv("HOST", "my-laptop")  # zsh and some containers export HOST
    assert OllamaSettings().host is None
    monkeypatch.setenv("OLLAMA_HOST", "http://10.0.0.2:11434")
    assert OllamaSettings().host == "http://10.0.0.2:11434"
    monkeypatch.setenv("SIFT_OLLAMA_HOST", "http://10.0.0.3:11434")
    assert OllamaSettings().host == "http://10.0.0.3:11434"
    assert OllamaPolicy(host="http://10.0.0.4:11434").host == "http://10.0.0.4:11434"


async def test_thinking_refused_by_the_model_names_the_setting(server):
    server.script(Fault(status=400, error='"llama3.2" does not support thinking'))
    p = policy(server, think=True)
    with pytest.raises(ModelServerError, match="SIFT_OLLAMA_THINK=false"):
        await p.decide(view())
    await p.aclose()
