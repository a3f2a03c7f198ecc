"""The shipped loopback Ollama speaks the API as the official client expects it."""

from __future__ import annotations

import json

import httpx
import ollama
import pytest

from sift.integrations.ollama.testing import Fault, reply, tool_call


def test_version_show_and_embed_through_the_official_client(server):
    client = ollama.Client(host=server.host, timeout=60.0)
    assert httpx.get(f"{server.host}/api/version").json() == {"version": server.version}
    info = client.show("gpt-oss:20b")
    assert info.details.family == "gptoss" and "tools" in info.capabilities
    vectors = client.embed(model="gpt-oss:20b", input=["a b", "c"]).embeddings
    assert len(vectors) == 2 and len(vectors[0]) == server.embed_dim
    with pytest.raises(ollama.ResponseError) as info:
        client.show("missing:1b")
    assert info.value.status_code == 404 and "not found" in info.value.error


def test_streamed_chat_is_ndjson_with_a_final_done_line(server):
    server.script(
        reply("answer", thinking="think", tool_calls=[tool_call("grep_corpus", pattern="x")])
    )
    with httpx.stream(
        "POST",
        f"{server.host}/api/chat",
        json={"model": "gpt-oss:20b", "messages": [], "stream": True},
    ) as r:
        assert r.headers["content-type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in r.iter_lines()]
    assert "".join(x["message"].get("thinking", "") for x in lines) == "think"
    assert "".join(x["message"]["content"] for x in lines) == "answer"
    assert [x["done"] for x in lines].count(True) == 1 and lines[-1]["done"]
    assert lines[-1]["prompt_eval_count"] > 0
    calls = [c for x in lines for c in x["message"].get("tool_calls", [])]
    assert calls == [{"function": {"name": "grep_corpus", "arguments": {"pattern": "x"}}}]


def test_unscripted_chat_is_an_error_that_says_so_and_every_request_is_recorded(server):
    r = httpx.post(
        f"{server.host}/api/chat", json={"model": "gpt-oss:20b", "messages": [], "stream": False}
    )
    assert r.status_code == 500 and "no scripted reply" in r.json()["error"]
    server.script(Fault(mid_stream=True, error="boom", then=reply("partial text")))
    with httpx.stream(
        "POST",
        f"{server.host}/api/chat",
        json={"model": "gpt-oss:20b", "messages": [], "stream": True},
    ) as r:
        lines = [json.loads(line) for line in r.iter_lines()]
    assert r.status_code == 200 and lines[-1] == {"error": "boom"}
    assert [(q.method, q.path) for q in server.requests] == [("POST", "/api/chat")] * 2
    assert server.requests[0].body == {"model": "gpt-oss:20b", "messages": [], "stream": False}
