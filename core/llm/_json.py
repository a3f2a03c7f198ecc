"""Reading JSON the way models write it: the first balanced value in prose, with stray
escapes repaired (gpt-oss writes regexes with lone backslashes, `"\\d{4}"`, which are not
valid JSON escapes)."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["balanced_end", "first_json_value"]

_VALID_ESCAPES = set('"\\/bfnrtu')

# --------------------------------------------------------------------------- JSON repair


def balanced_end(text: str, start: int) -> int | None:
    """Index just past the JSON value opening at `start`, honouring strings."""
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _fix_escapes(text: str) -> str:
    """Doubles backslashes inside strings that do not start a valid JSON escape."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_string and c == "\\":
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if nxt in _VALID_ESCAPES and nxt:
                out.append(c + nxt)
                i += 2
                continue
            out.append("\\\\")
            i += 1
            continue
        if c == '"':
            in_string = not in_string
        elif in_string and c == "\n":
            out.append("\\n")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    for candidate in (_fix_escapes(text), _TRAILING_COMMA.sub(r"\1", _fix_escapes(text))):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise ValueError("not JSON")


def first_json_value(text: str, *, arrays: bool = True) -> Any:
    """The JSON value in `text`, else the first balanced object (or array) in it, with
    stray escapes repaired. Raises ValueError when there is none."""
    text = text.strip()
    try:
        return _loads(text)
    except ValueError:
        pass
    openers = "{[" if arrays else "{"
    for start, c in enumerate(text):
        if c not in openers:
            continue
        end = balanced_end(text, start)
        if end is None:
            continue
        try:
            return _loads(text[start:end])
        except ValueError:
            continue
    raise ValueError("no JSON object found")
