"""The budget node: joins a turn's outcomes in call order and enforces the budget tiers
(DESIGN "Budget tiers"): the usage marker, the over-budget notice past the threshold,
and pruning by the harness itself so that the budget is never crossed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from sift import llm as text
from sift.config import HarnessConfig
from sift.nodes._episode import Block, Episode
from sift.nodes._observe import observe, tool_messages
from sift.nodes._services import Services
from sift.nodes._state import EpisodeState, ToolOutcome
from sift.types import StopReason, ToolCallTrace, TurnTrace

if TYPE_CHECKING:
    from sift.protocols import Reranker

__all__ = ["budget", "chunk_values", "force_prune"]


def chunk_values(episode: Episode, chunk_ids: list[str], reranker: Reranker) -> list[float]:
    """Value of keeping each chunk in the context: relevance per token.

    Relevance is the reranker's score of the chunk against the question, plus one so that
    among chunks with no overlap at all the larger ones (more tokens freed) go first.
    """
    chunks = [episode.seen[cid].chunk for cid in chunk_ids]
    scores = reranker.rerank(episode.question, chunks)
    return [
        (1.0 + score) / max(1, sum(b.tokens for b in episode.live_blocks(cid)))
        for cid, score in zip(chunk_ids, scores, strict=True)
    ]


def force_prune(episode: Episode, limit: int, reranker: Reranker) -> list[str]:
    """Prunes the lowest-value live chunks until the context holds at most `limit` tokens.

    Returns the pruned ids in pruning order. The caller concludes the episode when the
    context is still over the limit afterwards (nothing prunable is left).
    """
    if episode.tokens_used <= limit:
        return []
    live = episode.live_chunk_ids()
    values = chunk_values(episode, live, reranker)
    # Lowest value first; among equals the most recently surfaced goes first, so the
    # chunks the policy has been reasoning about longest stay.
    order = sorted(range(len(live)), key=lambda i: (values[i], -i))
    pruned: list[str] = []
    for i in order:
        if episode.tokens_used <= limit:
            break
        if episode.prune(live[i]):
            pruned.append(live[i])
    return pruned


def _join(
    episode: Episode, outcomes: dict[int, ToolOutcome], services: Services, emit: Any
) -> None:
    """Joins one turn: observations in call order, then the budget tiers, the usage
    marker, the trace, and the checks that end an episode."""
    counter, reranker = services.counter, services.reranker
    planned = episode.planned
    limits = episode.config
    turn = episode.turn
    observations = observe(episode, planned, outcomes, counter, reranker)
    last = tool_messages(episode, observations, counter)
    if episode.notice is not None:
        if last is not None:
            episode.append_text(last, episode.notice, counter)
        episode.notice = None
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
    # The over-budget notice has two wordings (below and past rejection): room for the longer.
    notice = max(
        counter.count(
            text.over_budget_message(used, limits.threshold_tokens, limits.rejection_tokens)
        )
        for used in (limits.threshold_tokens, limits.budget_tokens)
    )
    reserve = (
        notice
        + counter.count(text.harness_pruned(limits.budget_tokens))
        + 2 * limits.message_overhead_tokens
        + limits.reserve_slack_tokens
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
        episode.stop(
            "budget", "the context cannot fit in the token budget even with every chunk pruned"
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
            counter.count(text.over_budget_message(total, threshold, limits.rejection_tokens))
            + limits.message_overhead_tokens
            + 1
        )
    if last is not None:
        episode.append_text(last, text.usage_marker(total, threshold), counter)
    tier = "ok"
    if over:
        tier = "rejecting" if total >= limits.rejection_tokens else "over_threshold"
        episode.over_budget_entry = episode.add_entry(
            "user", [text.over_budget_message(total, threshold, limits.rejection_tokens)], counter
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
            wall_ms=episode.turn_ms(),
            note=note,
        )
    )
    failures = [p.failure for p in planned]
    if planned and all(failures):
        episode.failed_turns += 1
        if episode.stopped is None and episode.failed_turns >= limits.max_failed_turns:
            reason: StopReason = "budget" if all(f == "budget" for f in failures) else "error"
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
    episode.stop_if_out_of_turns()


def budget(
    state: EpisodeState, runtime: Runtime[HarnessConfig], *, services: Services
) -> Command[Literal["policy", "finalize"]]:
    """Joins the turn's outcomes into the context under the budget tiers; the next turn,
    or finalize when the episode has stopped."""
    episode = state["episode"]
    _join(episode, state.get("outcomes") or {}, services, runtime.stream_writer)
    episode.planned = []
    goto: Literal["policy", "finalize"] = "finalize" if episode.stopped is not None else "policy"
    return Command(update={"episode": episode, "outcomes": None}, goto=goto)
