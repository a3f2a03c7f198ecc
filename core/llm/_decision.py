"""A model's turn as the harness reads it: tool calls, else a final list, else an error.

The order of the checks is what keeps a real model's replies from ending an episode by
accident (issue 27): calls come first, from the structured field and from the text; a
reply cut off by the token limit is never a final answer; ids are a final list only
when the reply is one; anything else is an error the model is told about.
"""

from __future__ import annotations

from typing import Any

from sift.llm._calls import read_text_calls
from sift.llm._final import count_complete_documents, parse_final
from sift.llm._observations import cut_off_error, invalid_batch, no_calls_error
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
    cut_off: bool = False,
    truncated_hint: str | None = None,
) -> Decision:
    """A model's turn as the harness reads it.

    - `calls` (the structured ones) and every call written in the text run, in order;
      the transcript keeps them as calls and only the prose around them as content.
    - `cut_off` (the server stopped at its token limit): the complete calls run and the
      model is told (`Decision.cut_off`); with no complete call it is a policy error.
      Never a final answer.
    - Otherwise a final list: `<Document id=...>` blocks, or a reply that is a plain list
      of ids the episode has seen.
    - Anything else (prose, empty) is a policy error: the harness asks for calls or a
      final list, a bounded number of times.
    """
    common: dict[str, Any] = {
        "thinking": thinking or None,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cut_off": cut_off,
    }
    written = read_text_calls(content, id_prefix=f"t{view.turn}x")
    if written.calls:
        # The transcript holds each call once, as a call: the text it was written in is
        # replaced by the prose around it.
        calls = [*calls, *written.calls]
        content = written.prose
        common["calls_from_text"] = len(written.calls)
    common["content"] = content
    unread = [c for c in calls if c.name == MULTI_TOOL]
    if unread and len(unread) == len(calls):
        # The harness knows only the four tools; a batch whose calls could not be read
        # is explained to the model here, with the shape it should have used. Beside
        # readable calls it stays a call, which the harness answers with this same
        # explanation as an error observation while the readable calls run.
        return Decision(error=invalid_batch(unread[0].arguments), **common)
    if calls:
        return Decision(tool_calls=calls, **common)
    if cut_off:
        documents = count_complete_documents(content)
        error = cut_off_error(completion_tokens, truncated_hint, documents)
        return Decision(error=error, **common)
    known = set(view.seen) | {seen.chunk.doc_id for seen in view.seen.values()}
    final, from_thinking = parse_final(content, thinking, known)
    if final is not None:
        return Decision(final=final, final_from_thinking=from_thinking, **common)
    return Decision(error=no_calls_error(bool(content.strip())), **common)
