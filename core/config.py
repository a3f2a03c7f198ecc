"""HarnessConfig: every number an episode obeys, documented once.

Read, in increasing precedence, from the defaults below, the environment (`SIFT_<FIELD>`,
e.g. `SIFT_MAX_TURNS=6`), the object passed to `build_graph`/`asearch`, and per run:
LangGraph's typed runtime context (`graph.invoke(input, context=HarnessConfig(...))`),
the `configurable` dict of the run's config (a compatibility path: LangGraph servers and
older callers pass settings there), and the input keys `max_turns` and `top_k`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sift.errors import InvalidQueryError
from sift.fusion import RRF_K
from sift.types import ConstrainedFinal, SearchMode

__all__ = ["HarnessConfig", "check_question", "from_environment"]

# A turn is three supersteps (policy, tools, budget); start and finalize come on top.
_STEPS_PER_TURN = 3
_STEPS_OUTSIDE_TURNS = 10


class HarnessConfig(BaseSettings):
    """The numbers of the Context-1 profile (DESIGN "Tools", "Budget tiers")."""

    model_config = SettingsConfigDict(env_prefix="SIFT_", extra="ignore", frozen=True)

    max_turns: int = Field(
        10, ge=1, le=1000, description="Policy steps per episode before it stops (max_turns)."
    )
    max_turns_limit: int = Field(
        100,
        ge=1,
        le=1000,
        description="Largest max_turns a single run may ask for (as input or context); "
        "the compiled graph's recursion limit is sized for it.",
    )
    recursion_limit: int | None = Field(
        None,
        ge=8,
        description="LangGraph recursion limit; None derives 3 * max(max_turns, "
        "max_turns_limit) + 10.",
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
    search_graph_weight: float = Field(
        0.0,
        ge=0,
        description="search_corpus over a corpus that keeps the entity graph fuses each "
        "search with a walk from the query's entities and the search's best hits, the "
        "walk's list weighing this in reciprocal rank fusion (0: off). Off by default: "
        "with the heuristic planner it lowered MuSiQue's all-gold@10 "
        "(benchmarks/results/entity_graph.md, 'search+graph'), whose final list already "
        "walks the graph of what it read; a model's episode is not measured yet.",
    )
    search_graph_seeds: int = Field(
        3, ge=0, description="A search's best hits that seed search_corpus's graph walk."
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
    reserve_per_call_tokens: int = Field(
        48,
        ge=0,
        description="Budget kept back per tool call of a turn for its framing (call "
        "header, blank lines) when the turn's result caps are shared out.",
    )
    reserve_per_turn_tokens: int = Field(
        160,
        ge=0,
        description="Budget kept back per turn for the usage marker and the over-budget "
        "message when the turn's result caps are shared out.",
    )
    reserve_slack_tokens: int = Field(
        24,
        ge=0,
        description="Extra tokens kept below the budget when the harness prunes itself, on "
        "top of the notices it still has to write that turn.",
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
    seed_search: bool = Field(
        False,
        description="The episode's first step is the harness's own: search_corpus with the "
        "question as written, shown to the policy as its first call and its results. For "
        "small models whose own first queries miss what a plain search finds "
        "(benchmarks/results/real_model.md); it uses one of max_turns.",
    )
    keep_plain_search: bool = Field(
        True,
        description="The evidence keeps what one plain search of the question (the "
        "store's own hybrid weight, as single_shot runs it) ranks high: plain_first, "
        "plain_keep and plain_fill (issue 44; docs/decisions/0018). Off: the policy's "
        "list alone.",
    )
    plain_first: int = Field(
        1,
        ge=0,
        description="The first chunks of one plain search of the question (the store's "
        "own hybrid weight, as single_shot runs it) lead the evidence unless the policy "
        "pruned them: an episode is never below one search at rank 1 (issue 44; 0: "
        "off). The harness runs that search when the episode's own search of the "
        "question was not the plain one.",
    )
    plain_keep: int = Field(
        2,
        ge=0,
        description="The first chunks of that plain search stay within the first "
        "plain_keep_within evidence items (taking the last places there when the policy "
        "ranked them lower or not at all), unless the policy pruned them (0: off).",
    )
    plain_keep_within: int = Field(10, ge=1, description="See plain_keep.")
    plain_fill: bool = Field(
        True,
        description="Evidence shorter than top_k ends with that plain search's next "
        "chunks (flag plain_search_filled:N): an episode that stopped early gives as "
        "much as one search would.",
    )
    fill_final_list: bool = Field(
        False,
        description="When a policy's final list names fewer than top_k chunks, the places "
        "left go to the chunks still in its context that it did not name, in the fallback "
        "ranking; the result's flags say how many (final_list_filled:N). For small models "
        "that stop at one document (benchmarks/results/real_model.md); off by default, as "
        "a trained searcher's list is its answer.",
    )
    constrained_final: ConstrainedFinal = Field(
        "grades",
        description="How a policy in constrained mode (`constrained=True`) writes its final "
        "answer. grades: a grade for every chunk id its context shows (2 states part of "
        "the answer, 1 about the question, 0 not about it), the list ordered by grade, "
        "ties in the order shown; a schema cannot forbid a repeated id in a list, and "
        "asked for top_k ids a small model repeats them. list: 1 to top_k ids, a shorter "
        "reply. The 1.5B's own list held all gold for 24 of 38 questions graded, as "
        "single-shot, against 15 as a list; its grades followed the order shown "
        "(decision 0025, benchmarks/results/real_model.md).",
    )
    single_shot_graph_weight: float = Field(
        1.0,
        ge=0,
        description="single_shot over a corpus that keeps the entity graph "
        "(SqliteCorpus(entity_graph=True)) fuses its search with a walk from the "
        "question's entities and the search's best hits, the walk's list weighing this "
        "in reciprocal rank fusion (0: the search alone). Dev-set all-gold@10 of hybrid "
        "top 30: HotpotQA 0.82 to 0.93, MuSiQue 0.23 to 0.38, 2Wiki 0.43 to 0.82, JSQuAD "
        "hit@10 0.983 to 0.990 (benchmarks/results/entity_graph.md).",
    )
    single_shot_graph_seeds: int = Field(
        3, ge=0, description="The search's best hits that seed single_shot's graph walk."
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
    store_threads: int = Field(
        8,
        ge=1,
        le=256,
        description="Worker threads a graph owns for its store calls. A store call that "
        "outlives the deadline keeps its thread; bounded here, it never takes threads "
        "from the rest of the process.",
    )
    fallback_rrf_k: int = Field(
        RRF_K,
        ge=1,
        description="Rank fusion constant of the fallback ranking (surfacing order fused "
        "with relevance) used when an episode ends without a final list.",
    )
    rerank_k1: float = Field(
        1.2, ge=0, description="BM25 k1 of the default no-model reranker (term saturation)."
    )
    rerank_b: float = Field(
        0.75, ge=0, le=1, description="BM25 b of the default no-model reranker (length norm)."
    )
    rollout_concurrency: int = Field(4, ge=1, le=64, description="Rollouts run at once.")
    rrf_k: int = Field(RRF_K, ge=1, description="Reciprocal rank fusion constant of rollouts.")

    @model_validator(mode="after")
    def _tiers_in_order(self) -> HarnessConfig:
        if not self.threshold_tokens <= self.rejection_tokens <= self.budget_tokens:
            raise ValueError(
                "token tiers must satisfy threshold_tokens <= rejection_tokens <= budget_tokens"
                f"; got {self.threshold_tokens}, {self.rejection_tokens}, {self.budget_tokens}"
            )
        # Below the smallest tool result the harness lets a call return, with its framing
        # and the turn's notices, the very first call is over the threshold: every episode
        # would be "over budget" from its first step.
        reserves = self.reserve_per_call_tokens + self.reserve_per_turn_tokens
        smallest = self.min_call_tokens + reserves
        if self.threshold_tokens < smallest:
            raise ValueError(
                f"threshold_tokens {self.threshold_tokens} is below the size of one tool "
                f"result ({smallest} tokens: min_call_tokens {self.min_call_tokens} plus "
                f"reserve_per_call_tokens {self.reserve_per_call_tokens} and "
                f"reserve_per_turn_tokens {self.reserve_per_turn_tokens}); use at least "
                f"{smallest}"
            )
        return self

    @property
    def effective_recursion_limit(self) -> int:
        turns = max(self.max_turns, self.max_turns_limit)
        return self.recursion_limit or self.recursion_limit_for(turns)

    @staticmethod
    def recursion_limit_for(max_turns: int) -> int:
        """The LangGraph recursion limit an episode of `max_turns` turns needs."""
        return _STEPS_PER_TURN * max_turns + _STEPS_OUTSIDE_TURNS

    def merged(self, overrides: Mapping[str, Any] | None) -> HarnessConfig:
        """A copy with the known fields of `overrides` (validated); other keys are ignored,
        so a LangGraph `configurable` dict may carry unrelated settings."""
        if not overrides:
            return self
        known = {k: v for k, v in overrides.items() if k in type(self).model_fields}
        if not known:
            return self
        return type(self).model_validate({**self.model_dump(), **known})


SettingsT = TypeVar("SettingsT", bound=BaseSettings)

_FROM_ENVIRONMENT: dict[tuple[type, tuple[tuple[str, str], ...]], Any] = {}
_FROM_ENVIRONMENT_LOCK = threading.Lock()


def from_environment(cls: type[SettingsT]) -> SettingsT:
    """`cls()`, the settings of the environment, built once for each distinct set of
    `SIFT_*` variables and shared: the settings are frozen, and reading the environment
    into them costs 1-2 ms, which every episode paid for two of them (and a single-shot
    search of 2.6 ms, most of its time). A changed variable gives new settings at once;
    a bad one raises, as `cls()` does, every time."""
    # pydantic-settings matches names case-insensitively: `sift_max_turns` counts too.
    key = (cls, tuple(sorted((k, v) for k, v in os.environ.items() if k[:5].upper() == "SIFT_")))
    found = _FROM_ENVIRONMENT.get(key)
    if found is None:
        found = cls()
        with _FROM_ENVIRONMENT_LOCK:
            if len(_FROM_ENVIRONMENT) >= 64:  # environments that keep changing (tests)
                _FROM_ENVIRONMENT.clear()
            _FROM_ENVIRONMENT[key] = found
    return found


def _shown(text: str) -> str:
    """The text quoted for a one-line message, cut short: it may be any length."""
    return repr(text if len(text) <= 40 else text[:39] + "…")


def check_question(question: object, limit: int) -> str:
    """The question, stripped; empty, non-text, over-long questions and questions with
    no searchable word (`sift.text.has_searchable_word`) are clear errors (`limit`
    is `HarnessConfig.max_question_chars`)."""
    if not isinstance(question, str) or not question.strip():
        raise InvalidQueryError("the question is empty")
    text = question.strip()
    if len(text) > limit:
        raise InvalidQueryError(
            f"the question is {len(text):,} characters long; the limit is {limit:,} "
            "(HarnessConfig.max_question_chars, env SIFT_MAX_QUESTION_CHARS)"
        )
    # Here, not at the top: the analysis module loads the stemmers, which `sift --help`
    # and the settings alone do not need.
    from sift.text import has_searchable_word

    if not has_searchable_word(text):
        raise InvalidQueryError(
            f"the question {_shown(text)} has no word to search for (only punctuation, "
            "symbols or spaces); ask with at least one word"
        )
    return text
