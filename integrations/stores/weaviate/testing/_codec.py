"""The fake's protobuf side: decoding what weaviate-client sends over gRPC (objects,
vectors, filters) and encoding search results the way Weaviate does."""

from __future__ import annotations

import uuid as uuid_module
from typing import Any

import numpy as np
from google.protobuf import json_format
from weaviate.proto.v1 import base_pb2, properties_pb2, search_get_pb2

from sift.integrations.stores.weaviate.testing._state import FakeCollection, StoredObject

__all__ = [
    "decode_batch_properties",
    "decode_vector",
    "encode_result",
    "encode_value",
    "filter_leaves",
    "filter_property",
    "filter_value",
    "query_vector",
]

_OP = base_pb2.Filters


def filter_leaves(f: Any) -> list[Any]:
    if f.operator in (_OP.OPERATOR_AND, _OP.OPERATOR_OR, _OP.OPERATOR_NOT):
        return [leaf for sub in f.filters for leaf in filter_leaves(sub)]
    return [f]


def filter_property(f: Any) -> str:
    # Newer clients name the property in `target`, older ones in `on`.
    return f.target.property if f.HasField("target") else (f.on[-1] if f.on else "")


def filter_value(f: Any) -> Any:
    which = f.WhichOneof("test_value")
    if which is None:
        return None
    value = getattr(f, which)
    if which.endswith("_array"):
        return list(value.values)
    return value


def decode_batch_properties(props: Any, coll: FakeCollection) -> dict[str, Any]:
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


def decode_vector(obj: Any) -> np.ndarray | None:
    if obj.vector_bytes:
        return np.frombuffer(obj.vector_bytes, dtype="<f4").copy()
    if len(obj.vector):
        return np.asarray(list(obj.vector), dtype=np.float32)
    for named in obj.vectors:
        if named.vector_bytes:
            return np.frombuffer(named.vector_bytes, dtype="<f4").copy()
    return None


def query_vector(search: Any) -> np.ndarray | None:
    if getattr(search, "vector_bytes", b""):
        return np.frombuffer(search.vector_bytes, dtype="<f4")
    if len(getattr(search, "vector", [])):
        return np.asarray(list(search.vector), dtype=np.float32)
    for named in getattr(search, "vectors", []):
        if named.vector_bytes:
            return np.frombuffer(named.vector_bytes, dtype="<f4")
    return None


def encode_value(v: Any) -> properties_pb2.Value:
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
    return properties_pb2.Value(null_value="NULL_VALUE")


def encode_result(
    request: Any, obj: StoredObject, score: float | None, distance: float | None
) -> Any:
    wanted = list(request.properties.non_ref_properties)
    if request.properties.return_all_nonref_properties or not wanted:
        wanted = list(obj.properties)
    fields = {
        n: encode_value(obj.properties[n]) for n in wanted if obj.properties.get(n) is not None
    }
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
