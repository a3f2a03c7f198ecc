"""One retry policy for every call to Ollama: chat (async) and embed (on a thread) retry
the same errors, as often, with the same waits, and log each retry."""

from __future__ import annotations

import logging

import httpx
import pytest
from ollama import ResponseError

from sift.errors import ModelServerError
from sift.integrations.embedders import get_embedder
from sift.integrations.ollama import RetryPolicy
from sift.integrations.ollama._retry import ToolParseError, retryable
from sift.integrations.ollama.testing import FakeOllama, Fault


def test_what_a_second_try_can_fix_is_retried_and_nothing_else() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:9/api/chat")
    again = [
        ResponseError("stream cut", -1),
        ResponseError("busy", 429),
        ResponseError("oom", 500),
        ResponseError("loading", 503),
        ToolParseError("error parsing tool call"),
        httpx.ConnectError("refused", request=request),
        httpx.ConnectTimeout("slow connect", request=request),
        httpx.PoolTimeout("pool", request=request),
        ConnectionRefusedError("refused"),
    ]
    once = [
        ResponseError("model 'x' not found", 404),
        ResponseError("bad request", 400),
        httpx.ReadTimeout("slow model", request=request),
        ValueError("not an Ollama error"),
    ]
    assert all(retryable(e) for e in again)
    assert not any(retryable(e) for e in once)


def test_retries_are_bounded_and_wait_twice_as_long_each_time() -> None:
    logged: list[tuple[str, int, float]] = []
    policy = RetryPolicy(3, 0.001, lambda e, n, d: logged.append((getattr(e, "error", ""), n, d)))
    tries = 0

    def always_busy() -> None:
        nonlocal tries
        tries += 1
        raise ResponseError(f"busy {tries}", 503)

    with pytest.raises(ResponseError, match="busy 4"):  # the last error, as it was
        policy.call(always_busy)
    assert tries == 4
    assert [(text, n) for text, n, _ in logged] == [("busy 1", 1), ("busy 2", 2), ("busy 3", 3)]
    for _, n, delay in logged:
        first = 0.001 * 2 ** (n - 1)
        assert first <= delay <= first * 1.25


async def test_the_async_call_stops_at_once_on_what_a_retry_cannot_fix() -> None:
    logged: list[int] = []
    tries = 0

    async def missing() -> str:
        nonlocal tries
        tries += 1
        raise ResponseError("model not found", 404)

    with pytest.raises(ResponseError, match="not found"):
        await RetryPolicy(3, 0.001, lambda e, n, d: logged.append(n)).acall(missing)
    assert tries == 1 and logged == []

    async def second_time_lucky() -> str:
        nonlocal tries
        tries += 1
        if tries < 3:
            raise ResponseError("loading", 503)
        return "ok"

    assert (
        await RetryPolicy(3, 0.001, lambda e, n, d: logged.append(n)).acall(second_time_lucky)
        == "ok"
    )
    assert logged == [1]


def test_the_embedder_retries_with_the_policy_and_logs_each_retry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeOllama(models=["nomic-embed-text"], embed_dim=32) as server:
        # A connect-level failure is now retried as chat retries it; 503 twice, then fine.
        server.embed_faults.extend([Fault(status=503, error="loading")] * 2)
        embedder = get_embedder(
            "ollama:nomic-embed-text", host=server.host, timeout=60.0, retries=2, backoff=0.01
        )
        with caplog.at_level(logging.WARNING, logger="sift.integrations.embedders"):
            assert embedder.embed(["富士山 Fuji"]).shape == (1, 32)
        lines = [r.getMessage() for r in caplog.records if "Ollama embed at" in r.getMessage()]
        assert [line.split(";")[1].split(" in ")[0] for line in lines] == [" retry 1", " retry 2"]
        assert all(line.startswith(f"Ollama embed at {server.host} failed") for line in lines)
        server.embed_faults.extend([Fault(status=500, error="oom")] * 3)
        with pytest.raises(ModelServerError, match=r"failed to embed .*oom \(HTTP 500\)"):
            embedder.embed(["x"])
        embed_calls = [r for r in server.requests if r.path == "/api/embed"]
        assert len(embed_calls) == 3 + 3  # each call: one try and two retries at most
