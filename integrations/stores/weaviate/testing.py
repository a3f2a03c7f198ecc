"""A loopback Weaviate for tests: the real REST and gRPC protocols on 127.0.0.1.

`FakeWeaviate` answers the calls weaviate-client v4 makes (REST: meta, readiness,
schema; gRPC: health, Search, BatchObjects, BatchDelete, Aggregate, TenantsGet) with the
protobuf messages that ship with the client. It keeps objects in memory per collection
and tenant and evaluates filters, BM25, near-vector and relative-score hybrid search
well enough to run sift's store contract against it. Every request is recorded
(`rest_calls`, `grpc_calls`) so tests assert exactly what went over the wire, and faults
can be scripted: failing calls (`fail`), calls held until released (`hold`, for
timeouts), and per-object batch errors (`reject`).

    with FakeWeaviate() as fake:
        corpus = WeaviateCorpus(fake.settings(collection="Docs"))
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
import threading
import uuid as uuid_module
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
import numpy as np
from google.protobuf import json_format
from weaviate.proto.v1 import (
    aggregate_pb2,
    base_pb2,
    batch_delete_pb2,
    batch_pb2,
    health_weaviate_pb2,
    properties_pb2,
    search_get_pb2,
    tenants_pb2,
    weaviate_pb2_grpc,
)

from sift.integrations.stores.weaviate._settings import WeaviateSettings

__all__ = ["FakeWeaviate", "GrpcCall", "RestCall"]

QUERY_MAXIMUM_RESULTS = 10_000
_WORD = re.compile(r"[0-9A-Za-z\u00c0-\uffff]+")
_OP = base_pb2.Filters


@dataclass
class RestCall:
    method: str
    path: str
    body: Any
    headers: dict[str, str]


@dataclass
class GrpcCall:
    method: str
    request: Any
    metadata: dict[str, str]


@dataclass
class _Object:
    uuid: str
    properties: dict[str, Any]
    vector: np.ndarray | None


@dataclass
class _Fault:
    code: grpc.StatusCode
    details: str
    times: int


@dataclass
class _Collection:
    config: dict[str, Any]
    # tenant ("" when not multi-tenant) -> uuid -> object
    shards: dict[str, dict[str, _Object]] = field(default_factory=dict)

    @property
    def multi_tenant(self) -> bool:
        return bool(self.config.get("multiTenancyConfig", {}).get("enabled"))

    def prop(self, name: str) -> dict[str, Any] | None:
        for p in self.config.get("properties", []):
            if p["name"] == name:
                return p
        return None


class FakeWeaviate:
    """A Weaviate double on two loopback ports (REST and gRPC)."""

    def __init__(self, *, version: str = "1.33.1", api_key: str | None = None) -> None:
        self.version = version
        self.api_key = api_key
        self.ready = True
        self.serving = True
        self.collections: dict[str, _Collection] = {}
        self.rest_calls: list[RestCall] = []
        self.grpc_calls: list[GrpcCall] = []
        self._faults: dict[str, list[_Fault]] = {}
        self._holds: dict[str, threading.Event] = {}
        self._reject: Callable[[str, dict[str, Any]], str | None] | None = None
        self._lock = threading.RLock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._http.daemon_threads = True
        self._grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        servicer = _Servicer(self)
        weaviate_pb2_grpc.add_WeaviateServicer_to_server(servicer, self._grpc)
        self._grpc.add_generic_rpc_handlers([_health_handler(self)])
        self.grpc_port = self._grpc.add_insecure_port("127.0.0.1:0")
        self.http_port = self._http.server_address[1]
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeWeaviate:
        self._grpc.start()
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        for event in self._holds.values():
            event.set()
        self._http.shutdown()
        self._http.server_close()
        self._grpc.stop(grace=None)

    def __enter__(self) -> FakeWeaviate:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def settings(self, **overrides: Any) -> WeaviateSettings:
        values: dict[str, Any] = {
            "host": "127.0.0.1",
            "http_port": self.http_port,
            "grpc_port": self.grpc_port,
            "init_timeout": 2.0,
        }
        values.update(overrides)
        return WeaviateSettings(**values)

    def url(self, **query: str) -> str:
        extra = "".join(f"&{k}={v}" for k, v in query.items())
        return f"weaviate://127.0.0.1:{self.http_port}?grpc={self.grpc_port}{extra}"

    # ------------------------------------------------------------------ faults

    def fail(
        self,
        method: str,
        code: grpc.StatusCode = grpc.StatusCode.INTERNAL,
        details: str = "injected failure",
        times: int = 1,
    ) -> None:
        """The next `times` gRPC calls of `method` abort with `code`."""
        with self._lock:
            self._faults.setdefault(method, []).append(_Fault(code, details, times))

    def hold(self, method: str) -> threading.Event:
        """gRPC calls of `method` wait until the returned event is set (or the fake stops)."""
        event = threading.Event()
        self._holds[method] = event
        return event

    def release(self, method: str) -> None:
        event = self._holds.pop(method, None)
        if event is not None:
            event.set()

    def reject(self, predicate: Callable[[str, dict[str, Any]], str | None] | None) -> None:
        """BatchObjects reports an error for each object (uuid, properties) for which
        `predicate` returns a message; None stops rejecting."""
        self._reject = predicate

    # ------------------------------------------------------------------ inspection

    def calls(self, method: str) -> list[Any]:
        return [c.request for c in self.grpc_calls if c.method == method]

    def objects(self, collection: str, tenant: str = "") -> dict[str, _Object]:
        return self.collections[collection].shards.get(tenant, {})

    # ------------------------------------------------------------------ gRPC plumbing

    def _enter(self, method: str, request: Any, context: grpc.ServicerContext) -> None:
        metadata = {k: v for k, v in context.invocation_metadata()}
        with self._lock:
            self.grpc_calls.append(GrpcCall(method, request, metadata))
            queue = self._faults.get(method) or []
            fault = queue[0] if queue else None
            if fault is not None:
                fault.times -= 1
                if fault.times <= 0:
                    queue.pop(0)
        if self.api_key and metadata.get("authorization") != f"Bearer {self.api_key}":
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid api key")
        event = self._holds.get(method)
        if event is not None:
            event.wait(timeout=30)
        if fault is not None:
            context.abort(fault.code, fault.details)

    def _shard(
        self, name: str, tenant: str, context: grpc.ServicerContext, create: bool = False
    ) -> dict[str, _Object]:
        coll = self.collections.get(name)
        if coll is None:
            context.abort(grpc.StatusCode.UNKNOWN, f"class {name} not found")
        if coll.multi_tenant:
            if not tenant:
                context.abort(
                    grpc.StatusCode.UNKNOWN,
                    f"class {name}: has multi-tenancy enabled, but request was without tenant",
                )
            if tenant not in coll.shards:
                if not create:
                    context.abort(grpc.StatusCode.UNKNOWN, f'tenant not found: "{tenant}"')
                coll.shards[tenant] = {}
        elif tenant:
            context.abort(
                grpc.StatusCode.UNKNOWN,
                f"class {name}: has multi-tenancy disabled, but request was with tenant",
            )
        return coll.shards.setdefault(tenant, {})


# --------------------------------------------------------------------------- REST


def _make_handler(fake: FakeWeaviate) -> type[BaseHTTPRequestHandler]:
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
            status, payload = _rest(fake, self.command, path, body)
            self._reply(status, payload)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _handle

    return Handler


def _rest(fake: FakeWeaviate, method: str, path: str, body: Any) -> tuple[int, Any]:
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
                return 200, {"classes": [_full_class(c.config) for c in fake.collections.values()]}
            if method == "POST":
                name = body["class"]
                if name in fake.collections:
                    return 422, {"error": [{"message": f"class name {name!r} already exists"}]}
                fake.collections[name] = _Collection(config=body)
                return 200, _full_class(body)
        name = parts[1]
        coll = fake.collections.get(name)
        if len(parts) == 2:
            if method in ("GET", "HEAD"):
                return (200, _full_class(coll.config)) if coll else (404, None)
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


def _full_class(config: dict[str, Any]) -> dict[str, Any]:
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


# --------------------------------------------------------------------------- gRPC


def _health_handler(fake: FakeWeaviate) -> grpc.GenericRpcHandler:
    def check(request: Any, context: grpc.ServicerContext) -> Any:
        with fake._lock:
            fake.grpc_calls.append(GrpcCall("Health", request, {}))
        status = (
            health_weaviate_pb2.WeaviateHealthCheckResponse.SERVING
            if fake.serving
            else health_weaviate_pb2.WeaviateHealthCheckResponse.NOT_SERVING
        )
        return health_weaviate_pb2.WeaviateHealthCheckResponse(status=status)

    return grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health",
        {
            "Check": grpc.unary_unary_rpc_method_handler(
                check,
                request_deserializer=health_weaviate_pb2.WeaviateHealthCheckRequest.FromString,
                response_serializer=health_weaviate_pb2.WeaviateHealthCheckResponse.SerializeToString,
            )
        },
    )


class _Servicer(weaviate_pb2_grpc.WeaviateServicer):
    def __init__(self, fake: FakeWeaviate) -> None:
        self.fake = fake

    def _matching(
        self, method: str, request: Any, context: grpc.ServicerContext
    ) -> tuple[dict[str, _Object], list[_Object]]:
        """The shard a request addresses and its objects that pass the request's filter."""
        fake = self.fake
        fake._enter(method, request, context)  # outside the lock: it may be held
        with fake._lock:
            shard = fake._shard(request.collection, request.tenant, context)
            coll = fake.collections[request.collection]
            problem = _index_problem(request, coll)
            if problem:
                context.abort(grpc.StatusCode.UNKNOWN, problem)
            if not request.HasField("filters"):
                return shard, list(shard.values())
            return shard, [o for o in shard.values() if _eval(request.filters, o, coll)]

    # -- writes

    def BatchObjects(self, request: Any, context: grpc.ServicerContext) -> Any:
        fake = self.fake
        fake._enter("BatchObjects", request, context)
        errors = []
        with fake._lock:
            for index, obj in enumerate(request.objects):
                coll = fake.collections.get(obj.collection)
                if coll is None:
                    errors.append(
                        batch_pb2.BatchObjectsReply.BatchError(
                            index=index, error=f"class {obj.collection} not found"
                        )
                    )
                    continue
                props = _decode_batch_properties(obj.properties, coll)
                message = _validate(coll, props, obj.tenant)
                if message is None and fake._reject is not None:
                    message = fake._reject(obj.uuid, props)
                if message is not None:
                    errors.append(
                        batch_pb2.BatchObjectsReply.BatchError(index=index, error=message)
                    )
                    continue
                tenant = obj.tenant if coll.multi_tenant else ""
                coll.shards.setdefault(tenant, {})[obj.uuid] = _Object(
                    obj.uuid, props, _decode_vector(obj)
                )
        return batch_pb2.BatchObjectsReply(took=0.001, errors=errors)

    def BatchDelete(self, request: Any, context: grpc.ServicerContext) -> Any:
        shard, matching = self._matching("BatchDelete", request, context)
        doomed = [o.uuid for o in matching]
        with self.fake._lock:
            if not request.dry_run:
                for u in doomed:
                    del shard[u]
        return batch_delete_pb2.BatchDeleteReply(
            took=0.001,
            failed=0,
            matches=len(doomed),
            successful=len(doomed),
            objects=[
                batch_delete_pb2.BatchDeleteObject(uuid=uuid_module.UUID(u).bytes, successful=True)
                for u in doomed
            ]
            if request.verbose
            else [],
        )

    # -- reads

    def Aggregate(self, request: Any, context: grpc.ServicerContext) -> Any:
        count = len(self._matching("Aggregate", request, context)[1])
        return aggregate_pb2.AggregateReply(
            took=0.001, single_result=aggregate_pb2.AggregateReply.Single(objects_count=count)
        )

    def TenantsGet(self, request: Any, context: grpc.ServicerContext) -> Any:
        fake = self.fake
        fake._enter("TenantsGet", request, context)
        coll = fake.collections.get(request.collection)
        names = [t for t in (coll.shards if coll else {}) if t]
        return tenants_pb2.TenantsGetReply(
            took=0.001,
            tenants=[
                tenants_pb2.Tenant(name=n, activity_status=tenants_pb2.TENANT_ACTIVITY_STATUS_HOT)
                for n in names
            ],
        )

    def Search(self, request: Any, context: grpc.ServicerContext) -> Any:
        if request.offset + request.limit > QUERY_MAXIMUM_RESULTS:
            # Weaviate's QUERY_MAXIMUM_RESULTS: no query reaches past this window.
            self.fake._enter("Search", request, context)
            context.abort(grpc.StatusCode.UNKNOWN, "query maximum results exceeded")
        _, pool = self._matching("Search", request, context)
        with self.fake._lock:
            scored = _rank(request, pool, self.fake.collections[request.collection])
        offset = request.offset or 0
        limit = request.limit or 10
        window = scored[offset : offset + limit]
        results = [_result(request, obj, score, distance) for obj, score, distance in window]
        return search_get_pb2.SearchReply(took=0.001, results=results)


