"""The fake's REST side: meta, readiness and the schema (collections, properties,
tenants), answered as Weaviate answers them, with every request recorded."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from sift.integrations.stores.weaviate.testing._state import FakeCollection, RestCall

if TYPE_CHECKING:
    from sift.integrations.stores.weaviate.testing._server import FakeWeaviate

__all__ = ["full_class", "make_handler"]


def make_handler(fake: FakeWeaviate) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; without this, Nagle's algorithm and
        # delayed ACKs add ~40 ms to every keep-alive request.
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:
            pass

        def _reply(self, status: int, body: Any = None) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            path = self.path.split("?", 1)[0]
            headers = {k.lower(): v for k, v in self.headers.items()}
            with fake._lock:
                fake.rest_calls.append(RestCall(self.command, path, body, headers))
            if fake.api_key and headers.get("authorization") != f"Bearer {fake.api_key}":
                self._reply(401, {"code": 401, "message": "anonymous access not enabled"})
                return
            status, payload = route(fake, self.command, path, body)
            self._reply(status, payload)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _handle

    return Handler


def route(fake: FakeWeaviate, method: str, path: str, body: Any) -> tuple[int, Any]:
    parts = [p for p in path.split("/") if p]
    if parts[:1] != ["v1"]:
        return 404, {"error": [{"message": f"no route {path}"}]}
    parts = parts[1:]
    if parts == ["meta"]:
        return 200, {
            "hostname": "http://[::]:8080",
            "version": fake.version,
            "modules": {},
            "grpcMaxMessageSize": 104858000,
        }
    if parts == [".well-known", "ready"]:
        return (200, None) if fake.ready else (503, None)
    if parts == [".well-known", "live"]:
        return 200, None
    if parts == [".well-known", "openid-configuration"]:
        return 404, None
    if parts[:1] != ["schema"]:
        return 404, {"error": [{"message": f"no route {path}"}]}
    with fake._lock:
        if len(parts) == 1:
            if method == "GET":
                return 200, {"classes": [full_class(c.config) for c in fake.collections.values()]}
            if method == "POST":
                name = body["class"]
                if name in fake.collections:
                    return 422, {"error": [{"message": f"class name {name!r} already exists"}]}
                fake.collections[name] = FakeCollection(config=body)
                return 200, full_class(body)
        name = parts[1]
        coll = fake.collections.get(name)
        if len(parts) == 2:
            if method in ("GET", "HEAD"):
                return (200, full_class(coll.config)) if coll else (404, None)
            if method == "DELETE":
                fake.collections.pop(name, None)
                return 200, None
        if coll is None:
            return 404, {"error": [{"message": f"class {name} not found"}]}
        if parts[2:] == ["properties"] and method == "POST":
            if coll.prop(body["name"]) is not None:
                return 422, {"error": [{"message": f"property {body['name']!r} exists"}]}
            coll.config.setdefault("properties", []).append(body)
            return 200, body
        if parts[2:] == ["tenants"]:
            if method == "GET":
                return 200, [{"name": t, "activityStatus": "HOT"} for t in coll.shards if t]
            if method == "POST":
                for tenant in body:
                    coll.shards.setdefault(tenant["name"], {})
                return 200, body
    return 404, {"error": [{"message": f"no route {method} {path}"}]}


def full_class(config: dict[str, Any]) -> dict[str, Any]:
    """The class as Weaviate shows it: what was posted, with the server's defaults."""
    out = json.loads(json.dumps(config))
    out.setdefault("description", "")
    out.setdefault("properties", [])
    for prop in out["properties"]:
        prop.setdefault("indexFilterable", True)
        prop.setdefault("indexSearchable", prop["dataType"][0] in ("text", "text[]"))
        prop.setdefault("indexRangeFilters", False)
        if prop["dataType"][0] in ("text", "text[]"):
            prop.setdefault("tokenization", "word")
        prop.setdefault("moduleConfig", {})
    inverted = out.setdefault("invertedIndexConfig", {})
    bm25 = inverted.setdefault("bm25", {})
    bm25.setdefault("b", 0.75)
    bm25.setdefault("k1", 1.2)
    inverted.setdefault("cleanupIntervalSeconds", 60)
    stopwords = inverted.setdefault("stopwords", {})
    stopwords.setdefault("preset", "en")
    stopwords.setdefault("additions", None)
    stopwords.setdefault("removals", None)
    inverted.setdefault("indexNullState", False)
    inverted.setdefault("indexPropertyLength", False)
    inverted.setdefault("indexTimestamps", False)
    out.setdefault("multiTenancyConfig", {"enabled": False})
    out["multiTenancyConfig"].setdefault("autoTenantCreation", False)
    out["multiTenancyConfig"].setdefault("autoTenantActivation", False)
    out.setdefault(
        "replicationConfig",
        {"factor": 1, "asyncEnabled": False, "deletionStrategy": "NoAutomatedResolution"},
    )
    out.setdefault(
        "shardingConfig",
        {
            "virtualPerPhysical": 128,
            "desiredCount": 1,
            "actualCount": 1,
            "desiredVirtualCount": 128,
            "actualVirtualCount": 128,
            "key": "_id",
            "strategy": "hash",
            "function": "murmur3",
        },
    )
    for vector in (out.get("vectorConfig") or {}).values():
        vector.setdefault("vectorIndexType", "hnsw")
        vector["vectorIndexConfig"] = _hnsw_defaults(vector.get("vectorIndexConfig") or {})
    if not out.get("vectorConfig"):
        out.setdefault("vectorizer", "none")
        out.setdefault("vectorIndexType", "hnsw")
        out["vectorIndexConfig"] = _hnsw_defaults(out.get("vectorIndexConfig") or {})
    return out


def _hnsw_defaults(config: dict[str, Any]) -> dict[str, Any]:
    base = {
        "skip": False,
        "cleanupIntervalSeconds": 300,
        "maxConnections": 32,
        "efConstruction": 128,
        "ef": -1,
        "dynamicEfMin": 100,
        "dynamicEfMax": 500,
        "dynamicEfFactor": 8,
        "vectorCacheMaxObjects": 1000000000000,
        "flatSearchCutoff": 40000,
        "distance": "cosine",
        "pq": {
            "enabled": False,
            "bitCompression": False,
            "segments": 0,
            "centroids": 256,
            "trainingLimit": 100000,
            "encoder": {"type": "kmeans", "distribution": "log-normal"},
        },
        "bq": {"enabled": False},
        "sq": {"enabled": False, "trainingLimit": 100000, "rescoreLimit": 20},
        "filterStrategy": "sweeping",
    }
    base.update(config)
    return base
