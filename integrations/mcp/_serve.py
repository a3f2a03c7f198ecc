"""Running the server: stdio (what desktop clients launch) or streamable HTTP on uvicorn."""

from __future__ import annotations

import contextvars
import socket
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from sift.integrations.guards import BearerGuard, HostGuard, is_loopback

__all__ = ["Transport", "serve"]

Transport = Literal["stdio", "streamable-http"]


async def serve(
    server: MCPServer[Any],
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    log_level: str = "warning",
    on_ready: Callable[[str], None] | None = None,
    key: str | None = None,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serves until the client closes stdin (stdio) or the process is interrupted.

    With streamable HTTP, `on_ready` gets the endpoint's URL once the socket listens
    (port 0 picks a free port). On every bind address a request whose Host or Origin
    a DNS-rebinding or cross-site page would send is refused (`sift.integrations.guards`;
    `allowed_hosts` adds real host names). With `key`, every request must carry
    `Authorization: Bearer <key>`; a non-loopback `host` refuses to start without one.
    """
    if transport == "stdio":
        if on_ready is not None:
            on_ready("stdio")
        await _run_stdio(server)
        return
    if transport != "streamable-http":
        raise ValueError(f"unknown transport {transport!r}: use stdio or streamable-http")
    import uvicorn

    if key is None and not is_loopback(host):
        raise ValueError(
            f"serving MCP on {host}, beyond this machine, needs a key: pass --key or set "
            "SIFT_MCP_KEY, and give clients 'Authorization: Bearer <key>'"
        )
    # The SDK's own check covers only 127.0.0.1, localhost and ::1 exactly; ours every
    # address. The SDK still checks the Content-Type of POSTs.
    app: Any = server.streamable_http_app(
        streamable_http_path=path,
        host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app = HostGuard(app, allowed_hosts)
    if key is not None:
        app = BearerGuard(app, key)

    class _Announcing(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and on_ready is not None:
                bound = self.servers[0].sockets[0].getsockname()
                shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
                on_ready(f"http://{shown}:{bound[1]}{path}")

    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False)
    http = _Announcing(config)
    try:
        await http.serve()
    except anyio.get_cancelled_exc_class():
        # Cancelled from outside (an embedding application's task group): close the
        # socket and the MCP sessions before going, as Ctrl-C would.
        with anyio.CancelScope(shield=True):
            http.should_exit = True
            if http.started:
                await http.shutdown()
        raise


# Error kinds of pydantic's JSON parsing: the line is not JSON text (or not UTF-8), as
# opposed to JSON that is not a JSON-RPC message.
_UNDECODABLE = frozenset({"json_invalid", "json_type", "string_unicode"})


def _error_reply(error: Exception) -> SessionMessage:
    """The JSON-RPC answer to a line the SDK could not decode: -32700 for a line that is
    not JSON (bad syntax, a lone surrogate, a number beyond the parser's range, nesting
    beyond its depth), -32600 for JSON that is not a JSON-RPC message. The id is null:
    an undecodable line has none that can be trusted."""
    code, message = types.PARSE_ERROR, "Parse error"
    if isinstance(error, ValidationError):
        first = error.errors(include_url=False, include_input=False)[:1]
        if first and first[0]["type"] not in _UNDECODABLE:
            code, message = types.INVALID_REQUEST, "Invalid request: not a JSON-RPC message"
        elif first:
            # Short (where and what), never the line itself, which may be megabytes.
            message = f"Parse error: {first[0]['msg']}"
    return SessionMessage(
        types.JSONRPCError(
            jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
        )
    )


class _AnsweringUndecodable:
    """The stdio read stream, answering each line the SDK could not decode.

    The SDK's stdio reader puts the decoding exception in the stream and its dispatcher
    only logs it at debug level, so the client waits forever for an answer; the HTTP
    transport answers -32700. This wrapper writes that answer and reads on.
    """

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        replies: WriteStream[SessionMessage],
    ) -> None:
        self._inner = inner
        self._replies = replies

    @property
    def last_context(self) -> contextvars.Context | None:
        # The dispatcher runs handlers in the sender's context when the stream has one.
        context: contextvars.Context | None = getattr(self._inner, "last_context", None)
        return context

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._replies.send(_error_reply(item))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _AnsweringUndecodable:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _AnsweringUndecodable:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def _run_stdio(server: MCPServer[Any]) -> None:
    """`MCPServer.run_stdio_async`, with undecodable lines answered."""
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(
            _AnsweringUndecodable(read_stream, write_stream),
            write_stream,
            lowlevel.create_initialization_options(),
        )