# --------------------------------------------------------------------------- helpers


def _index_problem(request: Any, coll: _Collection) -> str | None:
    """What real Weaviate refuses: filtering or sorting on a property without a
    filterable index, keyword search on one without a searchable index."""
    names: list[str] = []
    if request.HasField("filters"):
        names += [_filter_property(leaf) for leaf in _filter_leaves(request.filters)]
    for sort in getattr(request, "sort_by", []):
        names.append(sort.path[0])
    for name in names:
        prop = coll.prop(name)
        if name != "_id" and prop is not None and not prop.get("indexFilterable", True):
            return f"Filtering by property '{name}' requires inverted index"
    searches = []
    if request.HasField("bm25_search") if hasattr(request, "bm25_search") else False:
        searches = list(request.bm25_search.properties)
    elif request.HasField("hybrid_search") if hasattr(request, "hybrid_search") else False:
        searches = list(request.hybrid_search.properties)
    for name in searches:
        prop = coll.prop(name)
        if prop is None or not prop.get("indexSearchable", True):
            return f"property '{name}' is not searchable (indexSearchable is false)"
    return None


def _filter_leaves(f: Any) -> list[Any]:
    if f.operator in (_OP.OPERATOR_AND, _OP.OPERATOR_OR, _OP.OPERATOR_NOT):
        return [leaf for sub in f.filters for leaf in _filter_leaves(sub)]
    return [f]


