"""The tools as the model sees them (DESIGN "Tools, as the model sees them").

The four corpus tools are declared by the harness (sift.graphs.prompts); this module adds
`multi_tool_use`, the batch tool for models that emit one call per response. Schemas are
written by hand rather than generated from Python signatures, which would mark every
parameter required and leak implementation names. The same dicts serve Ollama's native
API and LangChain's `bind_tools` (both take the OpenAI function-tool shape).
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["BASE_TOOLS", "MULTI_TOOL", "TOOL_NAMES", "tool_schemas"]

BASE_TOOLS = ("search_corpus", "grep_corpus", "read_document", "prune_chunks")
MULTI_TOOL = "multi_tool_use"
TOOL_NAMES = (*BASE_TOOLS, MULTI_TOOL)


_MULTI: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": MULTI_TOOL,
        "description": "Run several of the tools above in parallel, in one step. Use it to "
        "issue distinct, non-overlapping searches at once. The results come back together "
        "in one message.",
        "parameters": {
            "type": "object",
            "required": ["tool_calls"],
            "properties": {
                "tool_calls": {
                    "type": "array",
                    "description": "The calls to run in parallel.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "enum": list(BASE_TOOLS)},
                            "arguments": {
                                "type": "object",
                                "description": "The arguments of that tool, as it declares them.",
                            },
                        },
                        "required": ["name", "arguments"],
                    },
                }
            },
        },
    },
}


def tool_schemas(*, multi_tool_use: bool = True) -> list[dict[str, Any]]:
    """The tool declarations in the order the model sees them: the harness's four tools
    (sift.graphs.prompts owns their wording), then `multi_tool_use`."""
    from sift.graphs.prompts import tool_schemas as harness_tools

    tools = harness_tools()
    names = [t["function"]["name"] for t in tools]
    if tuple(names) != BASE_TOOLS:
        raise RuntimeError(f"the harness declares tools {names}, expected {list(BASE_TOOLS)}")
    return [*tools, copy.deepcopy(_MULTI)] if multi_tool_use else tools
