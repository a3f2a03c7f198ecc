"""The per-app service object and the dependencies routes share."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from sift.integrations.http._auth import Authenticator
from sift.integrations.http._collections import Collections
from sift.integrations.http._engine import Engine
from sift.integrations.http._errors import INVALID_REQUEST, ApiError
from sift.integrations.http._limits import Admission
from sift.integrations.http._metrics import Metrics
from sift.integrations.http._settings import ApiKey, ServerSettings
from sift.text import has_searchable_word

__all__ = ["Service", "arrived", "at_most", "authorized_key", "checked_text", "service"]

# Declared for the OpenAPI document only; the header is checked by `authorized_key`, which
# needs the raw value to tell Dify's 1001 (malformed) from 1002 (wrong key).
_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <api-key>")


class Service:
    def __init__(self, settings: ServerSettings, auth: Authenticator) -> None:
        self.settings = settings
        self.auth = auth
        self.collections = Collections(settings)
        self.metrics = Metrics()
        self.engine = Engine(settings, self.collections, self.metrics)

    @property
    def admission(self) -> Admission:
        return self.engine.admission

    def close(self) -> None:
        self.engine.close()
        self.collections.close()


# The dependencies are coroutines, though they never wait: FastAPI runs a plain function
# dependency on anyio's worker threads (40 at most), one hop per dependency per request.
# Under a burst (200 clients, most of them answered 429 at once) every request queued for
# those threads twice, /healthz behind them: its p99 was 199 ms (issue 42). Here they run
# on the event loop, in microseconds.


async def service(request: Request) -> Service:
    return _service(request)


def _service(request: Request) -> Service:
    return request.app.state.sift


def arrived(request: Request) -> float:
    """When the request arrived (monotonic): deadlines count from there."""
    return float(request.scope.get("state", {}).get("sift_arrived", time.monotonic()))


async def authorized_key(
    request: Request,
    _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> ApiKey | None:
    return _service(request).auth.identify(request.headers.get("authorization"))


def checked_text(text: str, field: str, limit: int) -> str:
    """The stripped query; 422 naming the field when it is empty, over the limit or
    without a word to search for (only punctuation: a search of it could only answer
    unrelated passages)."""
    stripped = text.strip()
    if not stripped:
        raise ApiError(422, INVALID_REQUEST, f"{field} is empty")
    if len(stripped) > limit:
        raise ApiError(
            422,
            INVALID_REQUEST,
            f"{field} is {len(stripped)} characters long; the limit is {limit}",
        )
    if not has_searchable_word(stripped):
        shown = stripped if len(stripped) <= 40 else stripped[:39] + "…"
        raise ApiError(
            422,
            INVALID_REQUEST,
            f"{field} {shown!r} has no word to search for (only punctuation, symbols or "
            "spaces); ask with at least one word",
        )
    return stripped


def at_most(value: int, field: str, limit: int) -> int:
    if value > limit:
        raise ApiError(422, INVALID_REQUEST, f"{field} is {value}; the limit is {limit}")
    return value
