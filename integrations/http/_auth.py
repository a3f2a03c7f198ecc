"""Bearer-key checks with Dify's error codes; keys are compared in constant time."""

from __future__ import annotations

import hmac
from collections.abc import Sequence

from sift.integrations.http._errors import AUTH_FAILED, BAD_AUTH_HEADER, ApiError
from sift.integrations.http._settings import ApiKey

__all__ = ["Authenticator"]

_BAD_HEADER = (
    "missing or malformed Authorization header; expected 'Authorization: Bearer <api-key>'"
)


class Authenticator:
    def __init__(self, keys: Sequence[ApiKey], *, anonymous: bool = False) -> None:
        self._keys = [(k, k.key.get_secret_value().encode("utf-8")) for k in keys]
        self._anonymous = anonymous

    @property
    def anonymous(self) -> bool:
        return self._anonymous and not self._keys

    def identify(self, header: str | None) -> ApiKey | None:
        """The key of an `Authorization` header value; None when anonymous access is on."""
        if self.anonymous:
            # No key exists to check a header against: any caller, with or without one.
            return None
        if header is None:
            # No credentials at all is HTTP's 401; Dify always sends a header, and gets
            # its documented 403s for a malformed one or a wrong key.
            raise ApiError(
                401, BAD_AUTH_HEADER, _BAD_HEADER, headers={"WWW-Authenticate": "Bearer"}
            )
        scheme, _, token = (header or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or " " in token:
            raise ApiError(403, BAD_AUTH_HEADER, _BAD_HEADER)
        presented = token.encode("utf-8")
        found: ApiKey | None = None
        # Every key is compared, so the time taken does not tell which prefix matched.
        for key, secret in self._keys:
            if hmac.compare_digest(presented, secret) and found is None:
                found = key
        if found is None:
            raise ApiError(403, AUTH_FAILED, "authorization failed: the API key is not valid")
        return found

    @staticmethod
    def check_collection(key: ApiKey | None, collection: str) -> None:
        if key is not None and not key.allows(collection):
            raise ApiError(
                403,
                AUTH_FAILED,
                f"authorization failed: this API key may not use collection {collection!r}",
            )
