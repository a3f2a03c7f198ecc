"""Ollama's wire: calls recovered from its HTTP 500 `error parsing tool call: raw='...'`.

Ollama parses a model's tool call itself and, when it cannot (prose around the JSON, a
regex with a lone backslash, a bare `multi_tool_use` array), answers with this error and
the raw text; the text is read here with sift.llm's repairs.
"""

from __future__ import annotations

import re

from sift.llm import expand_calls, first_json_value, infer_tool_name
from sift.types import ToolCall

__all__ = ["parse_ollama_tool_error"]

_OLLAMA_TOOL_ERROR = re.compile(r"error parsing tool call: raw='(.*)', err=", re.DOTALL)


def parse_ollama_tool_error(message: str, *, id_prefix: str = "repaired") -> list[ToolCall] | None:
    """Tool calls recovered from Ollama's `error parsing tool call: raw='...'` reply,
    or None when the raw text holds no usable call."""
    match = _OLLAMA_TOOL_ERROR.search(message)
    if not match:
        return None
    try:
        value = first_json_value(match.group(1))
    except ValueError:
        return None
    name = infer_tool_name(value)
    if name is None:
        return None
    calls = expand_calls([(name, value)], id_prefix=id_prefix)
    return calls or None
