"""`sift mcp`: sift as an MCP server (stdio by default, or streamable HTTP)."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Literal

import typer
from pydantic import ValidationError

from sift import open_store
from sift.config import HarnessConfig
from sift.integrations.cli._options import (
    MaxTurnsOption,
    ModelOption,
    OllamaHostOption,
    PolicyOption,
    SeedOption,
    StoreOption,
    ThinkOption,
)
from sift.protocols import Policy

__all__ = ["register"]

TransportName = Literal["stdio", "streamable-http"]


def _policy(
    name: str, *, model: str | None, host: str | None, think: str | None, seed: int | None
) -> Policy | None:
    if name == "heuristic":
        return None  # the harness's default: the no-model planner
    if name != "ollama":
        raise typer.BadParameter(f"--policy {name!r}: valid policies are heuristic, ollama")
    from sift.integrations.ollama import policy_from_settings

    given: dict[str, Any] = {"model": model, "host": host, "think": think, "seed": seed}
    return policy_from_settings(**{k: v for k, v in given.items() if v is not None})


def _check_exposure(host: str, key: str | None) -> None:
    """Refuses a non-loopback address without a key; warns on loopback without one."""
    from sift.integrations.guards import is_loopback

    if key is not None:
        return
    if not is_loopback(host):
        raise typer.BadParameter(
            f"--host {host} serves MCP beyond this machine: it needs a key (--key or "
            "SIFT_MCP_KEY), which clients send as 'Authorization: Bearer <key>'"
        )
    print(
        "sift: warning: the MCP server has no key: any program on this machine can use "
        "it (set --key or SIFT_MCP_KEY)",
        file=sys.stderr,
        flush=True,
    )


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp(
        store: StoreOption = None,
        transport: Annotated[
            str,
            typer.Option(help="stdio (what desktop clients launch) or streamable-http."),
        ] = "stdio",
        host: Annotated[
            str, typer.Option(help="Interface of streamable HTTP (loopback by default).")
        ] = "127.0.0.1",
        port: Annotated[
            int, typer.Option(min=0, max=65535, help="Port of streamable HTTP (0: any free).")
        ] = 8000,
        path: Annotated[str, typer.Option(help="Endpoint path of streamable HTTP.")] = "/mcp",
        top_k: Annotated[
            int,
            typer.Option(
                "--top-k", min=1, max=200, help="Passages per search when a call gives none."
            ),
        ] = 10,
        max_turns: MaxTurnsOption = None,
        policy: PolicyOption = "heuristic",
        model: ModelOption = None,
        ollama_host: OllamaHostOption = None,
        think: ThinkOption = None,
        seed: SeedOption = None,
        log_level: Annotated[
            str, typer.Option(help="Server log level (logs go to stderr).")
        ] = "warning",
        key: Annotated[
            str | None,
            typer.Option(
                "--key",
                envvar="SIFT_MCP_KEY",
                help="Bearer key every streamable HTTP request must carry (Authorization: "
                "Bearer <key>); required on a non-loopback --host (env SIFT_MCP_KEY).",
                show_default=False,
            ),
        ] = None,
        allow_host: Annotated[
            list[str] | None,
            typer.Option(
                "--allow-host",
                envvar="SIFT_MCP_ALLOWED_HOSTS",
                help="A host name clients reach the server by (besides loopback names and "
                "IP addresses), e.g. mcp.example.org or *.example.org; repeatable (env "
                "SIFT_MCP_ALLOWED_HOSTS, space-separated).",
            ),
        ] = None,
    ) -> None:
        """Serve the store over MCP: the tools search (one agentic episode), read_document
        and grep, and documents as sift://doc/{id}. For Claude Desktop, Claude Code, Cursor
        and any MCP client (see docs/subagent.md)."""
        level = log_level.upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise typer.BadParameter(
                f"--log-level {log_level!r}: valid levels are debug, info, warning, error, critical"
            )
        if transport not in ("stdio", "streamable-http"):
            raise typer.BadParameter(
                f"--transport {transport!r}: valid transports are stdio, streamable-http"
            )
        try:
            import anyio

            from sift.integrations.mcp import create_server, serve
        except ModuleNotFoundError as exc:  # the official SDK is the `mcp` extra
            raise typer.BadParameter(
                f"sift mcp needs the mcp extra ({exc.name} is missing): "
                "pip install 'sift-harness[mcp]'"
            ) from None
        try:
            config = HarnessConfig(max_turns=max_turns) if max_turns else HarnessConfig()
            chosen = _policy(policy, model=model, host=ollama_host, think=think, seed=seed)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in item['loc'])}: {item['msg']}" for item in exc.errors()
            )
            raise typer.BadParameter(problems) from None
        if key is not None and (len(key) < 8 or any(c.isspace() for c in key)):
            raise typer.BadParameter("--key needs at least 8 characters and no whitespace")
        if transport == "streamable-http":
            _check_exposure(host, key)
        # A path that holds no store is an error naming it, never a new empty store.
        corpus = open_store(store, create=False)

        def ready(where: str) -> None:
            if where != "stdio":
                print(f"sift: MCP server at {where}", file=sys.stderr, flush=True)

        try:
            server = create_server(
                corpus,
                chosen,
                config=config,
                top_k=top_k,
                log_level=level,  # type: ignore[arg-type]
            )
            anyio.run(
                lambda: serve(
                    server,
                    transport=transport,  # type: ignore[arg-type]
                    host=host,
                    port=port,
                    path=path,
                    log_level=level.lower(),
                    on_ready=ready,
                    key=key,
                    allowed_hosts=allow_host or (),
                )
            )
        except KeyboardInterrupt:
            pass
        finally:
            corpus.close()
