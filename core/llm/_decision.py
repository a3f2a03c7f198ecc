"""A model's turn as the harness reads it: tool calls, else a final list, else an error."""

from __future__ import annotations

from typing import Any

from sift.llm._calls import calls_in_content
from sift.llm._final import parse_final
from sift.llm._observations import invalid_batch
from sift.llm._tools import MULTI_TOOL
from sift.types import Decision, PolicyView, ToolCall

__all__ = ["build_decision"]


def build_decision(
    calls: list[ToolCall],
    *,
    content: str,
    thinking: str | None,
    view: PolicyView,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    truncated_hint: str | None = None,
) -> Decision:
    """A model's turn as the harness reads it: tool calls if any, else the final list
    (from the answer, the thinking, or a list of seen ids), else a policy error."""
    common: dict[str, Any] = {
        "content": content,
        "thinking": thinking or None,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
    }
    calls = calls or calls_in_content(content, id_prefix=f"t{view.turn}")
    unread = [c for c in calls if c.name == MULTI_TOOL]
    if unread and len(unread) == len(calls):
        # The harness knows only the four tools; a batch whose calls could not be read
        # is explained to the model here, with the shape it should have used. Beside
        # readable calls it stays a call, which the harness answers with this same
        # explanation as an error observation while the readable calls run.
        return Decision(error=invalid_batch(unread[0].arguments), **common)
    if calls:
        return Decision(tool_calls=calls, **common)
    known = set(view.seen) | {seen.chunk.doc_id for seen in view.seen.values()}
    final, from_thinking = parse_final(content, thinking, known)
    if final is not None:
        return Decision(final=final, final_from_thinking=from_thinking, **common)
    if not content.strip():
        hint = f"; {truncated_hint}" if truncated_hint else ""
        return Decision(
            error=f"the model replied with neither a tool call nor an answer{hint}", **common
        )
    # Prose without documents: the model is done; the harness concludes with what the
    # episode gathered.
    return Decision(**common)
