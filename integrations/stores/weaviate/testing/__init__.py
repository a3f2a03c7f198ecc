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

from sift.integrations.stores.weaviate.testing._server import FakeWeaviate
from sift.integrations.stores.weaviate.testing._state import GrpcCall, RestCall

__all__ = ["FakeWeaviate", "GrpcCall", "RestCall"]
