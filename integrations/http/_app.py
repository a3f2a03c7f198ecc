"""The app factory: wires settings, auth, limits, metrics and the three routers."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import SecretStr

import sift
from sift.config import HarnessConfig, from_environment
from sift.graphs import HeuristicPlannerConfig
from sift.integrations.guards import HostGuard
from sift.integrations.http import _dify, _documents, _native, _ops, _ui
from sift.integrations.http._auth import Authenticator
from sift.integrations.http._deps import Service
from sift.integrations.http._errors import ApiError, install_handlers
from sift.integrations.http._limits import BodyLimit, Shed
from sift.integrations.http._metrics import Metrics
from sift.integrations.http._native import DocumentsRequest
from sift.integrations.http._settings import ApiKey, ServerSettings
from sift.integrations.http._validation import NOT_BLANK, SPACE
from sift.integrations.stores.patterns import DEFAULT_MAX_PATTERN_CHARS

__all__ = ["ROUTERS", "create_app"]

log = logging.getLogger("sift.http")

_DESCRIPTION = """\
sift's HTTP service: agentic multi-hop search over your collections.

* `POST /retrieval` is Dify's External Knowledge API (register this server's base URL in
  Dify; the External Knowledge ID is the collection name).
* `/v1/...` is the native API: search (JSON, or progress as server-sent events with
  `Accept: text/event-stream`), batch upsert, delete, collection statistics, and reads
  without an episode: a document's passages in order, a regular-expression grep (each
  passage with its page and section).
* Every request but `/healthz`, `/readyz`, `/metrics` and the docs needs
  `Authorization: Bearer <key>`.
* Every error is `{"error_code": int, "error_msg": str}`.
* Searches (in search processes, one per core by default), ingests and deletes run behind
  a bounded queue: when every slot is busy a request waits (up to the queue wait, and
  never past its deadline), then gets 429 with Retry-After.
"""

# Every router the app serves, one per module: a new face is one more entry here.
ROUTERS = (_dify.router, _native.router, _documents.router, _ops.router, _ui.router)


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
        # Deadlines count from here, before the body is read.
        scope.setdefault("state", {})["sift_arrived"] = time.monotonic()
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


_RESERVED_METADATA = ["doc_id", "title", "chunk_id", "chunk_index"]


def _document_rules(document: dict[str, Any]) -> None:
    """A document's rules as the service checks them, in its schema: text with something
    besides spaces; an id without control characters or edge spaces; no reserved metadata
    key."""
    fields = document["properties"]
    fields["text"].update(minLength=1, pattern=NOT_BLANK)
    edge = f"[^{SPACE}\\x00]"
    # Three patterns, not one anchored at both ends: Python's `$` also matches before a
    # final newline, JSON Schema's does not.
    fields["id"]["allOf"] = [
        {"pattern": f"^{edge}"},
        {"pattern": f"{edge}$"},
        {"not": {"pattern": "[\\n\\r\\t\\x00]"}},
    ]
    fields["metadata"]["propertyNames"] = {"not": {"enum": _RESERVED_METADATA}}


def _server_limits(schemas: dict[str, Any], settings: ServerSettings) -> None:
    """This server's limits, written into the schemas so that clients (and schema-driven
    testers) know them before sending: a request within them is never refused for size."""
    limits = {
        ("RetrievalSetting", "top_k"): {"maximum": settings.max_top_k},
        ("RetrievalRequest", "query"): {"maxLength": settings.max_query_chars},
        ("SearchRequest", "question"): {"maxLength": settings.max_query_chars},
        ("SearchRequest", "top_k"): {"maximum": settings.max_top_k},
        ("SearchRequest", "rollouts"): {"maximum": settings.max_rollouts},
        # What the stores enforce (a longer pattern is refused with 422), not the
        # question's limit this said before (2,000 against 500).
        ("GrepRequest", "pattern"): {"maxLength": DEFAULT_MAX_PATTERN_CHARS},
        ("GrepRequest", "top_k"): {"maximum": settings.max_top_k},
        ("DocumentsRequest", "documents"): {"maxItems": settings.max_documents_per_request},
    }
    for (model, field), bound in limits.items():
        prop = schemas[model]["properties"][field]
        # An optional field is anyOf [its type, null]: the bound goes on its type.
        target = next((s for s in prop.get("anyOf", []) if s.get("type") != "null"), prop)
        target.update(bound)


def _openapi(app: FastAPI, settings: ServerSettings) -> Callable[[], dict[str, Any]]:
    """The app's OpenAPI document, plus the schemas of bodies that are parsed off the event
    loop (the ingest batch), which FastAPI cannot see, and this server's limits."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            extra = DocumentsRequest.model_json_schema(ref_template="#/components/schemas/{model}")
            for name, schema in extra.pop("$defs", {}).items():
                schemas.setdefault(name, schema)
            _document_rules(schemas["Document"])
            schemas["DocumentsRequest"] = extra
            _server_limits(schemas, settings)
            app.openapi_schema = document
        return app.openapi_schema

    return build


