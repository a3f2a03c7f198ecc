"""`sift serve`: the HTTP service (Dify External Knowledge API, native API) on uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from sift.errors import ConfigurationError
from sift.paths import collections_path

__all__ = ["register", "settings_from_options"]


def settings_from_options(**options: Any) -> Any:
    """ServerSettings from the environment, overridden by the options that were given."""
    # Without the `server` extra this import fails; `main` says which extra to install.
    from sift.integrations.http import ServerSettings

    given = {k: v for k, v in options.items() if v is not None}
    return ServerSettings(**given)


def _check_store(root: str | None, collections_file: Path | None) -> None:
    """A store path (--store or SIFT_SERVER_STORE) where nothing is is an error naming
    it, before anything starts: a typo would otherwise serve no collection at all,
    without a word. With a collections file, its collections are what is served (each
    made by its first ingest), so the root may be yet to come; so may the default root
    named explicitly."""
    if not root or "://" in root or collections_file is not None:
        return  # the default root, or a weaviate:// URL (checked on first use)
    path = Path(root).expanduser()
    if not path.exists() and path != collections_path().expanduser():
        raise ConfigurationError(
            f"no sift store or collections folder at {path}: index one there (sift index "
            f"--store {path} FILES), or create the folder to serve the collections "
            "ingested through the API"
        )


def _collections_served(application: Any) -> list[str]:
    """The names the service answers for now (its `/v1/collections`)."""
    names: list[str] = application.state.sift.collections.names()
    return names


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        host: Annotated[
            str | None,
            typer.Option(help="Interface to bind (default 127.0.0.1; env SIFT_SERVER_HOST)."),
        ] = None,
        port: Annotated[
            int | None,
            typer.Option(min=0, max=65535, help="Port (default 8000; env SIFT_SERVER_PORT)."),
        ] = None,
        store: Annotated[
            str | None,
            typer.Option(
                "--store",
                help="One store (served as the collection named for its folder), or a "
                "collections root: a directory whose sub-stores ROOT/<name> are the "
                "collections, or a weaviate:// URL (default ~/.sift/collections, plus the "
                "store `sift index` writes as collection `store`; env SIFT_SERVER_STORE).",
            ),
        ] = None,
        keys_file: Annotated[
            Path | None,
            typer.Option(
                "--keys-file",
                help='API keys, JSON or TOML: {"keys": [{"key": ..., '
                '"collections": [...]}]} (or env SIFT_SERVER_API_KEYS="KEY=coll1,coll2;KEY2").',
            ),
        ] = None,
        collections_file: Annotated[
            Path | None,
            typer.Option(
                "--collections",
                help="Per-collection settings, JSON or TOML: mode "
                "(agentic|single_shot), deadline_s, top_k, location, tenant.",
            ),
        ] = None,
        embedder: Annotated[
            str | None,
            typer.Option(
                help="Embedder of collections created through the API (static, minilm, hash, "
                "ollama:<model>)."
            ),
        ] = None,
        max_concurrency: Annotated[
            int | None,
            typer.Option(
                "--max-concurrency",
                min=1,
                help="Searches/ingests at work at once; more wait in the queue "
                "(env SIFT_SERVER_MAX_CONCURRENCY).",
            ),
        ] = None,
        search_processes: Annotated[
            int | None,
            typer.Option(
                "--search-processes",
                min=0,
                help="Processes that run searches (default one per core, at most "
                "--max-concurrency; 0 on the server's threads; env "
                "SIFT_SERVER_SEARCH_PROCESSES).",
            ),
        ] = None,
        allow_anonymous: Annotated[
            bool,
            typer.Option(
                "--allow-anonymous", help="Accept requests without a key (local testing only)."
            ),
        ] = False,
        allow_host: Annotated[
            list[str] | None,
            typer.Option(
                "--allow-host",
                help="With --allow-anonymous: a host name clients reach the service by, "
                "besides loopback names and IP addresses; repeatable (env "
                "SIFT_SERVER_ALLOWED_HOSTS, space-separated).",
            ),
        ] = None,
        log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    ) -> None:
        """Serve collections over HTTP: POST /retrieval (Dify), /v1/search (with SSE
        progress), /v1/collections/... (ingest, delete, stats), /healthz, /metrics."""
        settings = settings_from_options(
            host=host,
            port=port,
            store=store,
            keys_file=keys_file,
            collections_file=collections_file,
            embedder=embedder,
            max_concurrency=max_concurrency,
            search_processes=search_processes,
            allow_anonymous=allow_anonymous or None,
            allowed_hosts=" ".join(allow_host) if allow_host else None,
        )
        import sys

        _check_store(settings.store, settings.collections_file)
        settings.check_port()

        import uvicorn

        # Ingests (and searches without search processes) run on worker threads; a shorter
        # GIL switch interval lets the event loop's thread in sooner, so /healthz and 429s
        # stay fast while they compute.
        sys.setswitchinterval(settings.switch_interval_s)

        from sift.integrations.http import create_app

        try:
            application = create_app(settings)
        except ValidationError as exc:
            if exc.title in ("HarnessConfig", "HeuristicPlannerConfig"):
                raise  # a bad SIFT_* setting: `main` names the variable, on one line
            raise typer.BadParameter(str(exc)) from None
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        served = _collections_served(application)
        single, extra = settings.single_store(), settings.cli_store()
        if single is not None:
            what = f"the store {single[1]} as collection {single[0]!r}"
        else:
            what = f"the collections of {settings.store_root()}" + (
                f" and the store {extra[1]} as collection {extra[0]!r}" if extra else ""
            )
        typer.echo(
            f"sift: serving {what} on http://{settings.host}:{settings.port} (OpenAPI at /docs)",
            err=True,
        )
        if not served:
            typer.echo(
                f"sift: warning: there is no collection to search yet: index one (sift index "
                f"--store {settings.store_root()}/NAME FILES) or ingest through the API "
                "(POST /v1/collections/NAME/documents)",
                err=True,
            )
        uvicorn.run(application, host=settings.host, port=settings.port, log_level=log_level)
