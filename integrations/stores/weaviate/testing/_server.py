"""`FakeWeaviate`: the loopback server itself, its lifecycle, the faults a test scripts,
and what a test inspects afterwards."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent import futures
from http.server import ThreadingHTTPServer
from typing import Any

import grpc
from weaviate.proto.v1 import weaviate_pb2_grpc

from sift.integrations.stores.weaviate._settings import WeaviateSettings
from sift.integrations.stores.weaviate.testing._grpc import Servicer, health_handler
from sift.integrations.stores.weaviate.testing._rest import make_handler
from sift.integrations.stores.weaviate.testing._state import (
    FakeCollection,
    Fault,
    GrpcCall,
    RestCall,
    StoredObject,
)

__all__ = ["FakeWeaviate"]


class FakeWeaviate:
    """A Weaviate double on two loopback ports (REST and gRPC)."""

    def __init__(
        self,
        *,
        version: str = "1.33.1",
        api_key: str | None = None,
        query_maximum_results: int = 10_000,
    ) -> None:
        self.version = version
        self.api_key = api_key
        # Weaviate's QUERY_MAXIMUM_RESULTS: no query's offset + limit may pass it.
        self.query_maximum_results = query_maximum_results
        self.ready = True
        self.serving = True
        self.collections: dict[str, FakeCollection] = {}
        self.rest_calls: list[RestCall] = []
        self.grpc_calls: list[GrpcCall] = []
        self._faults: dict[str, list[Fault]] = {}
        self._holds: dict[str, threading.Event] = {}
        self._reject: Callable[[str, dict[str, Any]], str | None] | None = None
        self._lock = threading.RLock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self))
        self._http.daemon_threads = True
        self._grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        servicer = Servicer(self)
        weaviate_pb2_grpc.add_WeaviateServicer_to_server(servicer, self._grpc)
        self._grpc.add_generic_rpc_handlers([health_handler(self)])
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
            # Bounds a broken run only: the fake answers at once, loaded machine or not.
            "init_timeout": 30.0,
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
            self._faults.setdefault(method, []).append(Fault(code, details, times))

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

    def objects(self, collection: str, tenant: str = "") -> dict[str, StoredObject]:
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
    ) -> dict[str, StoredObject]:
        coll = self.collections.get(name)
        if coll is None:
            context.abort(grpc.StatusCode.UNKNOWN, f"class {name} not found")
            raise AssertionError("unreachable: abort raises")
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
