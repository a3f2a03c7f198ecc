"""What the model is told (DESIGN "What the model is told").

As in the public Context-1 harness, the tools are declared to the model and the task
arrives as the first user message; there are no other instructions. The observation
formats (blocks, markers, the over-budget message) live in `sift.nodes`, which writes them.
"""

from __future__ import annotations

from typing import Any

from sift.nodes._observations import over_budget_message, usage_marker

__all__ = [
    "TOOL_DESCRIPTIONS",
    "over_budget_message",
    "task_prompt",
    "tool_schemas",
    "usage_marker",
]

TOOL_DESCRIPTIONS: dict[str, str] = {
    "search_corpus": (
        "Hybrid (keyword + semantic) search over the corpus. Returns up to 10 new chunks, "
        "never one an earlier search already returned. Each chunk starts with "
        "'# DOCUMENT ID: <chunk_id> (<n> tokens)'."
    ),
    "grep_corpus": (
        "Regular-expression search over every chunk (RE2 syntax). Returns up to 5 matching "
        "chunks. Use it for exact names, numbers, quoted phrases and identifiers."
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


def tool_schemas() -> list[dict[str, Any]]:
    """The four tools as function declarations (Ollama / OpenAI `tools` shape)."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {
                    "type": "object",
                    "properties": _PARAMETERS[name],
                    "required": list(_PARAMETERS[name]),
                },
            },
        }
        for name, description in TOOL_DESCRIPTIONS.items()
    ]


def task_prompt(question: str, top_k: int = 30) -> str:
    """The first user message of an episode."""
    return f"""You are a retrieval sub-agent. Your job is to find the documents needed to \
answer the question below. You never answer the question yourself.

Tools: search_corpus (hybrid search), grep_corpus (regular expressions over all chunks), \
read_document (read a promising but partial document in full), prune_chunks (drop chunks \
from your context to free tokens).

How to work:
- Break the question into its concepts and plan distinct, non-overlapping searches; issue \
them as parallel tool calls.
- After each round, think: what do I know, what is still missing, which chunks can be \
pruned, is the set complete? Change approach when a strategy fails. Never repeat a search. \
Follow the evidence in the text: names and facts found in one document lead to the next.
- Prune before the token budget runs out; the token usage is shown after each step.

When the set of documents covers every part of the question, finish with up to {top_k} \
documents, most relevant first, each as
<Document id=CHUNK_ID><Justification>One to three sentences on why it matters.\
</Justification></Document>
and nothing else.

Question: {question}"""
