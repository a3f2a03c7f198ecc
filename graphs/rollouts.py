"""Independent rollouts of one question merged by reciprocal rank fusion (Context-1's
"4x": N runs fused by RRF; `HarnessConfig.rrf_k` and `top_k`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sift.config import HarnessConfig, from_environment
from sift.fusion import rrf_scores
from sift.types import Evidence, FoundBy, SearchResult, TurnTrace, Usage

__all__ = ["fork_policy", "merge_rollouts", "run_rollouts"]


def fork_policy(policy: Any, seed: int) -> Any:
    """`policy.fork(seed)` when the policy offers independent copies, else the policy."""
    fork = getattr(policy, "fork", None)
    return fork(seed) if callable(fork) else policy


def merge_rollouts(
    question: str,
    results: Sequence[SearchResult],
    *,
    rrf_k: int | None = None,
    top_k: int | None = None,
) -> SearchResult:
    """Fuses the rollouts' evidence lists by reciprocal rank fusion (`rrf_scores` with
    constant `rrf_k`, every rollout weighing 1). Provenance is the union; the justification is the
    one from the rollout that ranked the chunk best. Usage is summed (peak: the maximum)."""
    if not results:
        raise ValueError("merge_rollouts needs at least one rollout result")
    if rrf_k is None or top_k is None:
        # The run's settings decide; these are HarnessConfig's (environment included).
        settings = from_environment(HarnessConfig)
        rrf_k = settings.rrf_k if rrf_k is None else rrf_k
        top_k = settings.top_k if top_k is None else top_k
    fused = rrf_scores(((1.0, [e.chunk_id for e in r.evidence]) for r in results), rrf_k)
    best: dict[str, tuple[int, Evidence]] = {}
    provenance: dict[str, list[FoundBy]] = {}
    for result in results:
        for rank, item in enumerate(result.evidence, start=1):
            if item.chunk_id not in best or rank < best[item.chunk_id][0]:
                best[item.chunk_id] = (rank, item)
            merged = provenance.setdefault(item.chunk_id, [])
            merged += [f for f in item.found_by if f not in merged]
    order = sorted(fused, key=lambda c: (-fused[c], best[c][0], c))[:top_k]
    evidence = [
        best[c][1].model_copy(update={"score": round(fused[c], 6), "found_by": provenance[c]})
        for c in order
    ]
    trace: list[TurnTrace] = []
    for index, result in enumerate(results):
        trace += [
            t.model_copy(update={"note": f"rollout {index}" + (f": {t.note}" if t.note else "")})
            for t in result.trace
        ]
    turns = sum(r.usage.turns for r in results)
    calls = sum(r.usage.tool_calls for r in results)
    tool_turns = sum(
        round(r.usage.tool_calls / r.usage.calls_per_turn)
        for r in results
        if r.usage.calls_per_turn
    )
    usage = Usage(
        turns=turns,
        tool_calls=calls,
        calls_per_turn=round(calls / tool_turns, 3) if tool_turns else 0.0,
        peak_context_tokens=max(r.usage.peak_context_tokens for r in results),
        final_evidence_tokens=sum(r.usage.final_evidence_tokens for r in results) // len(results),
        prompt_tokens=sum(r.usage.prompt_tokens for r in results),
        completion_tokens=sum(r.usage.completion_tokens for r in results),
    )
    reasons = [r.stopped_because for r in results]
    # The merge is final when any rollout concluded; otherwise the first rollout's reason.
    stopped = "final" if "final" in reasons else reasons[0]
    errors = [r.error for r in results if r.error]
    flags = [f"rollouts:{len(results)}"]
    for result in results:
        flags += [f for f in result.flags if f not in flags]
    return SearchResult(
        question=question,
        evidence=evidence,
        trace=trace,
        usage=usage,
        stopped_because=stopped,
        error="; ".join(errors) if errors and stopped != "final" else None,
        flags=flags,
    )


async def run_rollouts(
    run_one: Callable[[int], Awaitable[SearchResult]],
    question: str,
    n: int,
    *,
    concurrency: int,
    rrf_k: int,
    top_k: int,
) -> SearchResult:
    """Runs `run_one(i)` for i in range(n), at most `concurrency` at a time, and merges."""
    gate = asyncio.Semaphore(concurrency)

    async def bounded(index: int) -> SearchResult:
        async with gate:
            return await run_one(index)

    results = await asyncio.gather(*(bounded(i) for i in range(n)))
    return merge_rollouts(question, results, rrf_k=rrf_k, top_k=top_k)
