"""The fake's gRPC side: health, BatchObjects, BatchDelete, Aggregate, TenantsGet and
Search, with every call recorded and scripted faults applied."""

from __future__ import annotations

import uuid as uuid_module
from typing import TYPE_CHECKING, Any

import grpc
from weaviate.proto.v1 import (
    aggregate_pb2,
    batch_delete_pb2,
    batch_pb2,
    health_weaviate_pb2,
    search_get_pb2,
    tenants_pb2,
    weaviate_pb2_grpc,
)

from sift.integrations.stores.weaviate.testing._codec import (
    decode_batch_properties,
    decode_vector,
    encode_result,
)
from sift.integrations.stores.weaviate.testing._search import evaluate, index_problem, rank
from sift.integrations.stores.weaviate.testing._state import GrpcCall, StoredObject, validate

if TYPE_CHECKING:
    from sift.integrations.stores.weaviate.testing._server import FakeWeaviate

__all__ = ["Servicer", "health_handler"]


def health_handler(fake: FakeWeaviate) -> grpc.GenericRpcHandler:
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


class Servicer(weaviate_pb2_grpc.WeaviateServicer):
    def __init__(self, fake: FakeWeaviate) -> None:
        self.fake = fake

    def _matching(
        self, method: str, request: Any, context: grpc.ServicerContext
    ) -> tuple[dict[str, StoredObject], list[StoredObject]]:
        """The shard a request addresses and its objects that pass the request's filter."""
        fake = self.fake
        fake._enter(method, request, context)  # outside the lock: it may be held
        with fake._lock:
            shard = fake._shard(request.collection, request.tenant, context)
            coll = fake.collections[request.collection]
            problem = index_problem(request, coll)
            if problem:
                context.abort(grpc.StatusCode.UNKNOWN, problem)
            if not request.HasField("filters"):
                return shard, list(shard.values())
            return shard, [o for o in shard.values() if evaluate(request.filters, o, coll)]

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
                props = decode_batch_properties(obj.properties, coll)
                message = validate(coll, props, obj.tenant)
                if message is None and fake._reject is not None:
                    message = fake._reject(obj.uuid, props)
                if message is not None:
                    errors.append(
                        batch_pb2.BatchObjectsReply.BatchError(index=index, error=message)
                    )
                    continue
                tenant = obj.tenant if coll.multi_tenant else ""
                coll.shards.setdefault(tenant, {})[obj.uuid] = StoredObject(
                    obj.uuid, props, decode_vector(obj)
                )
        return batch_pb2.BatchObjectsReply(took=0.001, errors=errors)

    def BatchDelete(self, request: Any, context: grpc.ServicerContext) -> Any:
        shard, matching = self._matching("BatchDelete", request, context)
        # One batch delete removes at most QUERY_MAXIMUM_RESULTS objects, as in Weaviate.
        doomed = sorted(o.uuid for o in matching)[: self.fake.query_maximum_results]
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
        if request.offset + request.limit > self.fake.query_maximum_results:
            # Weaviate's QUERY_MAXIMUM_RESULTS: no query reaches past this window.
            self.fake._enter("Search", request, context)
            context.abort(grpc.StatusCode.UNKNOWN, "query maximum results exceeded")
        if request.after and (request.HasField("filters") or len(request.sort_by)):
            # Weaviate's cursor walks the whole collection in id order, nothing else.
            self.fake._enter("Search", request, context)
            context.abort(
                grpc.StatusCode.UNKNOWN, "a cursor (after) cannot be combined with a filter or sort"
            )
        _, pool = self._matching("Search", request, context)
        with self.fake._lock:
            scored = rank(request, pool, self.fake.collections[request.collection])
        offset = request.offset or 0
        limit = request.limit or 10
        window = scored[offset : offset + limit]
        results = [encode_result(request, obj, score, distance) for obj, score, distance in window]
        return search_get_pb2.SearchReply(took=0.001, results=results)
