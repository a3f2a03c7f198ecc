"""What request bodies must hold beyond their types: valid Unicode text, and numbers that
are JSON numbers (pydantic would otherwise read `false` as 0 and `"3"` as 3, accepting
bodies the OpenAPI document calls invalid).

JSON can spell an unpaired UTF-16 surrogate (`"\\ud800"`) and Python decodes it into a
string that no encoder, tokenizer or store accepts; refused at the door, with the field
named, instead of failing deep in an embedder with a message about its input types.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationInfo, field_validator, model_validator

from sift.integrations.http._errors import INVALID_REQUEST, ApiError

__all__ = [
    "MAX_DEPTH",
    "NOT_BLANK",
    "SPACE",
    "JsonBodyRoute",
    "RequestModel",
    "parse_json",
    "surrogate_problem",
]

# Deepest nesting of objects and arrays a request body may have: every body the API
# defines is at most five levels deep. Python's parser and validators recurse, and a
# body nested about a thousand levels (2 KB) ended in a RecursionError (a 500).
MAX_DEPTH = 32

# Python's whitespace (what str.strip() removes), spelled out for the OpenAPI document:
# JSON Schema's \s is ECMAScript's, which differs.
SPACE = (
    "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
# Text with something besides whitespace.
NOT_BLANK = f"[^{SPACE}]"

_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_json(raw: bytes) -> Any:
    """A request body's JSON; ValueError with a message that names the problem (where the
    text stops being JSON, a nesting deeper than `MAX_DEPTH`, a number too long to read)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"the body is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno} "
            f"(character {exc.pos})"
        ) from None
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"the body is not UTF-8 text: byte {exc.start} is {raw[exc.start : exc.start + 1]!r}"
        ) from None
    except RecursionError:
        raise ValueError(_too_deep()) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise ValueError(f"the body holds a value that cannot be read: {exc}") from None
    if _depth_over(data, MAX_DEPTH):
        raise ValueError(_too_deep())
    return data


class JsonBodyRoute(APIRoute):
    """A route whose JSON body is checked by `parse_json` before FastAPI reads it: a body
    too deep for its parser, or not JSON, is a 422 naming the problem (FastAPI answered
    "33: JSON decode error", naming a character offset as if it were a field, and a 400
    "not JSON" for valid JSON nested too deep)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler  # reads its body itself (the ingest batch, off the event loop)

        async def checked(request: Request) -> Response:
            raw = await request.body()  # kept by the request: FastAPI reads it again
            if raw:
                try:
                    parse_json(raw)
                except ValueError as exc:
                    # The key is checked before the body, as on every other request.
                    request.app.state.sift.auth.identify(request.headers.get("authorization"))
                    raise ApiError(422, INVALID_REQUEST, f"invalid request: {exc}") from None
            return await handler(request)

        return checked


def _too_deep() -> str:
    return (
        f"the body's objects and arrays are nested more than {MAX_DEPTH} levels deep; "
        "no request of this API needs more"
    )


def _depth_over(data: Any, limit: int) -> bool:
    """Whether `data` nests objects and arrays more than `limit` levels (iterative: a
    recursive walk would itself overflow on the bodies it is meant to refuse)."""
    stack: list[tuple[Any, int]] = [(data, 1)] if isinstance(data, dict | list) else []
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def surrogate_problem(value: Any, where: str = "body") -> str | None:
    """A message naming the first string in `value` (JSON data: dicts, lists, strings)
    that holds an unpaired surrogate, or None when every string is valid Unicode."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        if found is None:
            return None
        return (
            f"{where} is not valid Unicode: it contains an unpaired UTF-16 surrogate "
            f"(U+{ord(found.group()):04X}) at character {found.start()}; send UTF-8 text "
            "(a surrogate pair such as \\ud83d\\ude00 is fine)"
        )
    if isinstance(value, dict):
        for key, item in value.items():
            problem = surrogate_problem(key, f"{where} (a key)") or surrogate_problem(
                item, f"{where}.{key}" if _SURROGATE.search(str(key)) is None else where
            )
            if problem:
                return problem
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            problem = surrogate_problem(item, f"{where}[{index}]")
            if problem:
                return problem
    return None


def _numeric(annotation: Any) -> bool:
    """Whether a field's type is a number (possibly optional), and never a string."""
    if annotation in (int, float):
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return bool(args) and all(a in (int, float) for a in args)
    return False


class RequestModel(BaseModel):
    """A request body (or part of one): every string valid Unicode (keys included), every
    number a JSON number."""

    @model_validator(mode="before")
    @classmethod
    def _as_json_says(cls, data: Any) -> Any:
        problem = surrogate_problem(data)
        if problem:
            raise ValueError(problem)
        return data

    @field_validator("*", mode="before")
    @classmethod
    def _json_number(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if field is not None and _numeric(field.annotation) and isinstance(value, bool | str):
            raise ValueError(f"must be a JSON number, not {type(value).__name__} {value!r}")
        return value
