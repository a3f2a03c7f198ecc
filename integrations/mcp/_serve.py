"""Running the server: stdio (what desktop clients launch) or streamable HTTP on uvicorn."""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

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
        await server.run_stdio_async()
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
