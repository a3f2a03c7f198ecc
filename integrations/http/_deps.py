"""The per-app service object and the dependencies routes share."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from sift.integrations.http._auth import Authenticator
from sift.integrations.http._collections import Collections
from sift.integrations.http._limits import ConcurrencyLimiter
from sift.integrations.http._metrics import Metrics
from sift.integrations.http._settings import ApiKey, ServerSettings

__all__ = ["Service", "authorized_key", "service"]

# Declared for the OpenAPI document only; the header is checked by `authorized_key`, which
# needs the raw value to tell Dify's 1001 (malformed) from 1002 (wrong key).
_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <api-key>")


class Service:
    def __init__(self, settings: ServerSettings, auth: Authenticator) -> None:
        self.settings = settings
        self.auth = auth
        self.collections = Collections(settings)
        self.limiter = ConcurrencyLimiter(settings.max_concurrency, settings.retry_after_s)
        self.metrics = Metrics()


def service(request: Request) -> Service:
    return request.app.state.sift


def authorized_key(
    request: Request,
    _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> ApiKey | None:
    return service(request).auth.identify(request.headers.get("authorization"))
