"""The app factory: wires settings, auth, limits, metrics and the three routers."""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from pydantic import BaseModel, SecretStr

import sift
from sift.integrations.http import _dify, _native, _ui
from sift.integrations.http._auth import Authenticator
from sift.integrations.http._deps import Service
from sift.integrations.http._errors import install_handlers
from sift.integrations.http._limits import BodyLimit
from sift.integrations.http._metrics import PROMETHEUS_CONTENT_TYPE, Metrics
from sift.integrations.http._settings import ApiKey, ServerSettings

__all__ = ["create_app"]

log = logging.getLogger("sift.http")

_DESCRIPTION = """\
sift's HTTP service: agentic multi-hop search over your collections.

* `POST /retrieval` is Dify's External Knowledge API (register this server's base URL in
  Dify; the External Knowledge ID is the collection name).
* `/v1/...` is the native API: search (JSON, or progress as server-sent events with
  `Accept: text/event-stream`), batch upsert, delete, collection statistics.
* Every request but `/healthz`, `/metrics` and the docs needs `Authorization: Bearer <key>`.
* Every error is `{"error_code": int, "error_msg": str}`.
"""


class Health(BaseModel):
    status: str
    version: str


class _Observe:
    """Pure ASGI middleware counting requests, latencies and error codes by route."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        error_body = b""

        async def observed_send(message: dict[str, Any]) -> None:
            nonlocal status, error_body
            if message["type"] == "http.response.start":
                status = message["status"]
                route = scope.get("route")
                self.metrics.latency.labels(getattr(route, "path", "unmatched")).observe(
                    time.perf_counter() - started
                )
            elif message["type"] == "http.response.body" and status >= 400:
                error_body += message.get("body", b"")[:4096]
            await send(message)

        try:
            await self.app(scope, receive, observed_send)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            self.metrics.requests.labels(scope.get("method", ""), route, str(status)).inc()
            if status >= 400:
                try:
                    code = str(json.loads(error_body).get("error_code", status))
                except (ValueError, AttributeError):
                    code = str(status)
                self.metrics.errors.labels(route, code).inc()


def _keys(settings: ServerSettings) -> list[ApiKey]:
    keys = settings.load_keys()
    if keys or settings.allow_anonymous:
        return keys
    # No key configured: a fresh one for this process beats an open server.
    generated = "sift-" + secrets.token_urlsafe(24)
    log.warning(
        "no API key configured (SIFT_SERVER_API_KEYS / SIFT_SERVER_KEYS_FILE); "
        "this run accepts the generated key: %s",
        generated,
    )
    return [ApiKey(key=SecretStr(generated), name="generated")]


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    """A FastAPI app serving sift; mount it in another ASGI app or run it with uvicorn.

    `settings` default to `ServerSettings()`, i.e. the `SIFT_SERVER_*` environment.
    Misconfiguration (unreadable keys file, bad collection entry) raises ValueError here,
    at start-up, not on the first request.
    """
    settings = settings or ServerSettings()
    svc = Service(settings, Authenticator(_keys(settings), anonymous=settings.allow_anonymous))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            svc.collections.close()

    app = FastAPI(
        title="sift",
        version=sift.__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.sift = svc
    install_handlers(app)
    app.include_router(_dify.router)
    app.include_router(_native.router)
    app.include_router(_ui.router)

    @app.get("/healthz", response_model=Health, tags=["ops"], summary="Liveness")
    async def healthz() -> Health:
        return Health(status="ok", version=sift.__version__)

    @app.get(
        "/metrics",
        tags=["ops"],
        summary="Prometheus metrics",
        response_class=Response,
        responses={200: {"content": {PROMETHEUS_CONTENT_TYPE: {}}}},
    )
    async def metrics(_: Request) -> Response:
        svc.metrics.in_flight.set(svc.limiter.active)
        return Response(svc.metrics.render(), media_type=PROMETHEUS_CONTENT_TYPE)

    # The last added is the outermost: metrics see every answer, 413s included, and the
    # size limit applies before anything reads the body.
    app.add_middleware(
        BodyLimit, default_limit=settings.max_body_bytes, ingest_limit=settings.max_ingest_bytes
    )
    app.add_middleware(_Observe, metrics=svc.metrics)
    return app
