"""What request bodies must hold beyond their types: valid Unicode text, and numbers that
are JSON numbers (pydantic would otherwise read `false` as 0 and `"3"` as 3, accepting
bodies the OpenAPI document calls invalid).

JSON can spell an unpaired UTF-16 surrogate (`"\\ud800"`) and Python decodes it into a
string that no encoder, tokenizer or store accepts; refused at the door, with the field
named, instead of failing deep in an embedder with a message about its input types.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationInfo, field_validator, model_validator

__all__ = ["NOT_BLANK", "SPACE", "RequestModel", "surrogate_problem"]

# Python's whitespace (what str.strip() removes), spelled out for the OpenAPI document:
# JSON Schema's \s is ECMAScript's, which differs.
SPACE = (
    "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
# Text with something besides whitespace.
NOT_BLANK = f"[^{SPACE}]"

_SURROGATE = re.compile("[\ud800-\udfff]")


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
