"""Operations endpoints: liveness, readiness, Prometheus metrics, and the API docs page
served with its own assets (it works without a network)."""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import resources
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field

import sift
from sift.integrations.http._deps import Service, service
from sift.integrations.http._errors import COMMON_RESPONSES, ApiError
from sift.integrations.http._metrics import PROMETHEUS_CONTENT_TYPE

__all__ = ["Health", "Readiness", "router"]

router = APIRouter(tags=["ops"])

ServiceDep = Annotated[Service, Depends(service)]

_ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}


class Health(BaseModel):
    status: str = Field(description="`ok` while the process serves requests.")
    version: str
    ready: bool = Field(description="Whether start-up warming is done (see /readyz).")


class Readiness(BaseModel):
    status: str = Field(description="`ready`, or `warming` while stores are opened.")
    collections: dict[str, str] = Field(
        default_factory=dict,
        description="Each collection warmed at start-up: `ready` or why it is not usable; "
        "only with a key that may use it.",
    )


@router.get("/healthz", response_model=Health, summary="Liveness", responses=COMMON_RESPONSES)
async def healthz(svc: ServiceDep) -> Health:
    """Answers as soon as the process runs, whatever the load: no key, no work."""
    return Health(status="ok", version=sift.__version__, ready=svc.engine.ready)


@router.get(
    "/readyz",
    response_model=Readiness,
    summary="Readiness",
    responses={
        **COMMON_RESPONSES,
        503: {"model": Readiness, "description": "Still warming up: do not route traffic."},
    },
)
async def readyz(request: Request, svc: ServiceDep) -> Response:
    """200 once every served store, embedder and policy is warm; 503 until then. The
    collections are named only to a caller whose key may use them (anyone may ask)."""
    ready = svc.engine.ready
    try:
        key = svc.auth.identify(request.headers.get("authorization"))
    except ApiError:
        shown = {}
    else:
        shown = {
            name: state
            for name, state in svc.engine.warm_report.items()
            if key is None or key.allows(name)
        }
    body = Readiness(status="ready" if ready else "warming", collections=shown)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={**COMMON_RESPONSES, 200: {"content": {PROMETHEUS_CONTENT_TYPE: {}}}},
)
async def metrics(request: Request, svc: ServiceDep) -> Response:
    """The service's metrics. Those of a collection (labelled `collection`) only to a
    caller whose key may use it, as /readyz: anyone may ask, and the names of the
    collections are not for anyone."""
    svc.metrics.in_flight.set(svc.engine.admission.active)
    svc.metrics.queue_length.set(svc.engine.admission.queued)
    text = svc.metrics.render()
    try:
        key = svc.auth.identify(request.headers.get("authorization"))
    except ApiError:
        text = _without_collections(text, lambda _: False)
    else:
        if key is not None:
            text = _without_collections(text, key.allows)
    return Response(text, media_type=PROMETHEUS_CONTENT_TYPE)


_COLLECTION_LABEL = re.compile(rb'[{,]collection="([^"]*)"')


def _without_collections(text: bytes, shown: Callable[[str], bool]) -> bytes:
    """The samples of Prometheus text `text` but those labelled with a collection that
    `shown` refuses (collection names match COLLECTION_PATTERN: no quote to escape)."""
    kept = []
    for line in text.splitlines(keepends=True):
        found = None if line.startswith(b"#") else _COLLECTION_LABEL.search(line)
        if found is None or shown(found.group(1).decode("utf-8", "replace")):
            kept.append(line)
    return b"".join(kept)


@router.get("/docs", include_in_schema=False)
async def docs(request: Request) -> HTMLResponse:
    """Swagger UI, its script, style and icon served from this server."""
    root = request.scope.get("root_path", "").rstrip("/")
    return get_swagger_ui_html(
        openapi_url=f"{root}/openapi.json",
        title="sift API",
        swagger_js_url=f"{root}/docs/assets/swagger-ui-bundle.js",
        swagger_css_url=f"{root}/docs/assets/swagger-ui.css",
        swagger_favicon_url=f"{root}/docs/assets/favicon-32x32.png",
        # No validator badge: it would send the document to an outside service.
        swagger_ui_parameters={"validatorUrl": None, "persistAuthorization": True},
    )


@router.get("/docs/assets/{name}", include_in_schema=False)
async def docs_asset(name: str) -> Response:
    media_type = _ASSETS.get(name)
    if media_type is None:
        return JSONResponse(
            {"error_code": 4040, "error_msg": f"no such asset {name!r}"}, status_code=404
        )
    data = (resources.files("fastapi_swagger") / "resources" / name).read_bytes()
    return Response(data, media_type=media_type, headers={"Cache-Control": "public, max-age=86400"})
