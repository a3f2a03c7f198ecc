"""Connecting to Weaviate: the client over REST and gRPC, its readiness checks (without
the client's own, which ask the package index for the latest version), and the server's
version."""

from __future__ import annotations

import weaviate
from weaviate.classes.init import AdditionalConfig, Auth, Timeout
from weaviate.connect import ConnectionParams
from weaviate.exceptions import UnexpectedStatusCodeError, WeaviateBaseError

from sift.errors import StoreUnavailableError
from sift.integrations.stores._closing import release_quietly
from sift.integrations.stores.weaviate._errors import CHECK_API_KEY, START_WEAVIATE, reason
from sift.integrations.stores.weaviate._settings import WeaviateSettings

__all__ = ["connect", "grpc_serving", "server_version", "version_tuple"]


def connect(settings: WeaviateSettings) -> weaviate.WeaviateClient:
    """A connected client whose REST and gRPC ports both answer, or StoreUnavailableError."""
    api_key = settings.api_key.get_secret_value() if settings.api_key else None
    try:
        params = ConnectionParams.from_params(
            http_host=settings.host,
            http_port=settings.http_port,
            http_secure=settings.secure,
            grpc_host=settings.grpc_host or settings.host,
            grpc_port=settings.grpc_port,
            grpc_secure=settings.secure,
        )
    except ValueError as exc:
        raise ValueError(
            f"invalid Weaviate connection settings ({settings.describe()}): {reason(exc)}"
        ) from None
    client = weaviate.WeaviateClient(
        connection_params=params,
        auth_client_secret=Auth.api_key(api_key) if api_key else None,
        additional_config=AdditionalConfig(
            timeout=Timeout(
                query=settings.query_timeout,
                insert=settings.insert_timeout,
                init=settings.init_timeout,
            )
        ),
        # The client's own init checks ask the package index for the latest version; sift
        # never touches the network beyond the store, so it runs its own checks below.
        skip_init_checks=True,
    )

    def give_up() -> None:
        release_quietly(settings.describe(), [("closing the client", client.close)])

    try:
        client.connect()
    except UnexpectedStatusCodeError as exc:
        give_up()
        if exc.status_code in (401, 403):
            raise StoreUnavailableError(
                f"{settings.describe()} refused the connection (HTTP {exc.status_code}): "
                + CHECK_API_KEY
            ) from exc
        raise StoreUnavailableError(
            f"cannot connect to {settings.describe()}: {reason(exc)}"
        ) from exc
    except WeaviateBaseError as exc:
        give_up()
        raise StoreUnavailableError(
            f"cannot connect to {settings.describe()}: the server is unreachable "
            f"({reason(exc)}); " + START_WEAVIATE
        ) from exc
    if not grpc_serving(settings):
        give_up()
        raise StoreUnavailableError(
            f"cannot connect to {settings.describe()}: REST answers but gRPC at "
            f"{settings.grpc_address} does not; check the gRPC port (?grpc=PORT in the URL)"
        )
    return client


def grpc_serving(settings: WeaviateSettings) -> bool:
    """The gRPC health check the client would run, without its package-index version check."""
    import grpc
    from weaviate.proto.v1 import health_weaviate_pb2

    address = settings.grpc_address
    channel = (
        grpc.secure_channel(address, grpc.ssl_channel_credentials())
        if settings.secure
        else grpc.insecure_channel(address)
    )
    try:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health_weaviate_pb2.WeaviateHealthCheckRequest.SerializeToString,
            response_deserializer=health_weaviate_pb2.WeaviateHealthCheckResponse.FromString,
        )
        reply = check(
            health_weaviate_pb2.WeaviateHealthCheckRequest(), timeout=settings.init_timeout
        )
        return bool(reply.status == health_weaviate_pb2.WeaviateHealthCheckResponse.SERVING)
    except grpc.RpcError:
        return False
    finally:
        channel.close()


def server_version(client: weaviate.WeaviateClient, settings: WeaviateSettings) -> str:
    try:
        return str(client.get_meta().get("version", ""))
    except WeaviateBaseError as exc:
        raise StoreUnavailableError(
            f"cannot read the version of {settings.describe()}: {reason(exc)}"
        ) from exc


def version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)
