"""Request limits: the body (size and read time, checked before the app parses it) and
admission (a bounded queue in front of a fixed number of working slots)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from sift.integrations.http._errors import (
    BODY_TIMEOUT,
    BODY_TOO_LARGE,
    OVERLOADED,
    ApiError,
)
from sift.integrations.http._metrics import Metrics

__all__ = ["Admission", "BodyLimit", "Shed", "Slot"]

_INGEST_PATH = re.compile(r"^/v1/collections/[^/]+/documents/?$")

Scope = dict[str, Any]
Message = dict[str, Any]


class _Refused(Exception):
    def __init__(self, error: ApiError) -> None:
        super().__init__(error.message)
        self.error = error


class BodyLimit:
    """Pure ASGI middleware guarding the request body before anything parses it.

    - Over the size limit: 413, counting streamed (chunked) bodies too, so a client cannot
      bypass it by omitting Content-Length.
    - Too slow: 408 when no byte arrives for `idle_timeout_s` (a Content-Length larger than
      the body sent), or the whole body takes longer than `total_timeout_s` (a trickle).
      Without this a truncated body holds its connection until the client gives up.
    """

    def __init__(
        self,
        app: Any,
        *,
        default_limit: int,
        ingest_limit: int,
        idle_timeout_s: float,
        total_timeout_s: float,
    ) -> None:
        self.app = app
        self.default_limit = default_limit
        self.ingest_limit = ingest_limit
        self.idle_timeout_s = idle_timeout_s
        self.total_timeout_s = total_timeout_s

    def _limit(self, scope: Scope) -> int:
        if scope.get("method") == "POST" and _INGEST_PATH.match(scope.get("path", "")):
            return self.ingest_limit
        return self.default_limit

    def _too_large(self, limit: int) -> ApiError:
        return ApiError(413, BODY_TOO_LARGE, f"request body over the limit of {limit} bytes")

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
                    await _send_error(send, self._too_large(limit))
                    return
        seen = 0
        started: float | None = None
        complete = False
        refusal: ApiError | None = None
        answered = False

        async def guarded_receive() -> Message:
            nonlocal seen, started, complete, refusal
            if complete:
                # The body is in: later reads wait for the disconnect, unbounded.
                return await receive()
            now = time.monotonic()
            started = now if started is None else started
            wait = min(self.idle_timeout_s, self.total_timeout_s - (now - started))
            try:
                message = await asyncio.wait_for(receive(), max(wait, 0.0))
            except TimeoutError:
                refusal = ApiError(
                    408,
                    BODY_TIMEOUT,
                    f"the request body did not arrive in time ({seen} bytes received; the "
                    f"limits are {self.idle_timeout_s:g} s without data and "
                    f"{self.total_timeout_s:g} s in all): check Content-Length",
                    headers={"Connection": "close"},
                )
                raise _Refused(refusal) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    refusal = self._too_large(limit)
                    raise _Refused(refusal)
                complete = not message.get("more_body", False)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal answered
            # The framework may turn the failed read into an answer of its own (a 400, a
            # 500): the refusal is the answer instead.
            if refusal is not None:
                if not answered:
                    answered = True
                    await _send_error(send, refusal)
                return
            await send(message)

        try:
            await self.app(scope, guarded_receive, guarded_send)
        except _Refused as exc:
            if not answered:
                answered = True
                await _send_error(send, exc.error)


class Shed:
    """Pure ASGI middleware: a search that arrives while the admission queue is full is
    answered 429 before anything parses it.

    It would get that 429 anyway, after routing, dependencies and the body's validation:
    0.4 ms of the event loop's CPU each (0.7-0.9 ms while the dependencies ran on worker
    threads). At 200 clients on 2 cores about 130 are refused per second, and clients
    honouring Retry-After come back together: some 50-100 ms of the loop at a stretch,
    with /healthz waiting behind (p99 199 ms, issue 42). Here a refusal costs 0.03-0.04
    ms: a header scan and one key check.

    Only requests that would be refused for nothing else are answered here: a search
    (`paths`) with a body (Dify's registration probe has none and is not admitted) and a
    key that `authorized` accepts. Anything else (a bad key, no key) takes the usual
    path and gets its usual answer; a key that may not use the collection it names gets
    the 429 here and its 403 when it retries.
    """

    def __init__(
        self,
        app: Any,
        *,
        admission: Admission,
        authorized: Callable[[str | None], bool],
        routes: dict[str, Any],
    ) -> None:
        self.app = app
        self.admission = admission
        self.authorized = authorized
        # path -> its route, which the metrics middleware reads from the scope.
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if (
            scope["type"] == "http"
            and self.admission.full
            and scope.get("method") == "POST"
            and scope.get("path") in self.routes
            and self._shed(scope)
        ):
            scope["route"] = self.routes[scope["path"]]
            await _send_error(send, self.admission.refuse())
            return
        await self.app(scope, receive, send)

    def _shed(self, scope: Scope) -> bool:
        authorization: str | None = None
        has_body = False
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                authorization = value.decode("latin-1")
            elif name == b"content-length":
                has_body = value.strip() not in (b"", b"0")
            elif name == b"transfer-encoding":
                has_body = True
        return has_body and self.authorized(authorization)


async def _send_error(send: Callable, error: ApiError) -> None:
    body = json.dumps({"error_code": error.code, "error_msg": error.message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    headers += [(k.lower().encode(), v.encode()) for k, v in error.headers.items()]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Slot:
    """One admitted unit of work; releasing twice is harmless. Release only on the event
    loop's thread (workers hand it over with `loop.call_soon_threadsafe`)."""

    def __init__(self, admission: Admission) -> None:
        self._admission = admission
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._admission._release()


class Admission:
    """At most `slots` requests work at once; up to `queue_size` more wait, each at most
    its own wait time, in arrival order. A request that finds the queue full, or whose wait
    runs out, gets 429 with Retry-After. Everything runs on the event loop's thread, so the
    bookkeeping needs no lock."""

    def __init__(
        self, slots: int, queue_size: int, retry_after_s: int, metrics: Metrics | None = None
    ) -> None:
        self.slots = slots
        self.queue_size = queue_size
        self.retry_after_s = retry_after_s
        self.metrics = metrics
        self._active = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    @property
    def active(self) -> int:
        return self._active

    @property
    def queued(self) -> int:
        return len(self._waiting)

    def _overloaded(self, reason: str, why: str) -> ApiError:
        if self.metrics is not None:
            self.metrics.rejected.labels(reason).inc()
        return ApiError(
            429,
            OVERLOADED,
            f"too busy: {why} ({self.slots} requests at work, {self.queued} waiting); "
            f"retry after {self.retry_after_s} s",
            headers={"Retry-After": str(self.retry_after_s)},
        )

    def _observe(self, waited: float, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.queue_wait.labels(outcome).observe(waited)
            self.metrics.queue_length.set(self.queued)

    @property
    def full(self) -> bool:
        """Every slot at work and every place in the queue taken: `acquire` refuses."""
        return self._active >= self.slots and self.queued >= self.queue_size

    def refuse(self) -> ApiError:
        """The 429 of a request that finds the queue full (counted)."""
        return self._overloaded("queue_full", "the queue is full")

    async def acquire(self, wait_s: float) -> Slot:
        """A slot, waiting at most `wait_s` seconds for one; else 429."""
        if self._active < self.slots:
            self._active += 1
            self._observe(0.0, "admitted")
            return Slot(self)
        if self.queued >= self.queue_size:
            raise self.refuse()
        if wait_s <= 0:
            raise self._overloaded("no_time", "no time left to wait for a slot")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        started = time.monotonic()
        if self.metrics is not None:
            self.metrics.queue_length.set(self.queued)
        try:
            await asyncio.wait_for(asyncio.shield(future), wait_s)
        except TimeoutError:
            if future.done() and not future.cancelled():
                # Handed a slot in the very instant the wait ran out: keep it.
                self._observe(time.monotonic() - started, "admitted")
                return Slot(self)
            self._forget(future)
            self._observe(time.monotonic() - started, "timed_out")
            raise self._overloaded("wait_timeout", f"no slot within {wait_s:.2g} s") from None
        except BaseException:
            # The client left while waiting: pass on a slot it may have been handed.
            if future.done() and not future.cancelled():
                self._release()
            else:
                self._forget(future)
            raise
        self._observe(time.monotonic() - started, "admitted")
        return Slot(self)

    def _forget(self, future: asyncio.Future[None]) -> None:
        future.cancel()
        if future in self._waiting:
            self._waiting.remove(future)
        if self.metrics is not None:
            self.metrics.queue_length.set(self.queued)

    def _release(self) -> None:
        if self._waiting:
            # The slot passes to the oldest waiter: `_active` stays the same.
            self._waiting.popleft().set_result(None)
            if self.metrics is not None:
                self.metrics.queue_length.set(self.queued)
            return
        self._active -= 1
