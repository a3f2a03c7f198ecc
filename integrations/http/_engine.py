"""Runs searches for the HTTP faces: the harness (agentic) or single-shot retrieval, always
inside a deadline, never raising for slowness.

The harness concludes by itself at `HarnessConfig.deadline_s` with the evidence it has;
should it overrun by more than the grace period, the service answers with a single-shot
search instead (flagged `deadline_fallback`), because Dify retries 5xx and timeouts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from sift.errors import InvalidPatternError, InvalidQueryError, ModelServerError
from sift.filters import Filter
from sift.integrations.http._errors import INVALID_REQUEST, UNAVAILABLE, ApiError
from sift.protocols import Corpus, Policy
from sift.types import SearchResult

__all__ = ["PolicyName", "SearchPlan", "run_search"]

log = logging.getLogger("sift.http")

PolicyName = Literal["heuristic", "ollama"]


@dataclass(frozen=True, kw_only=True)
class SearchPlan:
    """Everything one search needs, resolved from request + collection + server settings."""

    question: str
    mode: Literal["agentic", "single_shot"]
    top_k: int
    filters: Filter | None
    deadline_s: float
    grace_s: float
    policy: PolicyName = "heuristic"
    rollouts: int = 1
    config: dict[str, Any] = field(default_factory=dict)


def _policy(name: PolicyName) -> Policy | None:
    if name == "heuristic":
        return None  # the harness's default: the no-model planner
    from sift.integrations.ollama import policy_from_settings

    return policy_from_settings()


def _single_shot(plan: SearchPlan, corpus: Corpus) -> SearchResult:
    from sift import graphs

    return graphs.single_shot(
        plan.question, corpus, top_k=plan.top_k, mode="hybrid", filters=plan.filters
    )


async def _agentic(
    plan: SearchPlan, corpus: Corpus, on_event: Callable[[dict[str, Any]], Any] | None
) -> SearchResult:
    from sift import graphs

    try:
        config = graphs.HarnessConfig(**{**plan.config, "deadline_s": plan.deadline_s})
    except ValueError as exc:
        raise ApiError(422, INVALID_REQUEST, f"invalid harness configuration: {exc}") from None
    return await graphs.asearch(
        plan.question,
        corpus,
        policy=_policy(plan.policy),
        config=config,
        filters=plan.filters,
        top_k=plan.top_k,
        rollouts=plan.rollouts,
        on_event=on_event,
    )


async def run_search(
    plan: SearchPlan,
    corpus: Corpus,
    *,
    on_event: Callable[[dict[str, Any]], Any] | None = None,
) -> SearchResult:
    """The search's result; bad input is a 422, an unreachable model server a 503."""
    try:
        if plan.mode == "single_shot":
            # asyncio's thread hand-off can be abandoned at the timeout (anyio's waits).
            return await asyncio.wait_for(
                asyncio.to_thread(_single_shot, plan, corpus), plan.deadline_s + plan.grace_s
            )
        try:
            return await asyncio.wait_for(
                _agentic(plan, corpus, on_event), plan.deadline_s + plan.grace_s
            )
        except TimeoutError:
            log.warning(
                "harness overran its %.1f s deadline; answering single-shot", plan.deadline_s
            )
            result = await asyncio.to_thread(_single_shot, plan, corpus)
            result = result.model_copy(
                update={
                    "stopped_because": "deadline",
                    "flags": [*result.flags, "deadline_fallback"],
                }
            )
            return result
    except TimeoutError:
        # Even single-shot overran (a stalled store): an empty answer, not a 5xx.
        return SearchResult(
            question=plan.question,
            mode=plan.mode,
            stopped_because="deadline",
            flags=["deadline_empty"],
        )
    except (InvalidQueryError, InvalidPatternError) as exc:
        raise ApiError(422, INVALID_REQUEST, str(exc)) from None
    except ModelServerError as exc:
        raise ApiError(503, UNAVAILABLE, f"the model server is unavailable: {exc}") from None
