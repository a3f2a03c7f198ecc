"""Assembling a self-contained page: inline CSS and JS, embedded JSON, a strict policy.

Every page carries a Content-Security-Policy that names its own inline style and scripts by
hash and allows nothing else: no request leaves the page (a trace page may not even call
back; /ui may call its own origin), and markup that slipped into the data could not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["asset", "content_security_policy", "embedded_json", "page"]


@cache
def asset(name: str) -> str:
    """A file of the package's static folder, as text."""
    folder = resources.files("sift.integrations.traceview").joinpath("static")
    return folder.joinpath(name).read_text(encoding="utf-8")


def embedded_json(data: Any) -> str:
    """JSON safe inside a `<script type="application/json">` element: `<`, `>` and `&`
    are escaped, so no text in the data can close the element or open a comment."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def content_security_policy(
    styles: list[str], scripts: list[str], *, connect_self: bool = False
) -> str:
    parts = [
        "default-src 'none'",
        "style-src " + " ".join(_hash(s) for s in styles),
        "script-src " + (" ".join(_hash(s) for s in scripts) or "'none'"),
        "img-src data:",
        "base-uri 'none'",
        "form-action 'none'",
    ]
    if connect_self:
        parts.append("connect-src 'self'")
    return "; ".join(parts)


def page(
    *,
    title: str,
    body: str,
    scripts: list[str],
    data: Any = None,
    connect_self: bool = False,
) -> tuple[str, str]:
    """The whole document and its Content-Security-Policy. `body` is trusted markup built
    by this package; `data`, when given, is embedded as JSON for the scripts to read."""
    style = asset("trace.css")
    sources = [asset(name) for name in scripts]
    policy = content_security_policy([style], sources, connect_self=connect_self)
    embedded = ""
    if data is not None:
        embedded = (
            f'<script type="application/json" id="sift-trace-data">{embedded_json(data)}</script>\n'
        )
    # The sources are the package's own files; "</script" never occurs in them (checked by
    # the tests), so inlining them verbatim keeps their hashes exact.
    inline = "".join(f"<script>{source}</script>\n" for source in sources)
    document = (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{style}</style>\n</head>\n<body>\n{body}\n{embedded}{inline}</body>\n</html>\n"
    )
    return document, policy
