"""sift's HTTP service (FastAPI): Dify's External Knowledge API at `POST /retrieval`, the
native `/v1` API (search with streamed progress, ingest, delete, stats), `/healthz` and
Prometheus `/metrics`. Run it with `sift serve`, or embed `create_app()` in an ASGI app.
"""

from __future__ import annotations

from sift.integrations.http._app import create_app
from sift.integrations.http._settings import ApiKey, CollectionConfig, ServerSettings

__all__ = ["ApiKey", "CollectionConfig", "ServerSettings", "create_app"]
