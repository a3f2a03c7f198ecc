"""Weaviate's failures as sift errors: every error leaving the Weaviate store is a sift
error that names the server and the collection, and says what to do about it."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from weaviate.exceptions import (
    UnexpectedStatusCodeError,
    WeaviateBaseError,
    WeaviateConnectionError,
    WeaviateQueryError,
    WeaviateStartUpError,
)

from sift.errors import CorpusError, StoreUnavailableError

__all__ = ["MissingTenantError", "empty_for_new_tenant", "reason", "translated"]

F = TypeVar("F", bound=Callable[..., Any])

START_WEAVIATE = (
    "check the host and ports, or start Weaviate (examples/weaviate/docker-compose.yml)"
)
CHECK_API_KEY = "check the API key (api_key_env=... in the URL or SIFT_WEAVIATE_API_KEY)"


class MissingTenantError(StoreUnavailableError):
    """The tenant has no shard yet: readers see an empty corpus, writers create it."""


def reason(exc: BaseException) -> str:
    """The client's message on one line, bounded."""
    text = getattr(exc, "message", None) or str(exc)
    return " ".join(str(text).split())[:500]


def empty_for_new_tenant(empty: Callable[[], Any]) -> Callable[[F], F]:
    """Reading a tenant nothing was written to yet answers like an empty corpus."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def inner(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except MissingTenantError:
                return empty()

        return inner  # type: ignore[return-value]

    return wrap


@contextlib.contextmanager
def translated(where: str, action: str) -> Iterator[None]:
    """Turns the client's errors raised inside the block into sift errors; `where`
    describes the store, `action` what was being done ("search", "read")."""
    try:
        yield
    except (WeaviateConnectionError, WeaviateStartUpError) as exc:
        raise StoreUnavailableError(
            f"cannot {action} {where}: the server is unreachable ({reason(exc)}); " + START_WEAVIATE
        ) from exc
    except UnexpectedStatusCodeError as exc:
        if exc.status_code in (401, 403):
            raise StoreUnavailableError(
                f"{where} refused the request to {action} it (HTTP {exc.status_code}): "
                + CHECK_API_KEY
            ) from exc
        raise CorpusError(f"cannot {action} {where}: {reason(exc)}") from exc
    except WeaviateQueryError as exc:
        why = reason(exc)
        lowered = why.lower()
        if "deadline" in lowered or "timed out" in lowered or "timeout" in lowered:
            raise StoreUnavailableError(
                f"{where} did not answer in time to {action} it ({why}); "
                "raise query_timeout/insert_timeout or check the server's load"
            ) from exc
        if "unavailable" in lowered or "connection refused" in lowered:
            raise StoreUnavailableError(
                f"cannot {action} {where}: gRPC is unreachable ({why})"
            ) from exc
        if "tenant" in lowered and ("not found" in lowered or "not exist" in lowered):
            raise MissingTenantError(
                f"cannot {action} {where}: the tenant does not exist ({why}); "
                "index documents into it first"
            ) from exc
        raise CorpusError(f"cannot {action} {where}: {why}") from exc
    except WeaviateBaseError as exc:
        raise CorpusError(f"cannot {action} {where}: {reason(exc)}") from exc
