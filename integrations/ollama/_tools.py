"""The tools as the model sees them (DESIGN "Tools, as the model sees them").

Written by hand rather than generated from Python signatures: generated schemas mark
every parameter required and leak implementation names, and Context-1 was trained on
these names and shapes. The same dicts serve Ollama's native API and LangChain's
`bind_tools` (both take the OpenAI function-tool shape).
"""

from __future__ import annotations

from typing import Any

__all__ = ["BASE_TOOLS", "MULTI_TOOL", "TOOL_NAMES", "tool_schemas"]

BASE_TOOLS = ("search_corpus", "grep_corpus", "read_document", "prune_chunks")
MULTI_TOOL = "multi_tool_use"
TOOL_NAMES = (*BASE_TOOLS, MULTI_TOOL)


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_SEARCH = _function(
    "search_corpus",
    "Hybrid search (BM25 keywords + dense semantic) over the corpus. Returns up to 10 "
    "chunks not returned by any earlier search, each as '# DOCUMENT ID: <chunk_id> "
    "(<n> tokens)' followed by its text, or 'No results found'. Use short, distinct "
    "queries; never repeat a search.",
    {"query": {"type": "string", "description": "The search query."}},
    ["query"],
)

_GREP = _function(
    "grep_corpus",
    "Regular-expression search over every chunk (RE2 syntax, case-sensitive unless the "
    "pattern starts with (?i)). Returns up to 5 matching chunks in the same format. Use it "
    "for exact names, numbers, dates and phrases.",
    {"pattern": {"type": "string", "description": "The regular expression."}},
    ["pattern"],
)

_READ = _function(
    "read_document",
    "Read a whole document (its chunks in order) when a chunk looks promising but "
    "partial. Long documents are cut to the chunks most relevant to the search that "
    "found them.",
    {
        "doc_id": {
            "type": "string",
            "description": "The document id: a chunk id without its trailing _<index>.",
        }
    },
    ["doc_id"],
)

_PRUNE = _function(
    "prune_chunks",
    "Remove chunks from your context to free token budget. Pruned chunks stay known to "
    "the harness but their text is no longer shown. Answers 'Pruned'.",
    {
        "chunk_ids": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The ids of the chunks to remove.",
        }
    },
    ["chunk_ids"],
)

_MULTI = _function(
    MULTI_TOOL,
    "Run several of the tools above in parallel, in one step. Use it to issue distinct, "
    "non-overlapping searches at once. The results come back together in one message.",
    {
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
    ["tool_calls"],
)

_ALL = {"search_corpus": _SEARCH, "grep_corpus": _GREP, "read_document": _READ}
_ALL |= {"prune_chunks": _PRUNE, MULTI_TOOL: _MULTI}


def tool_schemas(*, multi_tool_use: bool = True) -> list[dict[str, Any]]:
    """Fresh copies of the tool declarations, in the order the model sees them."""
    import copy

    names = TOOL_NAMES if multi_tool_use else BASE_TOOLS
    return [copy.deepcopy(_ALL[name]) for name in names]
