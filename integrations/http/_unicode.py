"""Text a request may carry: valid Unicode only.

JSON can spell an unpaired UTF-16 surrogate (`"\\ud800"`) and Python decodes it into a
string that no encoder, tokenizer or store accepts; refused at the door, with the field
named, instead of failing deep in an embedder with a message about its input types.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, model_validator

__all__ = ["ValidUnicodeModel", "surrogate_problem"]

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


class ValidUnicodeModel(BaseModel):
    """A request body whose every string (keys included) must be valid Unicode."""

    @model_validator(mode="before")
    @classmethod
    def _valid_unicode(cls, data: Any) -> Any:
        problem = surrogate_problem(data)
        if problem:
            raise ValueError(problem)
        return data
