"""The budget node: joins a turn's outcomes in call order and enforces the budget tiers
(DESIGN "Budget tiers"): the usage marker, the over-budget notice past the threshold,
and pruning by the harness itself so that the budget is never crossed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from sift import llm as text
from sift.config import HarnessConfig
from sift.nodes._episode import Block, Episode
from sift.nodes._observe import Observation, observe, tool_messages
from sift.nodes._services import Services
from sift.nodes._state import EpisodeState, ToolOutcome
from sift.progress import ChunksAdded, ChunksPruned, ProgressEvent, TokenUsage
from sift.types import StopReason, ToolCallTrace, TurnTrace

if TYPE_CHECKING:
    from sift.protocols import Reranker, TokenCounter

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


Emit = Callable[[ProgressEvent], None]


def _join(
    episode: Episode, outcomes: dict[int, ToolOutcome], services: Services, emit: Emit
) -> None:
    """Joins one turn: observations in call order, then the budget tiers, the usage
    marker, the trace, and the checks that end an episode."""
    counter = services.counter
    observations, last = _observe_turn(episode, outcomes, services, emit)
    calls = [obs.trace for obs in observations]
    for obs in observations:
        obs.trace.tokens = sum(
            s.tokens if isinstance(s, Block) else counter.count(s) for s in obs.segments
        )
    if episode.over_budget_entry is not None:
        # Only the latest over-budget notice matters; older ones would pile up unprunable.
        episode.retire(episode.over_budget_entry)
        episode.over_budget_entry = None
    note = _keep_within_budget(episode, last, calls, services, emit)
    over_note = _mark_usage(episode, last, counter, emit)
    _record_turn(episode, calls, note or over_note)


def _observe_turn(
    episode: Episode, outcomes: dict[int, ToolOutcome], services: Services, emit: Emit
) -> tuple[list[Observation], int | None]:
    """The turn's observations in call order, written into the context as tool messages
    (with the index of the last, which the usage marker ends, or None); reports the chunks each
    call added and pruned."""
    observations = observe(episode, episode.planned, outcomes, services.counter, services.reranker)
    last = tool_messages(episode, observations, services.counter)
    if episode.notice is not None:
        if last is not None:
            episode.append_text(last, episode.notice, services.counter)
        episode.notice = None
    turn = episode.turn
    for obs in observations:
        if obs.added:
            emit(
                ChunksAdded(
                    event="sift.chunks_added",
                    turn=turn,
                    tool=obs.planned.call.name,
                    argument=obs.planned.argument,
                    chunk_ids=obs.added,
                )
            )
        if obs.pruned:
            emit(
                ChunksPruned(
                    event="sift.chunks_pruned", turn=turn, chunk_ids=obs.pruned, by="policy"
                )
            )
    return observations, last


def _keep_within_budget(
    episode: Episode,
    last: int | None,
    calls: list[ToolCallTrace],
    services: Services,
    emit: Emit,
) -> str | None:
    """The budget is never crossed: prunes the lowest-value chunks, keeping room for what
    is still to be written this turn (usage marker, harness-prune note, over-budget message
    and their framing), and stops the episode when even that cannot fit. The turn's note,
    or None."""
    counter, limits = services.counter, episode.config
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
    forced = force_prune(episode, limits.budget_tokens - reserve, services.reranker)
    cannot_fit = episode.tokens_used > limits.budget_tokens - reserve
    note = None
    if forced:
        note = f"harness pruned {len(forced)} chunks to stay within the budget"
        calls.append(ToolCallTrace(tool="prune_chunks", arguments={"by": "harness"}, pruned=forced))
        emit(
            ChunksPruned(
                event="sift.chunks_pruned", turn=episode.turn, chunk_ids=forced, by="harness"
            )
        )
        if last is not None:
            episode.append_text(last, text.harness_pruned(len(forced)), counter)
    if cannot_fit:
        episode.stop(
            "budget", "the context cannot fit in the token budget even with every chunk pruned"
        )
        note = "over budget with nothing left to prune"
    return note


def _mark_usage(
    episode: Episode, last: int | None, counter: TokenCounter, emit: Emit
) -> str | None:
    """Ends the last observation with the usage marker and, past the threshold, adds the
    over-budget message; reports the tier. The note of an over-budget turn, or None."""
    limits = episode.config
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
    tier: Literal["ok", "over_threshold", "rejecting"] = "ok"
    note = None
    if over:
        tier = "rejecting" if total >= limits.rejection_tokens else "over_threshold"
        episode.over_budget_entry = episode.add_entry(
            "user", [text.over_budget_message(total, threshold, limits.rejection_tokens)], counter
        )
        note = f"over the threshold ({tier})"
    episode.note_peak()
    emit(
        TokenUsage(
            event="sift.token_usage",
            turn=episode.turn,
            used=episode.tokens_used,
            threshold=limits.threshold_tokens,
            rejection=limits.rejection_tokens,
            budget=limits.budget_tokens,
            tier=tier,
        )
    )
    return note


def _record_turn(episode: Episode, calls: list[ToolCallTrace], note: str | None) -> None:
    """Writes the turn's trace and counts; stops the episode after too many turns without
    a usable call, past its deadline, or out of turns."""
    planned = episode.planned
    episode.tool_calls += len(planned)
    episode.tool_turns += 1
    episode.trace.append(
        TurnTrace(
            turn=episode.turn,
            calls=calls,
            tokens_after=episode.tokens_used,
            wall_ms=episode.turn_ms(),
            note=note,
        )
    )
    failures = [p.failure for p in planned]
    if planned and all(failures):
        episode.failed_turns += 1
        if episode.stopped is None and episode.failed_turns >= episode.config.max_failed_turns:
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
