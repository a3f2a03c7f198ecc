"""The plugin's client of sift's HTTP API (the native `/v1` endpoints): one place for the
key, the retries the server asks for, and error messages that say what was wrong."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

# sift's error codes (integrations/http/_errors.py): Dify's 1001/1002/2001, then its own.
_AUTH = {1001, 1002}
_UNKNOWN_COLLECTION = 2001
_DOCUMENT_NOT_FOUND = 4004
_NOT_READY = 5031
_DEADLINE_EXCEEDED = 5040
_ATTEMPTS = 4
_MAX_WAIT_S = 30.0
# Added to a search's deadline for the call itself: sift answers by deadline + grace.
_CALL_MARGIN_S = 15.0


class SiftApiError(Exception):
    """A call to sift failed; the message says what was wrong and what to do."""


def _message(answer: httpx.Response, subject: str, attempts: int) -> str:
    try:
        body = answer.json()
    except ValueError:
        body = {}
    code = body.get("error_code") if isinstance(body, dict) else None
    said = body.get("error_msg") if isinstance(body, dict) else None
    said = said or answer.text[:300]
    status = answer.status_code
    if status == 401 or code in _AUTH:
        if "may not use" in said:
            return f"This API key may not use {subject}: {said}"
        return (
            "sift refused the API key: check the API key of the sift tool's credentials "
            f"(one of the server's SIFT_SERVER_API_KEYS). sift said: {said}"
        )
    if code == _UNKNOWN_COLLECTION:
        return f"Unknown collection: {subject}. sift said: {said}"
    if code == _DOCUMENT_NOT_FOUND:
        return f"No such document: {subject}. sift said: {said}"
    if code == _NOT_READY:
        return f"sift is still warming up after {attempts} attempt(s); retry shortly. {said}"
    if code == _DEADLINE_EXCEEDED:
        return f"The search did not finish within its deadline: {said}"
    if status == 429:
        return f"sift is busy after {attempts} attempt(s): {said}"
    if status in (400, 422):
        return f"sift refused the request: {said}"
    return f"sift answered {status}: {said}"


def _retry_after(answer: httpx.Response) -> float:
    try:
        seconds = float(answer.headers.get("retry-after", "2"))
    except ValueError:
        seconds = 2.0
    return min(max(seconds, 0.0), _MAX_WAIT_S)


@dataclass(frozen=True)
class SiftClient:
    base_url: str
    api_key: str
    retry: bool = True

    @classmethod
    def of(cls, credentials: Mapping[str, Any], *, retry: bool = True) -> SiftClient:
        base_url = str(credentials.get("base_url") or "").strip().rstrip("/")
        api_key = str(credentials.get("api_key") or "").strip()
        if not base_url.startswith(("http://", "https://")):
            raise SiftApiError(f"the base URL must start with http:// or https://: {base_url!r}")
        if not api_key:
            raise SiftApiError("the API key is empty")
        return cls(base_url, api_key, retry)

    def _call(
        self,
        method: str,
        path: str,
        *,
        subject: str,
        timeout_s: float = 60.0,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.api_key}"}
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                answer = httpx.request(
                    method,
                    f"{self.base_url}{path}",
                    json=body,
                    params=params,
                    headers=headers,
                    timeout=timeout_s,
                )
            except httpx.HTTPError as exc:
                raise SiftApiError(
                    f"could not reach sift at {self.base_url}: {exc}. Check the base URL "
                    "(as the plugin daemon reaches it) and that `sift serve` runs there."
                ) from None
            if answer.status_code < 300:
                data = answer.json()
                return data if isinstance(data, dict) else {"data": data}
            code = _code(answer)
            busy = answer.status_code in (429, 503) and code != _DEADLINE_EXCEEDED
            if self.retry and busy and attempt < _ATTEMPTS:
                time.sleep(_retry_after(answer))
                continue
            raise SiftApiError(_message(answer, subject, attempt))
        raise AssertionError("unreachable")  # the loop returns or raises

    def collections(self) -> list[str]:
        data = self._call("GET", "/v1/collections", subject="the collections")
        return list(data.get("collections", []))

    def search(
        self,
        collection: str,
        question: str,
        *,
        top_k: int,
        filters: dict[str, Any] | None,
        mode: str = "agentic",
        deadline_s: float = 60.0,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "collection": collection,
            "question": question,
            "top_k": top_k,
            "mode": mode,
            "deadline_s": deadline_s,
        }
        if filters:
            body["filters"] = filters
        return self._call(
            "POST",
            "/v1/search",
            subject=f"collection {collection!r}",
            body=body,
            timeout_s=deadline_s + _CALL_MARGIN_S,
        )

    def read_document(self, collection: str, doc_id: str, *, limit: int) -> dict[str, Any]:
        path = f"/v1/collections/{quote(collection, safe='')}/documents/{quote(doc_id)}"
        return self._call(
            "GET",
            path,
            subject=f"document {doc_id!r} in collection {collection!r}",
            params={"limit": limit},
        )


def _code(answer: httpx.Response) -> int | None:
    try:
        body = answer.json()
    except ValueError:
        return None
    code = body.get("error_code") if isinstance(body, dict) else None
    return code if isinstance(code, int) else None


def parse_filters(raw: object) -> dict[str, Any] | None:
    """The filters parameter: empty, a JSON object as text, or an object already."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    value = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(value, dict):
        raise SiftApiError(
            'filters must be a JSON object, e.g. {"lang": "en", "format": "markdown"}'
        )
    return value or None


def _page(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def location(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A passage's first page, [first, last] page and section, from its stored metadata."""
    raw = metadata.get("pages")
    candidates = [metadata.get("page"), *(raw if isinstance(raw, list) else [])]
    pages = [p for p in map(_page, candidates) if p is not None]
    section = metadata.get("section")
    return {
        "page": min(pages) if pages else None,
        "pages": [min(pages), max(pages)] if pages else [],
        "section": section if isinstance(section, str) else None,
    }


def place_label(record: Mapping[str, Any]) -> str:
    """`p. 3 · § Results > Revenue`, or empty where neither is known."""
    parts = []
    pages = record.get("pages") or []
    if pages:
        first, last = pages[0], pages[-1]
        parts.append(f"p. {first}" if first == last else f"pp. {first}-{last}")
    if record.get("section"):
        parts.append(f"§ {record['section']}")
    return " · ".join(parts)
