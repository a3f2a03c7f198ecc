"""The two sequential steps of a turn: asking the policy, and collecting the turn's
results into the context under the budget tiers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sift import llm as text
from sift.nodes._budget import force_prune
from sift.nodes._context import Block, Episode
from sift.nodes._tools import Observation, PlannedCall, ToolOutcome, observe, plan_calls
from sift.types import ToolCallTrace, TurnTrace

if TYPE_CHECKING:
    from sift.protocols import Policy, Reranker, TokenCounter

__all__ = ["Emit", "collect", "policy_step"]

Emit = Callable[[dict[str, Any]], None]


def _note_turn(episode: Episode, note: str) -> None:
    """Traces a turn that ran no tool calls (the policy concluded, failed or timed out)."""
    episode.note_peak()
    episode.trace.append(
        TurnTrace(
            turn=episode.turn,
            tokens_after=episode.tokens_used,
            wall_ms=round((time.perf_counter() - episode.turn_clock) * 1000, 3),
            note=note,
        )
    )


def _stop(episode: Episode, reason: str, error: str | None = None, note: str | None = None):
    episode.stopped = reason  # type: ignore[assignment]
    episode.note_peak()
    if error is not None:
        episode.error = error
    if note is not None:
        _note_turn(episode, note)


async def policy_step(
    episode: Episode, policy: Policy, counter: TokenCounter, emit: Emit
) -> list[PlannedCall]:
    """Asks the policy for its next step. Returns the checked calls to run (empty when the
    episode stops, or when the policy's reply failed and it gets another turn)."""
    if episode.deadline_passed():
        _stop(episode, "deadline")
        return []
    episode.turn += 1
    episode.turn_clock = time.perf_counter()
    emit({"event": "sift.turn_started", "turn": episode.turn, "tokens": episode.tokens_used})
    view = episode.view()
    estimate_at_view = episode.estimated_tokens
    try:
        decision = await asyncio.wait_for(policy.decide(view), episode.time_left())
    except TimeoutError:
        _stop(episode, "deadline", note="deadline passed while the policy was deciding")
        return []
    except Exception as exc:  # the policy's failure ends the episode, not the process
        message = f"policy failed: {type(exc).__name__}: {exc}"
        _stop(episode, "error", message, note=message)
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

    if decision.error:
        episode.add_entry("assistant", said, counter, thinking=decision.thinking)
        episode.add_entry("user", [text.policy_error_message(decision.error)], counter)
        episode.failed_turns += 1
        note = f"policy error: {decision.error}"
        if episode.failed_turns >= episode.limits.max_failed_turns:
            _stop(episode, "error", decision.error, note=note)
        else:
            _stop_if_out_of_turns(episode)
            _note_turn(episode, note)
        return []
    if decision.final is not None or not decision.tool_calls:
        episode.add_entry("assistant", said, counter, thinking=decision.thinking)
        episode.final = decision.final
        _stop(
            episode,
            "final",
            note="concluded" if decision.final is not None else "concluded without a final list",
        )
        return []

    calls = [
        call if call.id else call.model_copy(update={"id": f"call_{episode.turn}_{i}"})
        for i, call in enumerate(decision.tool_calls)
    ]
    episode.add_entry("assistant", said, counter, thinking=decision.thinking, tool_calls=calls)
    planned = plan_calls(episode, calls, counter)
    for item in planned:
        emit(
            {
                "event": "sift.tool_call",
                "turn": episode.turn,
                "index": item.index,
                "tool": item.call.name,
                "arguments": item.call.arguments,
                "batch_id": item.call.batch_id,
                "error": item.error,
            }
        )
    return planned


def _stop_if_out_of_turns(episode: Episode) -> None:
    if episode.stopped is None and episode.turn >= episode.max_turns:
        episode.stopped = "max_turns"


def _messages(episode: Episode, observations: list[Observation], counter: TokenCounter):
    """Adds the turn's tool messages: one per call, one per `multi_tool_use` batch."""
    batches: dict[str, list[Observation]] = {}
    groups: list[list[Observation]] = []
    for obs in observations:
        batch = obs.planned.call.batch_id
        if batch is None:
            groups.append([obs])
        elif batch in batches:
            batches[batch].append(obs)
        else:
            batches[batch] = [obs]
            groups.append(batches[batch])
    last = None
    for group in groups:
        if len(group) == 1 and group[0].planned.call.batch_id is None:
            obs = group[0]
            last = episode.add_entry("tool", obs.segments, counter, tool_name=obs.planned.call.name)
            continue
        segments: list[str | Block] = []
        for position, obs in enumerate(group, start=1):
            segments.append(
                text.call_header(position, obs.planned.call.name, obs.planned.call.arguments)
            )
            segments += obs.segments
        last = episode.add_entry("tool", segments, counter, tool_name="multi_tool_use")
    return last


def collect(
    episode: Episode,
    planned: list[PlannedCall],
    outcomes: dict[int, ToolOutcome],
    counter: TokenCounter,
    reranker: Reranker,
    emit: Emit,
) -> None:
    """Joins one turn: observations in call order, then the budget tiers, the usage
    marker, the trace, and the checks that end an episode."""
    limits = episode.limits
    turn = episode.turn
    observations = observe(episode, planned, outcomes, counter, reranker)
    last = _messages(episode, observations, counter)
    for obs in observations:
        if obs.added:
            emit(
                {
                    "event": "sift.chunks_added",
                    "turn": turn,
                    "tool": obs.planned.call.name,
                    "argument": obs.planned.argument,
                    "chunk_ids": obs.added,
                }
            )
        if obs.pruned:
            emit(
                {
                    "event": "sift.chunks_pruned",
                    "turn": turn,
                    "chunk_ids": obs.pruned,
                    "by": "policy",
                }
            )
    calls = [obs.trace for obs in observations]
    for obs in observations:
        obs.trace.tokens = sum(
            s.tokens if isinstance(s, Block) else counter.count(s) for s in obs.segments
        )

    if episode.over_budget_entry is not None:
        # Only the latest over-budget notice matters; older ones would pile up unprunable.
        episode.retire(episode.over_budget_entry)
        episode.over_budget_entry = None

    # Budget: never crossed. Keep room for what is still to be written this turn
    # (usage marker, harness-prune note, over-budget message and their framing).
    reserve = (
        counter.count(text.over_budget_message(limits.budget_tokens, limits.threshold_tokens))
        + counter.count(text.harness_pruned(limits.budget_tokens))
        + 2 * limits.message_overhead_tokens
        + 24
    )
    forced = force_prune(episode, limits.budget_tokens - reserve, reranker)
    cannot_fit = episode.tokens_used > limits.budget_tokens - reserve
    note = None
    if forced:
        note = f"harness pruned {len(forced)} chunks to stay within the budget"
        calls.append(ToolCallTrace(tool="prune_chunks", arguments={"by": "harness"}, pruned=forced))
        emit({"event": "sift.chunks_pruned", "turn": turn, "chunk_ids": forced, "by": "harness"})
        if last is not None:
            episode.append_text(last, text.harness_pruned(len(forced)), counter)
    if cannot_fit:
        _stop(
            episode,
            "budget",
            "the context cannot fit in the token budget even with every chunk pruned",
        )
        note = "over budget with nothing left to prune"
    # The marker and the over-budget message both show the total the policy will see,
    # themselves included (their own size hardly depends on the number they show).
    threshold = limits.threshold_tokens
    total = episode.tokens_used
    if last is not None:
        total += counter.count(text.usage_marker(total, threshold)) + 1
    over = total > threshold
    if over:
        total += (
            counter.count(text.over_budget_message(total, threshold))
            + limits.message_overhead_tokens
            + 1
        )
    if last is not None:
        episode.append_text(last, text.usage_marker(total, threshold), counter)
    tier = "ok"
    if over:
        tier = "rejecting" if total >= limits.rejection_tokens else "over_threshold"
        episode.over_budget_entry = episode.add_entry(
            "user", [text.over_budget_message(total, threshold)], counter
        )
        note = note or f"over the threshold ({tier})"
    episode.note_peak()
    emit(
        {
            "event": "sift.token_usage",
            "turn": turn,
            "used": episode.tokens_used,
            "threshold": limits.threshold_tokens,
            "rejection": limits.rejection_tokens,
            "budget": limits.budget_tokens,
            "tier": tier,
        }
    )

    episode.tool_calls += len(planned)
    episode.tool_turns += 1
    episode.trace.append(
        TurnTrace(
            turn=turn,
            calls=calls,
            tokens_after=episode.tokens_used,
            wall_ms=round((time.perf_counter() - episode.turn_clock) * 1000, 3),
            note=note,
        )
    )
    failures = [p.failure for p in planned]
    if planned and all(failures):
        episode.failed_turns += 1
        if episode.stopped is None and episode.failed_turns >= limits.max_failed_turns:
            reason = "budget" if all(f == "budget" for f in failures) else "error"
            last_error = next(p.error for p in reversed(planned) if p.error)
            episode.stopped = reason
            episode.error = (
                f"{episode.failed_turns} consecutive turns without a usable "
                f"tool call; last: {last_error}"
            )
    else:
        episode.failed_turns = 0
    if episode.stopped is None and episode.deadline_passed():
        episode.stopped = "deadline"
    _stop_if_out_of_turns(episode)
