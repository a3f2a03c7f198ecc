"""The policy node: asks the policy for the next step, checks its calls, and routes them.

Each accepted call goes to its tool node with its own `Send`, so a turn's calls run
concurrently. A turn whose every call was refused goes straight to `budget` (the errors
are its observations); a reply that could not be used gets another turn; a final list,
max_turns, the deadline or a failed policy end the episode.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from sift import llm
from sift.config import HarnessConfig
from sift.nodes._calls import plan_calls
from sift.nodes._episode import Episode, PlannedCall
from sift.nodes._services import Services
from sift.nodes._state import EpisodeState, ToolTask
from sift.progress import ProgressEvent, ToolCallEvent, TurnStarted
from sift.types import Decision, ToolCall

__all__ = ["policy"]

PolicyRoute = Literal[
    "search_corpus", "grep_corpus", "read_document", "prune_chunks", "budget", "policy", "finalize"
]


def _sends(episode: Episode, planned: list[PlannedCall]) -> list[Send]:
    """One `Send` per accepted call, its payload (`ToolTask`) what its tool node needs, as
    builtins. The turn's searches share one list of the ids to exclude."""
    config = episode.config
    filters = None if episode.filters is None else episode.filters.model_dump(mode="json")
    exclude: list[str] | None = None
    sends: list[Send] = []
    searches = sum(
        1 for item in planned if item.error is None and item.call.name == "search_corpus"
    )
    for item in planned:
        if item.error is not None:
            continue
        name = item.call.name
        task = ToolTask(
            index=item.index,
            tool=name,
            argument=item.argument,
            fetch=item.fetch,
            deadline=episode.deadline,
        )
        if name == "search_corpus":
            if exclude is None:
                exclude = list(episode.searched)
            task["mode"] = config.search_mode
            # The question as written, searched alone in its turn (the seed, or a
            # policy's own plain search) runs as single-shot runs it, at the store's own
            # weight: an episode starts from what one plain search finds. Beside
            # sub-queries it is one of them, at their weight (search_alpha suits short
            # queries; the planner's hops were tuned from that search).
            plain = episode.seeding or (
                searches == 1 and item.argument.strip() == episode.question.strip()
            )
            task["alpha"] = None if plain else config.search_alpha
            if plain and not episode.question_hits:
                episode.plain_search_turn = episode.turn
                # As many as single_shot asks for: a hybrid search's order depends on
                # how many it ranks, and the evidence keeps this one's (plain_first).
                task["fetch"] = max(item.fetch, episode.top_k)
            task["exclude"] = exclude
            task["filters"] = filters
            task["graph_weight"] = config.search_graph_weight
            task["graph_seeds"] = config.search_graph_seeds
            task["graph_rrf_k"] = config.rrf_k
        elif name == "grep_corpus":
            task["filters"] = filters
        elif name == "prune_chunks":
            task["prune_ids"] = item.prune_ids
            task["surfaced"] = dict(episode.doc_of)
        sends.append(Send(name, task))
    return sends


def _seed(episode: Episode) -> Decision:
    """The harness's first step under `seed_search`: the question as written, searched.
    The policy is not asked; the transcript holds it as the first call, so the model's
    first turn starts from what a single-shot search finds."""
    return Decision(
        tool_calls=[
            ToolCall(id="seed_0", name="search_corpus", arguments={"query": episode.question})
        ]
    )


async def _decide(
    episode: Episode, services: Services, emit: Callable[[ProgressEvent], None]
) -> list[PlannedCall]:
    """One policy step on the episode. Returns the checked calls to run (empty when the
    episode stops, or when the policy's reply failed and it gets another turn)."""
    counter = services.counter
    if episode.deadline_passed():
        episode.stop("deadline")
        return []
    episode.turn += 1
    episode.turn_started = time.time()
    emit(TurnStarted(event="sift.turn_started", turn=episode.turn, tokens=episode.tokens_used))
    view = episode.view()
    estimate_at_view = episode.estimated_tokens
    try:
        if episode.seeding:
            decision = _seed(episode)
        else:
            decision = await asyncio.wait_for(services.policy.decide(view), episode.time_left())
    except TimeoutError:
        episode.stop("deadline", note="deadline passed while the policy was deciding")
        return []
    except Exception as exc:  # the policy's failure ends the episode, not the process
        message = f"policy failed: {type(exc).__name__}: {exc}"
        episode.stop("error", message, note=message)
        return []
    if decision.prompt_tokens is not None:
        # The server's count of the prompt it just read is exact; keep the estimate's
        # error so later estimates (of a longer context) are corrected by it.
        episode.correction = decision.prompt_tokens - estimate_at_view
    episode.prompt_tokens += decision.prompt_tokens or 0
    episode.completion_tokens += decision.completion_tokens or 0
    if decision.final_from_thinking and "final_from_thinking" not in episode.flags:
        episode.flags.append("final_from_thinking")
    said = [decision.content] if decision.content else []
    episode.flags += [f for f in decision.flags if f not in episode.flags]

    if decision.error:
        episode.add_entry("assistant", said, counter, thinking=decision.thinking)
        episode.add_entry("user", [llm.policy_error_message(decision.error)], counter)
        episode.failed_turns += 1
        note = f"policy error: {decision.error}"
        if episode.failed_turns >= episode.config.max_failed_turns:
            episode.stop("error", decision.error, note=note)
        else:
            episode.stop_if_out_of_turns()
            episode.note_turn(note)
        return []
    if decision.final is not None or not decision.tool_calls:
        episode.add_entry("assistant", said, counter, thinking=decision.thinking)
        episode.final = decision.final
        episode.keep_plain_order = decision.keep_plain_order
        episode.stop(
            "final",
            # The policy's own words on why it stopped ("the first search covers every key
            # term of the question") are the trace's note of the last turn.
            note=decision.content
            or ("concluded" if decision.final is not None else "concluded without a final list"),
        )
        return []

    calls = [
        call if call.id else call.model_copy(update={"id": f"call_{episode.turn}_{i}"})
        for i, call in enumerate(decision.tool_calls)
    ]
    episode.add_entry("assistant", said, counter, thinking=decision.thinking, tool_calls=calls)
    if decision.cut_off:
        episode.notice = llm.cut_off_notice(decision.completion_tokens)
    planned = plan_calls(episode, calls, answer_repeats=decision.answer_repeats)
    for item in planned:
        emit(
            ToolCallEvent(
                event="sift.tool_call",
                turn=episode.turn,
                index=item.index,
                tool=item.call.name,
                arguments=item.call.arguments,
                batch_id=item.call.batch_id,
                error=item.error,
            )
        )
    return planned


async def policy(
    state: EpisodeState, runtime: Runtime[HarnessConfig], *, services: Services
) -> Command[PolicyRoute]:
    """Asks the policy for its next step and sends each accepted call to its tool node."""
    episode = state["episode"]
    planned = await _decide(episode, services, runtime.stream_writer)
    episode.planned = planned
    update = {"episode": episode, "outcomes": None}
    if episode.stopped is not None:
        return Command(update=update, goto="finalize")
    if not planned:
        return Command(update=update, goto="policy")  # the reply failed: another turn
    return Command(update=update, goto=_sends(episode, planned) or "budget")