def _filter_property(f: Any) -> str:
    # Newer clients name the property in `target`, older ones in `on`.
    return f.target.property if f.HasField("target") else (f.on[-1] if f.on else "")


def _decode_batch_properties(props: Any, coll: _Collection) -> dict[str, Any]:
    out: dict[str, Any] = json_format.MessageToDict(props.non_ref_properties)
    for group in (props.text_array_properties, props.boolean_array_properties):
        for arr in group:
            out[arr.prop_name] = list(arr.values)
    for arr in props.int_array_properties:
        out[arr.prop_name] = [int(v) for v in arr.values]
    for arr in props.number_array_properties:
        values = (
            np.frombuffer(arr.values_bytes, dtype="<f8").tolist()
            if arr.values_bytes
            else list(arr.values)
        )
        out[arr.prop_name] = [float(v) for v in values]
    for name, value in list(out.items()):
        prop = coll.prop(name)
        if prop is not None and prop["dataType"][0] == "int" and isinstance(value, float):
            out[name] = int(value)
    return out


def _validate(coll: _Collection, props: dict[str, Any], tenant: str) -> str | None:
    if coll.multi_tenant and not tenant:
        name = coll.config["class"]
        return f"class {name} has multi-tenancy enabled, but request was without tenant"
    for name, value in props.items():
        prop = coll.prop(name)
        if prop is None:
            return f"no such prop with name '{name}' found in class '{coll.config['class']}'"
        kind = prop["dataType"][0]
        ok = {
            "text": lambda v: isinstance(v, str),
            "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "int": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool),
            "text[]": lambda v: isinstance(v, list),
            "number[]": lambda v: isinstance(v, list),
            "boolean[]": lambda v: isinstance(v, list),
        }.get(kind, lambda v: True)(value)
        if not ok and value is not None:
            return f"invalid {kind} property '{name}' on class '{coll.config['class']}'"
    return None


