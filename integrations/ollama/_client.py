"""Talking to Ollama: one chat turn with timeouts, bounded retries and clear errors.

The official client has no timeout by default and reports every failure as a bare
`ResponseError` or `ConnectionError`; here each failure becomes a sift error that says
which host, which model and what to do. Retries cover what a second try can fix
(connection errors, HTTP 5xx, 429, a stream cut by an error line); a missing model or a
rejected request fails at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import ollama
from ollama import ResponseError

from sift.errors import ModelNotFoundError, ModelServerError
from sift.integrations.ollama._retry import RetryPolicy, ToolParseError, retryable
from sift.integrations.ollama._settings import OllamaHost

__all__ = [
    "ChatReply",
    "ToolParseError",
    "call_with_retries",
    "chat_once",
    "describe_host",
    "make_client",
    "server_error",
]

log = logging.getLogger("sift.integrations.ollama")

T = TypeVar("T")

_DEFAULT_HOST = "http://127.0.0.1:11434"


def describe_host(host: str | None) -> str:
    """The address a client given `host` uses: `host`, else the configured one
    (`OllamaHost`: SIFT_OLLAMA_HOST, else OLLAMA_HOST), else Ollama's default; written as
    the ollama client normalises it, for clients and error messages alike."""
    from ollama._client import _parse_host

    return _parse_host(host or OllamaHost().host) or _DEFAULT_HOST


def make_client(host: str, *, timeout: float, connect_timeout: float) -> ollama.AsyncClient:
    """An async client of `host` (from `describe_host`: the ollama package is never left
    to read OLLAMA_HOST itself)."""
    return ollama.AsyncClient(
        host=host,
        timeout=httpx.Timeout(timeout, connect=min(connect_timeout, timeout)),
    )


@dataclass
class ChatReply:
    """One assistant turn, assembled from a stream or read whole."""

    content: str = ""
    thinking: str = ""
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    # Calls recovered from Ollama's "error parsing tool call" reply (ToolCall objects).
    repaired_calls: list[Any] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    done_reason: str | None = None
    # Seconds spent waiting on the server, so callers can measure their own overhead.
    server_seconds: float = 0.0


def server_error(exc: BaseException, *, host: str, model: str, timeout: float) -> Exception:
    """The sift error that explains `exc` to a user."""
    if isinstance(exc, ModelServerError):
        return exc
    if isinstance(exc, ResponseError):
        if exc.status_code == 404:
            return ModelNotFoundError(
                f"Ollama at {host} does not have the model {model!r}: run "
                f"`ollama pull {model}` (or set SIFT_OLLAMA_MODEL to a model it has)"
            )
        hint = ""
        if "support thinking" in str(exc.error):
            hint = "; set SIFT_OLLAMA_THINK=false (or --think false) for this model"
        elif "support tools" in str(exc.error):
            hint = "; sift needs a tool-calling model such as gpt-oss:20b or qwen3"
        return ModelServerError(
            f"Ollama at {host} failed for model {model!r}: {exc.error} "
            f"(HTTP {exc.status_code if exc.status_code > 0 else 'stream error'}){hint}"
        )
    if isinstance(exc, httpx.ReadTimeout | httpx.WriteTimeout):
        return ModelServerError(
            f"Ollama at {host} sent nothing for {timeout:g} s (model {model!r}); the model "
            f"may still be loading or too slow on this hardware: raise SIFT_OLLAMA_TIMEOUT"
        )
    if isinstance(exc, ConnectionError | httpx.TransportError):
        return ModelServerError(
            f"cannot reach Ollama at {host} ({type(exc).__name__}): is `ollama serve` "
            f"running there? Set OLLAMA_HOST (or --ollama-host) to its address"
        )
    return ModelServerError(f"Ollama at {host} returned an unreadable reply: {exc}")


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    retries: int,
    backoff: float,
    host: str,
    model: str,
    timeout: float,
) -> T:
    """Runs `attempt` under the retry policy (`_retry`); a failure that remains becomes
    the sift error that explains it, saying how many tries it took. A tool call that could
    not be parsed on the last try is raised as it is: the policy answers it."""
    tries = 0

    async def counted() -> T:
        nonlocal tries
        tries += 1
        return await attempt()

    def on_retry(exc: BaseException, number: int, delay: float) -> None:
        log.warning("Ollama at %s: %s; retry %d/%d in %.2f s", host, exc, number, retries, delay)

    try:
        return await RetryPolicy(retries, backoff, on_retry).acall(counted)
    except ToolParseError:
        raise
    except Exception as exc:
        err = server_error(exc, host=host, model=model, timeout=timeout)
        if tries > 1 and retryable(exc):
            err = type(err)(f"{err} (after {tries} attempts)")
        raise err from exc


def _is_tool_parse_error(exc: ResponseError) -> bool:
    return "error parsing tool call" in str(exc.error)


async def chat_once(client: ollama.AsyncClient, request: dict[str, Any]) -> ChatReply:
    """One /api/chat call, streamed or not, assembled into a ChatReply."""
    reply = ChatReply()
    started = time.perf_counter()
    try:
        if request.get("stream"):
            parts = await client.chat(**request)
            async for part in parts:
                _absorb(reply, part)
        else:
            _absorb(reply, await client.chat(**request))
    except ResponseError as exc:
        if exc.status_code in (500, -1) and _is_tool_parse_error(exc):
            raise ToolParseError(str(exc.error)) from exc
        raise
    reply.server_seconds = time.perf_counter() - started
    return reply


def _absorb(reply: ChatReply, part: ollama.ChatResponse) -> None:
    message = part.message
    if message.content:
        reply.content += message.content
    if message.thinking:
        reply.thinking += message.thinking
    for call in message.tool_calls or ():
        reply.tool_calls.append((call.function.name, call.function.arguments))
    if part.done:
        reply.prompt_tokens = part.prompt_eval_count
        reply.completion_tokens = part.eval_count
        reply.done_reason = part.done_reason
