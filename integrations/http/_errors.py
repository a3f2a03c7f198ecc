"""Error bodies of the HTTP service.

Every error is JSON with Dify's field names, `{"error_code": int, "error_msg": str}`, on
every endpoint, so one client-side parser serves Dify, n8n and the native API. Codes 1001,
1002 and 2001 are Dify's documented ones; the others are sift's own and stable.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from sift.errors import (
    CorpusError,
    IncompatibleStoreError,
    NotAStoreError,
    StoreDamagedError,
    StoreFullError,
    StoreLockedError,
)

log = logging.getLogger("sift.http")

__all__ = [
    "AUTH_FAILED",
    "BAD_AUTH_HEADER",
    "BODY_TIMEOUT",
    "BODY_TOO_LARGE",
    "COMMON_RESPONSES",
    "DEADLINE_EXCEEDED",
    "DOCUMENT_NOT_FOUND",
    "ERROR_RESPONSES",
    "INTERNAL",
    "INVALID_REQUEST",
    "NOT_READY",
    "OVERLOADED",
    "SERVICE_RESPONSES",
    "STORAGE_FULL",
    "STORE_LOCKED",
    "UNAVAILABLE",
    "UNKNOWN_COLLECTION",
    "ApiError",
    "ErrorBody",
    "install_handlers",
    "locked",
    "no_space",
    "store_error",
    "validation_details",
]

# Dify's documented codes.
BAD_AUTH_HEADER = 1001
AUTH_FAILED = 1002
UNKNOWN_COLLECTION = 2001
# sift's own.
INVALID_REQUEST = 4000
DOCUMENT_NOT_FOUND = 4004
NOT_FOUND = 4040
METHOD_NOT_ALLOWED = 4050
BODY_TIMEOUT = 4080
BODY_TOO_LARGE = 4130
STORE_LOCKED = 4090
OVERLOADED = 4290
INTERNAL = 5000
UNAVAILABLE = 5030
NOT_READY = 5031
DEADLINE_EXCEEDED = 5040
STORAGE_FULL = 5070


class ErrorBody(BaseModel):
    """What every non-2xx answer carries."""

    error_code: int
    error_msg: str
    details: list[dict[str, Any]] | None = None


_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer"},
    }
}

# The answers any request may get before it reaches its endpoint (the body guard, the
# router's own 404/405): every operation documents them.
COMMON_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "4000: the body is not JSON in UTF-8."},
    404: {"model": ErrorBody, "description": "4040: no such endpoint."},
    405: {"model": ErrorBody, "description": "4050: method not allowed."},
    408: {
        "model": ErrorBody,
        "description": "4080: the request body did not arrive in time (a Content-Length "
        "larger than the body, or a trickle).",
    },
    413: {"model": ErrorBody, "description": "4130: request body too large."},
    500: {"model": ErrorBody, "description": "5000: internal error (a bug: see the server log)."},
}

# The error answers every authenticated endpoint documents in the OpenAPI document.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    **COMMON_RESPONSES,
    401: {
        "model": ErrorBody,
        "headers": {"WWW-Authenticate": {"schema": {"type": "string"}}},
        "description": "1001: no Authorization header at all.",
    },
    403: {
        "model": ErrorBody,
        "description": "1001: malformed Authorization header (Dify's code); 1002: wrong "
        "key, or the key may not use this collection.",
    },
    404: {
        "model": ErrorBody,
        "description": "2001: unknown collection (knowledge base); 4004: unknown document; "
        "4040: no such endpoint.",
    },
    422: {"model": ErrorBody, "description": "4000: invalid request; `details` names the fields."},
}

# What endpoints that do work (search, ingest, delete) add: admission and availability.
SERVICE_RESPONSES: dict[int | str, dict[str, Any]] = {
    **ERROR_RESPONSES,
    409: {
        "model": ErrorBody,
        "headers": _RETRY_AFTER,
        "description": "4090: another process (a `sift index`, another server) is writing "
        "to the collection's store; nothing of this request was stored. See Retry-After.",
    },
    429: {
        "model": ErrorBody,
        "headers": _RETRY_AFTER,
        "description": "4290: too busy; no working slot came free within the queue wait. "
        "See Retry-After.",
    },
    503: {
        "model": ErrorBody,
        "headers": _RETRY_AFTER,
        "description": "5030: the model server is unavailable, or the collection's store "
        "failed (it is opened afresh by the next request); 5031: the service is still "
        "warming up, or the collection is still opening; 5040: not even the single-shot "
        "fallback finished within the deadline (a stalled store).",
    },
    507: {
        "model": ErrorBody,
        "description": "5070: the store's disk is full; nothing of the failed write is stored.",
    },
}


def _api_error(
    status: int,
    code: int,
    message: str,
    headers: Mapping[str, str],
    details: list[dict[str, Any]] | None,
) -> ApiError:
    return ApiError(status, code, message, headers=headers, details=details)


class ApiError(Exception):
    """An error with its HTTP status, stable code and a message that says how to fix it."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        details: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})
        self.details = details

    def __reduce__(self) -> tuple[Any, ...]:
        # Crosses from a search process to the service (pickle): keyword arguments too.
        return (_api_error, (self.status, self.code, self.message, self.headers, self.details))

    def response(self) -> JSONResponse:
        body = ErrorBody(error_code=self.code, error_msg=self.message, details=self.details)
        return JSONResponse(
            body.model_dump(exclude_none=True), status_code=self.status, headers=self.headers
        )


