"""Checking a policy's calls before they run: known tool, readable argument, and a share
of the remaining budget (DESIGN "Tools", "Budget tiers")."""

from __future__ import annotations

from typing import Any

from sift import llm
from sift.llm import ARGUMENT_OF, IO_TOOLS
from sift.nodes._episode import Episode, PlannedCall
from sift.types import ToolCall

__all__ = ["plan_calls", "runs_io"]


def runs_io(planned: PlannedCall) -> bool:
    """The call is runnable and reads the store."""
    return planned.error is None and planned.call.name in IO_TOOLS


def _check_arguments(call: ToolCall) -> tuple[str, list[str], str | None]:
    """(argument for provenance, prune ids, problem) of a call to a known tool."""
    key = ARGUMENT_OF[call.name]
    value: Any = call.arguments.get(key)
    if call.name == "prune_chunks":
        if isinstance(value, str) and value.strip():
            value = [value]
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v.strip() for v in value)
        ):
            return "", [], f"'{key}' must be a non-empty list of chunk id strings"
        ids = [v.strip() for v in value]
        return ", ".join(ids), ids, None
    if not isinstance(value, str) or not value.strip():
        return "", [], f"'{key}' must be a non-empty string"
    return value.strip(), [], None


def _query_key(query: str) -> str:
    # The same search written with other spacing or case is the same search.
    return " ".join(query.split()).casefold()


def _hits_of(search_hits: dict[str, list[str]], query: str) -> list[str]:
    key = _query_key(query)
    return next((ids for q, ids in search_hits.items() if _query_key(q) == key), [])


def plan_calls(
    episode: Episode, calls: list[ToolCall], *, answer_repeats: bool = False
) -> list[PlannedCall]:
    """Checks each call and gives the runnable ones their share of the remaining budget.

    `answer_repeats` (`Decision.answer_repeats`): a search the episode already ran (or an
    earlier call of this turn asks for) is answered as such, not run; otherwise a repeat
    runs and pages deeper (its chunks are never ones an earlier search returned).

    Past the rejection level only prune_chunks runs. Each search/grep/read gets
    `min(call_token_cap, remaining budget / number of such calls)`, so a turn's results can
    never push the context past the budget; a share below `min_call_tokens` is refused.
    """
    limits = episode.config
    planned: list[PlannedCall] = []
    # Searches already run (earlier turns, and earlier calls of this one). A small model
    # searches the question again and again (issue 45): paging deeper into it gives it
    # ever worse chunks, so it is told instead.
    searched = {_query_key(q) for q in episode.search_hits} if answer_repeats else None
    for index, call in enumerate(calls):
        item = PlannedCall(index=index, call=call)
        planned.append(item)
        if call.name == llm.UNREADABLE:
            text = str(call.arguments.get(llm.UNPARSED_KEY, ""))
            item.error, item.failure = llm.unreadable_call(text), "invalid"
            continue
        if call.name == llm.MULTI_TOOL:
            # A batch the policy could not read, sent beside readable calls.
            item.error, item.failure = f"Error: {llm.invalid_batch(call.arguments)}", "invalid"
            continue
        if call.name not in ARGUMENT_OF:
            item.error, item.failure = llm.unknown_tool(call.name), "invalid"
            continue
        item.argument, item.prune_ids, problem = _check_arguments(call)
        if problem is not None:
            item.error = llm.invalid_call(call.name, problem, call.arguments)
            item.failure = "invalid"
        elif (
            call.name == "search_corpus"
            and searched is not None
            and _query_key(item.argument) in searched
        ):
            ids = _hits_of(episode.search_hits, item.argument)
            item.error, item.failure = llm.already_searched(item.argument, ids), "invalid"
        elif call.name in IO_TOOLS and episode.tokens_used >= limits.rejection_tokens:
            item.error = llm.rejected(call.name, episode.tokens_used, limits.rejection_tokens)
            item.failure = "budget"
        if searched is not None and call.name == "search_corpus" and item.error is None:
            searched.add(_query_key(item.argument))
    io_calls = [p for p in planned if runs_io(p)]
    if io_calls:
        left = (
            limits.budget_tokens
            - episode.tokens_used
            - limits.reserve_per_turn_tokens
            - limits.reserve_per_call_tokens * len(planned)
        )
        share = min(limits.call_token_cap, max(0, left) // len(io_calls))
        searches = sum(1 for p in io_calls if p.call.name == "search_corpus")
        for item in io_calls:
            if share < limits.min_call_tokens:
                item.error = llm.budget_too_tight(item.call.name, max(0, left))
                item.failure = "budget"
                continue
            item.cap = share
            if item.call.name == "search_corpus":
                # Parallel searches may want the same chunks; each fetches enough that it
                # can still fill its quota after the earlier calls of the turn took theirs.
                item.fetch = limits.search_max_chunks * searches
            elif item.call.name == "grep_corpus":
                item.fetch = limits.grep_max_hits
    return planned
