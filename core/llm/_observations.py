"""Every text the harness writes into the model's context (observations), in one place.

The formats follow the public Context-1 conventions (DESIGN "Tools"), so that models
trained on them see what they were trained on.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sift.llm._tools import MULTI_TOOL, TOOL_NAMES

__all__ = [
    "NO_RESULTS",
    "PRUNED",
    "already_searched",
    "block",
    "block_ids",
    "budget_too_tight",
    "call_header",
    "cut_off_error",
    "cut_off_notice",
    "harness_pruned",
    "invalid_batch",
    "invalid_call",
    "no_calls_error",
    "over_budget_message",
    "policy_error_message",
    "read_note",
    "rejected",
    "unknown_prune_ids",
    "unknown_tool",
    "unreadable_call",
    "usage_marker",
]

NO_RESULTS = "No results found"
PRUNED = "Pruned"


def block(chunk_id: str, tokens: int, text: str) -> str:
    return f"# DOCUMENT ID: {chunk_id} ({tokens} tokens)\n{text}"


# The header `block` writes; a document id may hold spaces, so the id is all up to the
# token count.
_BLOCK_HEADER = re.compile(r"^# DOCUMENT ID: (.+?) \(\d+ tokens\)$", re.MULTILINE)


def block_ids(text: str) -> list[str]:
    """The chunk ids of the blocks (`block`) a text shows, in order, each once."""
    return list(dict.fromkeys(_BLOCK_HEADER.findall(text)))


def usage_marker(used: int, threshold: int) -> str:
    return f"[Token usage: {used}/{threshold}]"


def over_budget_message(used: int, threshold: int, rejection: int | None = None) -> str:
    """The notice past the threshold. It says what is refused now: below `rejection`
    every tool still runs (the model is asked to prune); from it on only prune_chunks."""
    if rejection is not None and used < rejection:
        return (
            f"{usage_marker(used, threshold)} OVER BUDGET. The context is over its token "
            f"threshold; from {rejection} tokens on, search_corpus, grep_corpus and "
            "read_document will be refused until chunks are pruned. Either prune chunks "
            "with prune_chunks now (weigh each chunk's tokens against its relevance to the "
            "question) and continue searching, or, if the documents gathered cover every "
            "part of the question, conclude with your final list."
        )
    return (
        f"{usage_marker(used, threshold)} OVER BUDGET. The context is over its token "
        "threshold: search_corpus, grep_corpus and read_document are unavailable until "
        "chunks are pruned. Either prune chunks with prune_chunks (weigh each chunk's "
        "tokens against its relevance to the question) and continue searching, or, if the "
        "documents gathered cover every part of the question, conclude with your final list."
    )


def harness_pruned(count: int) -> str:
    return f"[The harness pruned {count} chunks to keep the context within its token budget]"


def rejected(tool: str, used: int, rejection: int) -> str:
    return (
        f"Error: {tool} rejected: the context holds {used} tokens, past the limit of "
        f"{rejection}. Only prune_chunks is available: prune chunks, or conclude with your "
        "final list."
    )


def budget_too_tight(tool: str, left: int) -> str:
    return (
        f"Error: {tool} rejected: only {left} tokens of budget are left for its results. "
        "Prune chunks with prune_chunks, or conclude with your final list."
    )


def unknown_tool(name: str) -> str:
    return f"Error: unknown tool '{name}'. Available tools: {', '.join(TOOL_NAMES)}."


def invalid_call(tool: str, problem: str, arguments: dict[str, Any]) -> str:
    shown = json.dumps(arguments, ensure_ascii=False, default=str)
    return f"Error: invalid call to {tool}: {problem}; got arguments {shown}."


def invalid_batch(arguments: Any) -> str:
    """Why a `multi_tool_use` call could not be read, with the shape it should have had
    (a policy error when it was the reply's only call; else, prefixed with "Error: ", the
    observation that answers it beside its siblings' results)."""
    shown = json.dumps(arguments, ensure_ascii=False, default=str)[:300]
    return (
        f'{MULTI_TOOL} needs {{"tool_calls": [{{"name": <tool>, '
        f'"arguments": {{...}}}}, ...]}}; got {shown}'
    )


def already_searched(query: str, ids: list[str]) -> str:
    """The answer to a search the episode already ran: it is not run again (a small model
    otherwise searches the question over and over, issue 45)."""
    shown = f" It returned {', '.join(ids)}." if ids else ""
    return (
        f"Error: search_corpus({json.dumps(query, ensure_ascii=False)}) already ran and is "
        f"not run again.{shown} Search for something else (another part of the question, "
        "a name found in the text), or conclude with your final list."
    )


def unknown_prune_ids(ids: list[str]) -> str:
    return f"Unknown chunk ids (not in the context): {', '.join(ids)}"


def read_note(doc_id: str, shown: int, total: int, query: str) -> str:
    return (
        f"[Showing {shown} of {total} chunks of {doc_id}: those most relevant to "
        f"'{query}', in document order]"
    )


def call_header(position: int, tool: str, arguments: dict[str, Any]) -> str:
    shown = json.dumps(arguments, ensure_ascii=False, default=str)
    return f"[{position}] {tool}({shown})"


def policy_error_message(error: str) -> str:
    return (
        f"Error: your last reply could not be used: {error}. Call one of the tools "
        f"({', '.join(TOOL_NAMES)}) or conclude with your final list."
    )


def unreadable_call(text: str) -> str:
    """The error observation of a call written as text that could not be read."""
    return (
        f"Error: this call could not be read and did not run: {text!r}. Write each call as "
        'a JSON object {"name": <tool>, "arguments": {...}}.'
    )


def cut_off_notice(tokens: int | None) -> str:
    """Told after the calls of a reply the server cut off at its token limit ran."""
    at = f" at {tokens} tokens" if tokens else ""
    return (
        f"[Your last reply was cut off{at} by the token limit: only the calls written in "
        "full ran. Write fewer, shorter calls per reply, and do not repeat earlier calls.]"
    )


def cut_off_error(tokens: int | None, hint: str | None = None, documents: int = 0) -> str:
    """The policy error of a reply cut off before any call was written in full.

    `documents`: the complete `<Document>` blocks the cut-off reply held. A final list
    cut off by the limit is not taken (issue 27); a small model told only "cut off"
    wrote the same over-long list again, so the error says how to fit it."""
    at = f" at {tokens} tokens" if tokens else ""
    more = f" ({hint})" if hint else ""
    if documents:
        return (
            f"your final list was cut off{at} by the token limit after {documents} "
            f"complete documents, so it was not taken{more}. Write the final list again, "
            "shorter: the most relevant documents first, one short sentence of "
            "justification each"
        )
    return f"the reply was cut off{at} by the token limit before any complete call{more}"


def no_calls_error(has_text: bool) -> str:
    """The policy error of a reply that holds neither a call nor a final list."""
    if not has_text:
        return "the reply held neither a tool call nor a final list"
    return (
        "the reply held neither a tool call nor a final list (a final list is "
        "<Document id=CHUNK_ID><Justification>...</Justification></Document> blocks and "
        "nothing else)"
    )