def _where(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


def validation_details(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """pydantic's errors as `{"field", "problem"}` entries."""
    details = []
    for err in errors:
        details.append({"field": _where(tuple(err.get("loc", ()))), "problem": err.get("msg", "")})
    return details


_NO_SPACE = ("No space left on device", "os error 28", "database or disk is full", "StorageFull")


def no_space(exc: BaseException) -> bool:
    """Whether a failure is a full disk (the store's StoreFullError, or the OS's,
    SQLite's or tantivy's words for it)."""
    if isinstance(exc, StoreFullError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    return any(marker in str(exc) for marker in _NO_SPACE)


def locked(exc: BaseException) -> bool:
    """Whether a failure is another process holding the store's write lock."""
    if isinstance(exc, StoreLockedError):
        return True
    return isinstance(exc, sqlite3.OperationalError) and "database is locked" in str(exc)


def store_error(exc: BaseException, retry_after_s: int) -> ApiError | None:
    """The answer to a store failure: 507 for a full disk, 409 for another writer's
    lock, 404/2001 for a path that holds no store, 503 for the rest (the store is
    opened afresh by the next request); None for a failure that is not the store's."""
    retry = {"Retry-After": str(retry_after_s)}
    if no_space(exc):
        return ApiError(507, STORAGE_FULL, f"the store's disk is full: {exc}")
    if locked(exc):
        return ApiError(
            409,
            STORE_LOCKED,
            f"another process is writing to this collection's store: {exc}; nothing of "
            "this request was stored; retry when it is done",
            headers=retry,
        )
    if isinstance(exc, NotAStoreError | IncompatibleStoreError):
        return ApiError(404, UNKNOWN_COLLECTION, f"the collection cannot be opened: {exc}")
    if isinstance(exc, StoreDamagedError):
        # No Retry-After: retrying does not mend a damaged file; its operator must.
        return ApiError(503, UNAVAILABLE, f"the collection's store is damaged: {exc}")
    if isinstance(exc, CorpusError | OSError | sqlite3.Error):
        return ApiError(
            503,
            UNAVAILABLE,
            f"the collection's store failed ({exc}); it is opened afresh by the next "
            "request: retry",
            headers=retry,
        )
    return None


def install_handlers(app: Any) -> None:
    """Routes every failure through `ErrorBody`, including FastAPI's own 404/405/422."""

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = validation_details(exc.errors())
        summary = "; ".join(f"{d['field']}: {d['problem']}" for d in details[:5])
        return ApiError(
            422, INVALID_REQUEST, f"invalid request: {summary}", details=details
        ).response()

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: NOT_FOUND, 405: METHOD_NOT_ALLOWED}.get(exc.status_code, INVALID_REQUEST)
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if exc.status_code == 404 and message == "Not Found":
            message = "no such endpoint; see /openapi.json for the API"
        elif exc.status_code == 400 and "parsing the body" in message:
            message = "the request body is not JSON in UTF-8"
        return ApiError(
            exc.status_code, code, message, headers=dict(exc.headers) if exc.headers else None
        ).response()

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error answering %s %s", request.method, request.url.path, exc_info=exc)
        return ApiError(
            500, INTERNAL, f"internal error ({type(exc).__name__}); see the server log"
        ).response()
