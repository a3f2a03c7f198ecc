"""The tools as the model sees them (DESIGN "Tools, as the model sees them").

The names are defined here once. Declarations are written by hand rather than generated
from Python signatures, which would mark every parameter required and leak implementation
names. The same dicts serve Ollama's native API and LangChain's `bind_tools` (both take
the OpenAI function-tool shape). The numbers in the descriptions are the harness's
configuration, so a model is never promised more results than a tool returns.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Final, Literal

from sift.config import HarnessConfig

__all__ = [
    "ARGUMENT_OF",
    "IO_TOOLS",
    "MULTI_TOOL",
    "TOOL_NAMES",
    "ToolName",
    "tool_descriptions",
    "tool_schemas",
]

ToolName = Literal["search_corpus", "grep_corpus", "read_document", "prune_chunks"]

# The four corpus tools, in the order the model sees them.
TOOL_NAMES: Final[tuple[ToolName, ...]] = (
    "search_corpus",
    "grep_corpus",
    "read_document",
    "prune_chunks",
)
# The tools that read the store (the fourth only edits the context).
IO_TOOLS: Final[tuple[ToolName, ...]] = TOOL_NAMES[:3]
# The batch tool for models that emit one call per response.
MULTI_TOOL: Final = "multi_tool_use"

# The one argument each tool takes.
ARGUMENT_OF: Final[dict[str, str]] = {
    "search_corpus": "query",
    "grep_corpus": "pattern",
    "read_document": "doc_id",
    "prune_chunks": "chunk_ids",
}

_PARAMETERS: dict[str, dict[str, Any]] = {
    "search_corpus": {"query": {"type": "string", "description": "The search query."}},
    "grep_corpus": {"pattern": {"type": "string", "description": "A regular expression."}},
    "read_document": {"doc_id": {"type": "string", "description": "The document id."}},
    "prune_chunks": {
        "chunk_ids": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The chunk ids to prune.",
        }
    },
}


def tool_descriptions(search_max_chunks: int, grep_max_hits: int) -> dict[str, str]:
    """What each tool does, with the harness's result sizes (the declarations' text, and
    what a constrained model is told of the tools)."""
    return {
        "search_corpus": (
            f"Hybrid (keyword + semantic) search over the corpus. Returns up to "
            f"{search_max_chunks} new chunks, never one an earlier search already returned. "
            "Each chunk starts with '# DOCUMENT ID: <chunk_id> (<n> tokens)'."
        ),
        "grep_corpus": (
            f"Regular-expression search over every chunk (RE2 syntax). Returns up to "
            f"{grep_max_hits} matching chunks. Use it for exact names, numbers, quoted "
            "phrases and identifiers."
        ),
        "read_document": (
            "Reads a document's chunks in order (the doc id is the chunk id without its final "
            "'_<index>'). Use it when a chunk is promising but partial."
        ),
        "prune_chunks": (
            "Removes chunks from your context to free tokens. Prune chunks that are irrelevant "
            "or redundant; they stay known to the harness."
        ),
    }


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
                            "name": {"type": "string", "enum": list(TOOL_NAMES)},
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


@lru_cache(maxsize=64)
def _declarations(search_max_chunks: int, grep_max_hits: int) -> tuple[dict[str, Any], ...]:
    descriptions = tool_descriptions(search_max_chunks, grep_max_hits)
    return tuple(
        {
            "type": "function",
            "function": {
                "name": name,
                "description": descriptions[name],
                "parameters": {
                    "type": "object",
                    "properties": _PARAMETERS[name],
                    "required": list(_PARAMETERS[name]),
                },
            },
        }
        for name in TOOL_NAMES
    )


def tool_schemas(
    *,
    search_max_chunks: int | None = None,
    grep_max_hits: int | None = None,
    multi_tool_use: bool = True,
) -> list[dict[str, Any]]:
    """The tool declarations in the order the model sees them: the four corpus tools,
    then `multi_tool_use` (unless left out). The numbers default to `HarnessConfig`'s
    (environment included); a policy passes the ones its `PolicyView` carries."""
    if search_max_chunks is None or grep_max_hits is None:
        config = HarnessConfig()
        search_max_chunks = search_max_chunks or config.search_max_chunks
        grep_max_hits = grep_max_hits or config.grep_max_hits
    tools = copy.deepcopy(list(_declarations(search_max_chunks, grep_max_hits)))
    return [*tools, copy.deepcopy(_MULTI)] if multi_tool_use else tools
