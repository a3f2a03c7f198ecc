"""Request limits: body size (checked before the app reads the body) and concurrency."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from sift.integrations.http._errors import BODY_TOO_LARGE, OVERLOADED, ApiError

__all__ = ["BodyLimit", "ConcurrencyLimiter", "Slot"]

_INGEST_PATH = re.compile(r"^/v1/collections/[^/]+/documents/?$")

Scope = dict[str, Any]
Message = dict[str, Any]


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Pure ASGI middleware: refuses bodies over the limit with 413, counting streamed
    (chunked) bodies too, so a client cannot bypass it by omitting Content-Length."""

    def __init__(self, app: Any, *, default_limit: int, ingest_limit: int) -> None:
        self.app = app
        self.default_limit = default_limit
        self.ingest_limit = ingest_limit

    def _limit(self, scope: Scope) -> int:
        if scope.get("method") == "POST" and _INGEST_PATH.match(scope.get("path", "")):
            return self.ingest_limit
        return self.default_limit

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit(scope)
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await self._refuse(send, limit)
                    return
        seen = 0
        too_large = False
        refused = False

        async def counted_receive() -> Message:
            nonlocal seen, too_large
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    too_large = True
                    raise _TooLarge
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal refused
            # The framework may turn the failed read into its own 400: answer 413 instead.
            if too_large:
                if not refused:
                    refused = True
                    await self._refuse(send, limit)
                return
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except _TooLarge:
            if not refused:
                refused = True
                await self._refuse(send, limit)

    @staticmethod
    async def _refuse(send: Callable, limit: int) -> None:
        error = ApiError(413, BODY_TOO_LARGE, f"request body over the limit of {limit} bytes")
        body = json.dumps({"error_code": error.code, "error_msg": error.message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class Slot:
    """One admitted request; releasing twice is harmless (streams release on close)."""

    def __init__(self, limiter: ConcurrencyLimiter) -> None:
        self._limiter = limiter
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._limiter._active -= 1


class ConcurrencyLimiter:
    """At most `limit` working requests at once; the next one is told to come back
    (429 + Retry-After) instead of queueing behind work it cannot see."""

    def __init__(self, limit: int, retry_after_s: int) -> None:
        self.limit = limit
        self.retry_after_s = retry_after_s
        self._active = 0

    @property
    def active(self) -> int:
        return self._active

    def acquire(self) -> Slot:
        # The event loop is single-threaded: check-and-increment cannot interleave.
        if self._active >= self.limit:
            raise ApiError(
                429,
                OVERLOADED,
                f"too many concurrent requests (limit {self.limit}); retry after "
                f"{self.retry_after_s} s",
                headers={"Retry-After": str(self.retry_after_s)},
            )
        self._active += 1
        return Slot(self)
