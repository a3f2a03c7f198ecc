"""What sift's local servers (`sift serve` without keys, `sift mcp` over HTTP) accept
before a request reaches them: the Host and Origin a browser sends, and a bearer key.

DNS rebinding: a web page on a name its owner controls (`evil.example`) re-points that
name at 127.0.0.1 and then calls a server there from the user's own browser; the
request carries `Host: evil.example`. A page that calls 127.0.0.1 directly carries
`Origin: http://evil.example`. Neither may reach a server that needs no key, whatever
address it is bound to (the MCP SDK checked only when bound to exactly 127.0.0.1,
localhost or ::1). So a request is refused unless its Host is a loopback name, an IP
address (a rebinding page cannot send one) or a name on the allow-list, and its Origin,
when it has one, names a loopback host, the Host itself or an allowed name.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["BearerGuard", "HostGuard", "is_loopback"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})

Scope = dict[str, Any]


def is_loopback(host: str) -> bool:
    """Whether a bind address or host name is this machine only (127.0.0.0/8, ::1,
    localhost); `0.0.0.0`, `::` and LAN addresses are not."""
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _hostname(authority: str) -> str:
    """`example.org` of `example.org:8000`, `::1` of `[::1]:8000`."""
    text = authority.strip().lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text[1:]
    if text.count(":") == 1:
        return text.split(":", 1)[0]
    return text


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


async def _refuse(send: Callable, status: int, code: int, message: str) -> None:
    body = json.dumps({"error_code": code, "error_msg": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


class HostGuard:
    """Pure ASGI middleware refusing requests whose Host (421) or Origin (403) a
    rebinding or cross-site page would send. `allowed`: real host names clients use
    (a reverse proxy's, the machine's), exactly or as `*.example.org`."""

    def __init__(self, app: Any, allowed: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = tuple(a.strip().lower() for a in allowed if a.strip())

    def _named(self, name: str) -> bool:
        for allowed in self.allowed:
            if name == allowed or (
                allowed.startswith("*.") and name.endswith(allowed[1:]) and name != allowed[2:]
            ):
                return True
        return False

    def host_problem(self, host: str | None) -> str | None:
        if not host:
            return "the request has no Host header"
        name = _hostname(host)
        if is_loopback(name) or _is_ip(name) or self._named(name):
            return None
        return (
            f"Host {host[:100]!r} is not a name this server answers to; a server without "
            "keys answers loopback names and IP addresses only (allow a real host name "
            "with --allow-host)"
        )

    def origin_problem(self, origin: str | None, host: str) -> str | None:
        if origin is None:
            return None  # not a browser, or a same-origin GET
        parts = urlsplit(origin)
        name = (parts.hostname or "").lower()
        if name and (is_loopback(name) or name == _hostname(host) or self._named(name)):
            return None
        return (
            f"Origin {origin[:100]!r} is another site: a web page may not call this server "
            "(allow its host name with --allow-host)"
        )

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        problem = self.host_problem(host)
        if problem:
            await _refuse(send, 421, 4210, problem)
            return
        problem = self.origin_problem(_header(scope, b"origin"), host or "")
        if problem:
            await _refuse(send, 403, 4030, problem)
            return
        await self.app(scope, receive, send)


class BearerGuard:
    """Pure ASGI middleware admitting only requests with `Authorization: Bearer <key>`
    (compared in constant time); every other answer is 401."""

    def __init__(self, app: Any, key: str) -> None:
        if len(key) < 8 or any(c.isspace() for c in key):
            raise ValueError("a bearer key needs at least 8 characters and no whitespace")
        self.app = app
        self._key = key.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scheme, _, token = (_header(scope, b"authorization") or "").strip().partition(" ")
        presented = token.strip().encode("utf-8", "replace")
        if scheme.lower() != "bearer" or not hmac.compare_digest(presented, self._key):
            await _refuse(
                send,
                401,
                1001,
                "missing or wrong key: send 'Authorization: Bearer <key>' with the key "
                "the server was started with (--key or SIFT_MCP_KEY)",
            )
            return
        await self.app(scope, receive, send)
