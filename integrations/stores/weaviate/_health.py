"""What `WeaviateCorpus.health()` reports: REST readiness, gRPC serving, the collection."""

from __future__ import annotations

from pydantic import BaseModel

from sift.integrations.stores.weaviate._collection import Scope, load_schema
from sift.integrations.stores.weaviate._connection import grpc_serving

__all__ = ["WeaviateHealth", "check_health"]


class WeaviateHealth(BaseModel):
    """What `WeaviateCorpus.health()` found; `ok` only when every part answers."""

    ok: bool
    location: str
    server_version: str | None = None
    rest_ready: bool = False
    grpc_serving: bool = False
    collection_exists: bool = False
    multi_tenancy: bool | None = None
    error: str | None = None


def check_health(scope: Scope, location: str) -> WeaviateHealth:
    """Asks each part in turn; never raises (a failure is the report's `error`)."""
    report = WeaviateHealth(ok=False, location=location)
    shared = scope.shared
    client = shared.client
    collection = scope.settings.collection
    try:
        report.rest_ready = bool(client.is_ready())
        report.server_version = shared.server_version or None
        report.grpc_serving = grpc_serving(scope.settings)
        with scope.errors("read the schema of"):
            report.collection_exists = bool(client.collections.exists(collection))
        if report.collection_exists:
            load_schema(shared)
            report.multi_tenancy = shared.multi_tenant
    except Exception as exc:
        report.error = str(exc)
    report.ok = report.rest_ready and report.grpc_serving and report.collection_exists
    if not report.ok and report.error is None:
        missing = [
            name
            for name, good in (
                ("REST /v1/.well-known/ready", report.rest_ready),
                ("gRPC health", report.grpc_serving),
                (f"collection {collection!r}", report.collection_exists),
            )
            if not good
        ]
        report.error = f"{scope.describe()}: not answering: {', '.join(missing)}"
    return report