def _decode_vector(obj: Any) -> np.ndarray | None:
    if obj.vector_bytes:
        return np.frombuffer(obj.vector_bytes, dtype="<f4").copy()
    if len(obj.vector):
        return np.asarray(list(obj.vector), dtype=np.float32)
    for named in obj.vectors:
        if named.vector_bytes:
            return np.frombuffer(named.vector_bytes, dtype="<f4").copy()
    return None


def _tokens(value: Any) -> list[str]:
    return [t.lower() for t in _WORD.findall(str(value))]


def _tokenization(coll: _Collection, name: str) -> str:
    prop = coll.prop(name)
    return (prop or {}).get("tokenization", "word")


def _filter_value(f: Any) -> Any:
    which = f.WhichOneof("test_value")
    if which is None:
        return None
    value = getattr(f, which)
    if which.endswith("_array"):
        return list(value.values)
    return value


def _eval(f: Any, obj: _Object, coll: _Collection) -> bool:
    op = f.operator
    if op == _OP.OPERATOR_AND:
        return all(_eval(sub, obj, coll) for sub in f.filters)
    if op == _OP.OPERATOR_OR:
        return any(_eval(sub, obj, coll) for sub in f.filters)
    if op == _OP.OPERATOR_NOT:
        return not _eval(f.filters[0], obj, coll)
    name = _filter_property(f)
    want = _filter_value(f)
    if name == "_id":
        have: Any = obj.uuid
    else:
        have = obj.properties.get(name)
    if op == _OP.OPERATOR_IS_NULL:
        return (have is None or have == []) == bool(want)
    if have is None:
        return op in (_OP.OPERATOR_NOT_EQUAL, _OP.OPERATOR_CONTAINS_NONE)
    word = _tokenization(coll, name) == "word"
    values = have if isinstance(have, list) else [have]

    def norm(v: Any) -> Any:
        return v.lower() if isinstance(v, str) and word else v

    def equal(v: Any, w: Any) -> bool:
        if isinstance(v, str) and word:
            wanted = _tokens(w)
            return bool(wanted) and set(wanted) <= set(_tokens(v))
        if isinstance(v, int | float) and isinstance(w, int | float):
            return float(v) == float(w)
        return v == w

    if op == _OP.OPERATOR_EQUAL:
        return any(equal(v, want) for v in values)
    if op == _OP.OPERATOR_NOT_EQUAL:
        return not any(equal(v, want) for v in values)
    if op == _OP.OPERATOR_CONTAINS_ANY:
        return any(equal(v, w) for v in values for w in want)
    if op == _OP.OPERATOR_CONTAINS_ALL:
        return all(any(equal(v, w) for v in values) for w in want)
    if op == _OP.OPERATOR_CONTAINS_NONE:
        return not any(equal(v, w) for v in values for w in want)
    if op == _OP.OPERATOR_LIKE:
        if word:
            pattern = str(want).lower()
            return any(fnmatch.fnmatchcase(t, pattern) for v in values for t in _tokens(v))
        return any(fnmatch.fnmatchcase(str(v), str(want)) for v in values)
    compare = {
        _OP.OPERATOR_GREATER_THAN: lambda a, b: a > b,
        _OP.OPERATOR_GREATER_THAN_EQUAL: lambda a, b: a >= b,
        _OP.OPERATOR_LESS_THAN: lambda a, b: a < b,
        _OP.OPERATOR_LESS_THAN_EQUAL: lambda a, b: a <= b,
    }.get(op)
    if compare is None:
        raise ValueError(f"the fake does not evaluate filter operator {op}")
    try:
        return any(compare(norm(v), norm(want)) for v in values)
    except TypeError:
        return False


