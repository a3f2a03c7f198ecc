"""The `sift` command line: index, search, serve, eval, demo.

Each command lives in its own private module exposing `register(app)`. Errors that sift
raises on purpose print as one line on stderr with exit code 2; nothing else is caught.
"""

from __future__ import annotations

import importlib
import sys

import typer

from sift.errors import SiftError

__all__ = ["app", "main"]

app = typer.Typer(
    name="sift",
    help="sift: agentic multi-hop search over your documents (Context-1 harness).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_COMMANDS = ("_index", "_search", "_grep", "_demo", "_serve", "_eval")

for _name in _COMMANDS:
    try:
        _module = importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as exc:  # a command whose module has not landed yet
        if exc.name != f"{__name__}.{_name}":
            raise
        continue
    _module.register(app)


def main(argv: list[str] | None = None) -> None:
    try:
        app(args=argv, standalone_mode=True)
    except SiftError as exc:
        print(f"sift: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
