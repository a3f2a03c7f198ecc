"""sift.llm: everything a model is told, and everything read back from it.

One place for what the Ollama policy, the LangChain policy and the graph's nodes say to a
model, so that they say the same thing:

- the tools: `TOOL_NAMES` (the four corpus tools, defined here once), `MULTI_TOOL`,
  `ARGUMENT_OF` (each tool's argument), `tool_schemas(...)` (the declarations, with the
  numbers of `HarnessConfig`);
- the task message: `task_prompt(question, top_k)`;
- every observation text the harness writes (`block`, `usage_marker`,
  `over_budget_message`, the error messages, ...): models were trained on these formats,
  so they change only on purpose;
- reading replies: `expand_calls` (names normalised, arguments repaired, `multi_tool_use`
  expanded), `group_batches` (its inverse, for re-sending the transcript),
  `read_text_calls` (every call written in a reply's text), `first_json_value`,
  `infer_tool_name`, `parse_final` and `build_decision` (a reply as a `sift.Decision`);
- constrained decisions (issue 45), for models without native tool calls:
  `decision_schema` (the JSON schema of a decision for a view: calls from the tool enum,
  typed and bounded, or a final list of the ids the context shows), `constrained_messages`,
  `read_decision` and `constrained_turn` (one turn: a cut-off reply asked again shorter).

Provider adapters (sift.integrations.ollama, sift.integrations.langchain) translate
messages to their wire shapes and use these names only.
"""

from __future__ import annotations

from sift.llm._calls import (
    UNPARSED_KEY,
    UNREADABLE,
    TextCalls,
    calls_in_content,
    expand_calls,
    group_batches,
    infer_tool_name,
    normalise_name,
    read_text_calls,
)
from sift.llm._constrained import (
    ConstrainedReply,
    constrained_messages,
    constrained_turn,
    context_ids,
    decision_schema,
    read_decision,
)
from sift.llm._decision import build_decision
from sift.llm._final import parse_final
from sift.llm._json import first_json_value
from sift.llm._observations import (
    NO_RESULTS,
    PRUNED,
    already_searched,
    block,
    block_ids,
    budget_too_tight,
    call_header,
    cut_off_error,
    cut_off_notice,
    harness_pruned,
    invalid_batch,
    invalid_call,
    no_calls_error,
    over_budget_message,
    policy_error_message,
    read_note,
    rejected,
    unknown_prune_ids,
    unknown_tool,
    unreadable_call,
    usage_marker,
)
from sift.llm._prompt import task_prompt
from sift.llm._tools import ARGUMENT_OF, IO_TOOLS, MULTI_TOOL, TOOL_NAMES, ToolName, tool_schemas

__all__ = [
    "ARGUMENT_OF",
    "IO_TOOLS",
    "MULTI_TOOL",
    "NO_RESULTS",
    "PRUNED",
    "TOOL_NAMES",
    "UNPARSED_KEY",
    "UNREADABLE",
    "ConstrainedReply",
    "TextCalls",
    "ToolName",
    "already_searched",
    "block",
    "block_ids",
    "budget_too_tight",
    "build_decision",
    "call_header",
    "calls_in_content",
    "constrained_messages",
    "constrained_turn",
    "context_ids",
    "cut_off_error",
    "cut_off_notice",
    "decision_schema",
    "expand_calls",
    "first_json_value",
    "group_batches",
    "harness_pruned",
    "infer_tool_name",
    "invalid_batch",
    "invalid_call",
    "no_calls_error",
    "normalise_name",
    "over_budget_message",
    "parse_final",
    "policy_error_message",
    "read_decision",
    "read_note",
    "read_text_calls",
    "rejected",
    "task_prompt",
    "tool_schemas",
    "unknown_prune_ids",
    "unknown_tool",
    "unreadable_call",
    "usage_marker",
]
