"""What the fake Weaviate holds: collections (their schema and objects per tenant), the
calls it received, and the faults a test scripted."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import grpc
import numpy as np

__all__ = ["FakeCollection", "Fault", "GrpcCall", "RestCall", "StoredObject", "validate"]


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
    # gRPC metadata: text, or bytes for binary (`-bin`) keys.
    metadata: dict[str, str | bytes]


@dataclass
class StoredObject:
    uuid: str
    properties: dict[str, Any]
    vector: np.ndarray | None


@dataclass
class Fault:
    code: grpc.StatusCode
    details: str
    times: int


@dataclass
class FakeCollection:
    config: dict[str, Any]
    # tenant ("" when not multi-tenant) -> uuid -> object
    shards: dict[str, dict[str, StoredObject]] = field(default_factory=dict)

    @property
    def multi_tenant(self) -> bool:
        return bool(self.config.get("multiTenancyConfig", {}).get("enabled"))

    def prop(self, name: str) -> dict[str, Any] | None:
        for p in self.config.get("properties", []):
            if p["name"] == name:
                return p
        return None


def validate(coll: FakeCollection, props: dict[str, Any], tenant: str) -> str | None:
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