def _bm25(query: str, props: list[str], pool: list[_Object]) -> dict[str, float]:
    terms = set(_tokens(query))
    if not terms or not pool:
        return {}
    docs = {
        o.uuid: [t for p in props for t in _tokens(o.properties.get(p, "") or "")] for o in pool
    }
    n = len(docs)
    avg = sum(len(d) for d in docs.values()) / n or 1.0
    df = {t: sum(1 for d in docs.values() if t in d) for t in terms}
    scores: dict[str, float] = {}
    for key, tokens in docs.items():
        score = 0.0
        for t in terms:
            tf = tokens.count(t)
            if tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(tokens) / avg))
        if score > 0:
            scores[key] = score
    return scores


def _query_vector(search: Any) -> np.ndarray | None:
    if getattr(search, "vector_bytes", b""):
        return np.frombuffer(search.vector_bytes, dtype="<f4")
    if len(getattr(search, "vector", [])):
        return np.asarray(list(search.vector), dtype=np.float32)
    for named in getattr(search, "vectors", []):
        if named.vector_bytes:
            return np.frombuffer(named.vector_bytes, dtype="<f4")
    return None


def _distances(vec: np.ndarray, pool: list[_Object]) -> dict[str, float]:
    out = {}
    qn = float(np.linalg.norm(vec)) or 1.0
    for o in pool:
        if o.vector is None or o.vector.shape != vec.shape:
            continue
        on = float(np.linalg.norm(o.vector)) or 1.0
        out[o.uuid] = 1.0 - float(np.dot(vec, o.vector)) / (qn * on)
    return out


