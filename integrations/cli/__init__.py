"""The `sift` command line: index, search, serve, eval, demo.

Each command lives in its own private module exposing `register(app)`, imported after
`app` exists. Errors that sift
raises on purpose print as one line on stderr with exit code 2; nothing else is caught.
"""

from __future__ import annotations

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

from sift.integrations.cli import _demo, _eval, _grep, _index, _mcp, _search, _serve  # noqa: E402

for _module in (_index, _search, _grep, _demo, _serve, _mcp, _eval):
    _module.register(app)


def main(argv: list[str] | None = None) -> None:
    try:
        app(args=argv, standalone_mode=True)
    except SiftError as exc:
        print(f"sift: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