def _check_episode_settings() -> None:
    """Reads the episode's settings from the environment now (`SIFT_MAX_TURNS`, the
    planner's `SIFT_PLANNER_*`): a bad one raises pydantic's ValidationError at start-up,
    where it stopped nothing before; the service then started, said it was ready and
    answered every search 400."""
    from_environment(HarnessConfig)
    from_environment(HeuristicPlannerConfig)


async def _sweep_idle(svc: Service) -> None:
    """Closes idle collections periodically: a sweep only when another collection opens
    would leave a quiet service holding every store it ever opened. Checked a few times
    per idle period (at most every 30 s, at least every second), so a store closes within
    a fraction of that period past it."""
    idle_s = svc.settings.collection_idle_s
    every = min(max(idle_s / 4, 1.0), 30.0)
    while True:
        await asyncio.sleep(every)
        try:
            await asyncio.to_thread(svc.collections.sweep)
        except Exception:  # a sweep that failed must not end the next ones
            log.exception("closing idle collections failed")


# The searches: refused before parsing when the queue is full (`Shed`).
_SEARCH_PATHS = ("/retrieval", "/v1/search")


def _accepts(auth: Authenticator) -> Callable[[str | None], bool]:
    """Whether an Authorization header value names a valid key (or none is needed)."""

    def accepts(header: str | None) -> bool:
        try:
            auth.identify(header)
        except ApiError:
            return False
        return True

    return accepts


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    """A FastAPI app serving sift; mount it in another ASGI app or run it with uvicorn.

    `settings` default to `ServerSettings()`, i.e. the `SIFT_SERVER_*` environment.
    Misconfiguration (unreadable keys file, bad collection entry, a bad `SIFT_*` episode
    setting) raises ValueError here, at start-up, not on the first request. The app
    answers /healthz at once; it opens and warms its collections in the background and
    /readyz says when that is done.
    """
    settings = settings or ServerSettings()
    _check_episode_settings()
    svc = Service(settings, Authenticator(_keys(settings), anonymous=settings.allow_anonymous))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        warming = asyncio.ensure_future(svc.engine.warm_up())
        sweeping = asyncio.ensure_future(_sweep_idle(svc))
        try:
            yield
        finally:
            warming.cancel()
            sweeping.cancel()
            svc.close()

    app = FastAPI(
        title="sift",
        version=sift.__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # served by _ops with local assets
        redoc_url=None,
    )
    app.state.sift = svc
    install_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.openapi = _openapi(app, settings)  # type: ignore[method-assign]

    # The last added is the outermost: metrics see every answer, 413s and 408s included,
    # and the body guard applies before anything reads the body.
    app.add_middleware(
        BodyLimit,
        default_limit=settings.max_body_bytes,
        ingest_limit=settings.max_ingest_bytes,
        idle_timeout_s=settings.body_idle_timeout_s,
        total_timeout_s=settings.body_timeout_s,
    )
    # Searches that find the queue full are refused before anything parses them; the
    # metrics name them by their routes as any other answer.
    search_routes = {
        route.path: route
        for router in ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute)
        and route.path in _SEARCH_PATHS
        and "POST" in (route.methods or ())
    }
    if len(search_routes) != len(_SEARCH_PATHS):
        raise RuntimeError(f"search routes moved: update _SEARCH_PATHS {_SEARCH_PATHS}")
    app.add_middleware(
        Shed, admission=svc.admission, authorized=_accepts(svc.auth), routes=search_routes
    )
    app.add_middleware(_Observe, metrics=svc.metrics)
    if svc.auth.anonymous:
        # No key stands between a web page and the service: only Host and Origin do.
        app.add_middleware(HostGuard, allowed=settings.allowed_host_names())
    return app
