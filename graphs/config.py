"""HarnessConfig: every limit of an episode, documented once.

Read, in increasing precedence, from the defaults below, the environment (`SIFT_<FIELD>`,
e.g. `SIFT_MAX_TURNS=6`), the object passed to `build_graph`/`asearch`, and LangGraph's
runnable config (`config={"configurable": {"max_turns": 6}}`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sift.types import SearchMode

__all__ = ["HarnessConfig"]


class HarnessConfig(BaseSettings):
    """The numbers of the Context-1 profile (DESIGN "Tools", "Budget tiers")."""

    model_config = SettingsConfigDict(env_prefix="SIFT_", extra="ignore", frozen=True)

    max_turns: int = Field(
        10, ge=1, le=1000, description="Policy steps per episode before it stops (max_turns)."
    )
    recursion_limit: int | None = Field(
        None, ge=8, description="LangGraph recursion limit; None derives 3*max_turns+10."
    )
    top_k: int = Field(30, ge=1, le=1000, description="Evidence items in the final result.")
    max_question_chars: int = Field(
        2000, ge=1, description="Longest question accepted; a longer one is a clear error."
    )
    search_mode: SearchMode = Field("hybrid", description="Store search mode of search_corpus.")
    search_alpha: float | None = Field(
        0.5,
        ge=0,
        le=1,
        description="Hybrid weight of dense scores in search_corpus; None "
        "uses the store's default. The harness's short entity sub-queries gain from more "
        "dense weight than a whole question does: planner all-gold@10 on MuSiQue 0.405 at "
        "0.5 against 0.372 at the static store's 0.1 (benchmarks/results/planner_quality.md).",
    )
    search_max_chunks: int = Field(10, ge=1, le=100, description="Chunks per search_corpus.")
    grep_max_hits: int = Field(5, ge=1, le=100, description="Chunks per grep_corpus.")
    call_token_cap: int = Field(
        4096,
        ge=16,
        description="Token cap of one search/grep/read result (shrinks when the budget is tight).",
    )
    min_call_tokens: int = Field(
        128,
        ge=1,
        description="Below this share of the remaining budget a search/grep/read "
        "is refused with an error observation.",
    )
    threshold_tokens: int = Field(
        16384, ge=1, description="Above it the over-budget message asks to prune or conclude."
    )
    rejection_tokens: int = Field(
        24576, ge=1, description="From it every tool but prune_chunks answers an error."
    )
    budget_tokens: int = Field(
        32768, ge=1, description="Never crossed: the harness prunes or concludes itself."
    )
    message_overhead_tokens: int = Field(
        4, ge=0, description="Tokens charged per chat message for role and framing."
    )
    max_failed_turns: int = Field(
        3,
        ge=1,
        description="Consecutive turns with only failing calls (or policy errors) "
        "that end the episode with stopped_because 'error' (or 'budget').",
    )
    deadline_s: float | None = Field(
        None,
        gt=0,
        description="Wall-clock seconds per episode; then it concludes with what "
        "it has (stopped_because 'deadline'). None: no deadline.",
    )
    rollout_concurrency: int = Field(4, ge=1, le=64, description="Rollouts run at once.")
    rrf_k: int = Field(60, ge=1, description="Reciprocal rank fusion constant of rollouts.")

    @model_validator(mode="after")
    def _tiers_in_order(self) -> HarnessConfig:
        if not self.threshold_tokens <= self.rejection_tokens <= self.budget_tokens:
            raise ValueError(
                "token tiers must satisfy threshold_tokens <= rejection_tokens <= budget_tokens"
                f"; got {self.threshold_tokens}, {self.rejection_tokens}, {self.budget_tokens}"
            )
        return self

    @property
    def effective_recursion_limit(self) -> int:
        # A turn is three supersteps (policy, tools, collect); plus start and finalize.
        return self.recursion_limit or 3 * self.max_turns + 10

    def merged(self, overrides: Mapping[str, Any] | None) -> HarnessConfig:
        """A copy with the known fields of `overrides` (validated); other keys are ignored,
        so a LangGraph `configurable` dict may carry unrelated settings."""
        if not overrides:
            return self
        known = {k: v for k, v in overrides.items() if k in type(self).model_fields}
        if not known:
            return self
        return type(self).model_validate({**self.model_dump(), **known})