def _rank(
    request: Any, pool: list[_Object], coll: _Collection
) -> list[tuple[_Object, float | None, float | None]]:
    by_id = {o.uuid: o for o in pool}
    if request.HasField("bm25_search"):
        scores = _bm25(
            request.bm25_search.query, list(request.bm25_search.properties) or ["text"], pool
        )
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(by_id[k], s, None) for k, s in ranked]
    if request.HasField("near_vector"):
        vec = _query_vector(request.near_vector)
        dist = _distances(vec, pool) if vec is not None else {}
        ranked = sorted(dist.items(), key=lambda kv: (kv[1], kv[0]))
        return [(by_id[k], None, d) for k, d in ranked]
    if request.HasField("hybrid_search"):
        h = request.hybrid_search
        lexical = _bm25(h.query, list(h.properties) or ["text"], pool)
        vec = _query_vector(h)
        if vec is None and h.HasField("near_vector"):
            vec = _query_vector(h.near_vector)
        dense = {k: 1.0 - d for k, d in (_distances(vec, pool) if vec is not None else {}).items()}
        fused: dict[str, float] = {}
        for weight, scores in ((h.alpha, dense), (1.0 - h.alpha, lexical)):
            if not scores or weight == 0:
                continue
            low, high = min(scores.values()), max(scores.values())
            for key, value in scores.items():
                norm = (value - low) / (high - low) if high > low else 1.0
                fused[key] = fused.get(key, 0.0) + weight * norm
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(by_id[k], s, None) for k, s in ranked]
    # A plain fetch: uuid order, the order Weaviate's cursor uses, or the requested sort.
    objs = sorted(pool, key=lambda o: o.uuid)
    if request.after:
        objs = [o for o in objs if o.uuid > request.after]
    for sort in reversed(list(request.sort_by)):
        name = sort.path[0]
        objs.sort(
            key=lambda o, n=name: (o.properties.get(n) is None, o.properties.get(n) or 0),
            reverse=not sort.ascending,
        )
    return [(o, None, None) for o in objs]


def _value(v: Any) -> properties_pb2.Value:
    if isinstance(v, bool):
        return properties_pb2.Value(bool_value=v)
    if isinstance(v, int):
        return properties_pb2.Value(int_value=v)
    if isinstance(v, float):
        return properties_pb2.Value(number_value=v)
    if isinstance(v, str):
        return properties_pb2.Value(text_value=v)
    if isinstance(v, list):
        if all(isinstance(x, bool) for x in v):
            lv = properties_pb2.ListValue(bool_values=properties_pb2.BoolValues(values=v))
        elif all(isinstance(x, str) for x in v):
            lv = properties_pb2.ListValue(text_values=properties_pb2.TextValues(values=v))
        else:
            lv = properties_pb2.ListValue(
                number_values=properties_pb2.NumberValues(
                    values=np.asarray(v, dtype="<f8").tobytes()
                )
            )
        return properties_pb2.Value(list_value=lv)
    return properties_pb2.Value(null_value=0)


def _result(request: Any, obj: _Object, score: float | None, distance: float | None) -> Any:
    wanted = list(request.properties.non_ref_properties)
    if request.properties.return_all_nonref_properties or not wanted:
        wanted = list(obj.properties)
    fields = {n: _value(obj.properties[n]) for n in wanted if obj.properties.get(n) is not None}
    meta = search_get_pb2.MetadataResult(id=obj.uuid, id_as_bytes=uuid_module.UUID(obj.uuid).bytes)
    if request.metadata.score and score is not None:
        meta.score = score
        meta.score_present = True
    if request.metadata.distance and distance is not None:
        meta.distance = distance
        meta.distance_present = True
    if request.metadata.vector and obj.vector is not None:
        meta.vector_bytes = obj.vector.astype("<f4").tobytes()
        meta.vectors.append(
            base_pb2.Vectors(name="default", vector_bytes=obj.vector.astype("<f4").tobytes())
        )
    return search_get_pb2.SearchResult(
        properties=search_get_pb2.PropertiesResult(
            non_ref_props=properties_pb2.Properties(fields=fields)
        ),
        metadata=meta,
    )
