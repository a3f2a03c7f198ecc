"""The one retry policy of every call to Ollama (chat, show, embed), with tenacity.

What a second try can fix is retried: connection errors, a connect or pool timeout, HTTP
5xx and 429, a stream cut by an error line, a tool call Ollama could not parse (the
model samples differently next time). A missing model, a rejected request or a read
timeout (the model is slower than the timeout: asking again only doubles the wait) fail
at once. `retries` more tries at most; the first waits `backoff` seconds, each next one
twice as long, plus up to a quarter at random so that clients do not retry in step.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx
from ollama import ResponseError
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt

__all__ = ["RetryPolicy", "ToolParseError", "retryable"]

T = TypeVar("T")

# (the error, the number of the retry about to be made, from 1; the wait in seconds)
OnRetry = Callable[[BaseException, int, float], None]


class ToolParseError(Exception):
    """Ollama could not parse the tool call the model wrote (HTTP 500 with the raw text)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def retryable(exc: BaseException) -> bool:
    """Whether a second try can fix what `exc` reports."""
    if isinstance(exc, ToolParseError):
        # The model's sampling differs from one try to the next.
        return True
    if isinstance(exc, ResponseError):
        # -1: an error line inside a stream that had started fine.
        return exc.status_code in (-1, 429) or exc.status_code >= 500
    if isinstance(exc, httpx.TimeoutException):
        # A connect timeout is a network hiccup; a read timeout means the model is slower
        # than the configured timeout, and asking again would only double the wait.
        return isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout)
    return isinstance(exc, ConnectionError | httpx.TransportError)


@dataclass(frozen=True)
class RetryPolicy:
    """`retries` more tries after the first, the first `backoff` seconds later; `on_retry`
    logs each retry. The last error is raised as it was: the caller explains it."""

    retries: int
    backoff: float
    on_retry: OnRetry

    def _wait(self, state: RetryCallState) -> float:
        return self.backoff * 2 ** (state.attempt_number - 1) * (1 + random.random() / 4)

    def _before_sleep(self, state: RetryCallState) -> None:
        assert state.outcome is not None and state.next_action is not None
        error = state.outcome.exception()
        assert error is not None
        self.on_retry(error, state.attempt_number, state.next_action.sleep)

    def _settings(self) -> dict[str, object]:
        return {
            "stop": stop_after_attempt(self.retries + 1),
            "wait": self._wait,
            "retry": retry_if_exception(retryable),
            "before_sleep": self._before_sleep,
            "reraise": True,
        }

    def call(self, attempt: Callable[[], T]) -> T:
        """Runs `attempt` on this thread, sleeping between tries."""
        return Retrying(**self._settings())(attempt)  # type: ignore[arg-type]

    async def acall(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Awaits `attempt`, sleeping on the event loop between tries."""
        result: T = await AsyncRetrying(**self._settings())(attempt)  # type: ignore[arg-type]
        return result
