"""Error bodies of the HTTP service.

Every error is JSON with Dify's field names, `{"error_code": int, "error_msg": str}`, on
every endpoint, so one client-side parser serves Dify, n8n and the native API. Codes 1001,
1002 and 2001 are Dify's documented ones; the others are sift's own and stable.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

__all__ = [
    "AUTH_FAILED",
    "BAD_AUTH_HEADER",
    "BODY_TOO_LARGE",
    "DOCUMENT_NOT_FOUND",
    "ERROR_RESPONSES",
    "INTERNAL",
    "INVALID_REQUEST",
    "OVERLOADED",
    "UNAVAILABLE",
    "UNKNOWN_COLLECTION",
    "ApiError",
    "ErrorBody",
    "install_handlers",
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
BODY_TOO_LARGE = 4130
OVERLOADED = 4290
INTERNAL = 5000
UNAVAILABLE = 5030


class ErrorBody(BaseModel):
    """What every non-2xx answer carries."""

    error_code: int
    error_msg: str
    details: list[dict[str, Any]] | None = None


# The error answers every authenticated endpoint documents in the OpenAPI document.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    403: {
        "model": ErrorBody,
        "description": "1001: missing or malformed Authorization "
        "header; 1002: wrong key, or the key may not use this collection.",
    },
    404: {
        "model": ErrorBody,
        "description": "2001: unknown collection (knowledge base); 4004: unknown document.",
    },
    413: {"model": ErrorBody, "description": "4130: request body too large."},
    422: {"model": ErrorBody, "description": "4000: invalid request; `details` names the fields."},
    429: {
        "model": ErrorBody,
        "description": "4290: too many concurrent requests; see Retry-After.",
    },
}


class ApiError(Exception):
    """An error with its HTTP status, stable code and a message that says how to fix it."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        details: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.details = details

    def response(self) -> JSONResponse:
        body = ErrorBody(error_code=self.code, error_msg=self.message, details=self.details)
        return JSONResponse(
            body.model_dump(exclude_none=True), status_code=self.status, headers=self.headers
        )


def error_response(
    status: int, code: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return ApiError(status, code, message, headers=headers).response()


def _where(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    details = []
    for err in exc.errors():
        details.append({"field": _where(tuple(err.get("loc", ()))), "problem": err.get("msg", "")})
    return details


def install_handlers(app: Any) -> None:
    """Routes every failure through `ErrorBody`, including FastAPI's own 404/405/422."""

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = _validation_details(exc)
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
        headers = dict(exc.headers) if exc.headers else None
        return ApiError(exc.status_code, code, message, headers=headers).response()

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        return ApiError(
            500, INTERNAL, f"internal error ({type(exc).__name__}); see the server log"
        ).response()
