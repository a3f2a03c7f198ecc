"""Rollouts kept apart: the fused result and each rollout's own, so a page can show both."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from sift.progress import OnEvent, ProgressEvent
from sift.types import SearchResult

if TYPE_CHECKING:
    from sift.graphs import HarnessConfig
    from sift.protocols import Corpus, Policy

__all__ = ["RolloutRun", "asearch_rollouts"]


@dataclass(frozen=True)
class RolloutRun:
    fused: SearchResult
    # Each rollout's own result, in rollout order; empty for a single episode.
    rollouts: list[SearchResult] = field(default_factory=list)


async def asearch_rollouts(
    question: str,
    corpus: Corpus,
    *,
    rollouts: int = 1,
    policy: Policy | None = None,
    config: HarnessConfig | None = None,
    filters: Any = None,
    top_k: int | None = None,
    on_event: OnEvent | None = None,
) -> RolloutRun:
    """`sift.graphs.asearch` that also returns each rollout's result.

    `asearch(rollouts=N)` returns only the fusion; a trace page shows the rollouts beside
    it. Each rollout is one `asearch` with the policy forked by its index (as `asearch`
    forks it), at most `config.rollout_concurrency` at a time, fused with the same
    reciprocal rank fusion (`config.rrf_k`). A deadline in `config` applies to each
    rollout on its own here, not to the whole call.
    """
    from sift import graphs
    from sift.graphs.rollouts import fork_policy

    settings = config if config is not None else graphs.HarnessConfig()
    if rollouts <= 1:
        result = await graphs.asearch(
            question,
            corpus,
            policy=policy,
            config=settings,
            filters=filters,
            top_k=top_k,
            on_event=on_event,
        )
        return RolloutRun(fused=result)
    if policy is None:
        from sift.graphs.policies import HeuristicPlanner

        policy = HeuristicPlanner()
    gate = asyncio.Semaphore(settings.rollout_concurrency)

    async def one(index: int) -> SearchResult:
        def listener(event: ProgressEvent) -> None:
            if on_event is not None:
                on_event(cast(ProgressEvent, {**event, "rollout": index}))

        async with gate:
            return await graphs.asearch(
                question,
                corpus,
                policy=fork_policy(policy, index),
                config=settings,
                filters=filters,
                top_k=top_k,
                on_event=listener if on_event is not None else None,
            )

    results = list(await asyncio.gather(*(one(i) for i in range(rollouts))))
    fused = graphs.merge_rollouts(
        question, results, rrf_k=settings.rrf_k, top_k=top_k or settings.top_k
    )
    return RolloutRun(fused=fused, rollouts=results)
