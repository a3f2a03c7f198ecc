"""The start node: checks the input, settles the run's settings, opens the episode."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime

from sift.config import HarnessConfig, check_question
from sift.errors import InvalidQueryError
from sift.filters import Filter
from sift.llm import task_prompt
from sift.nodes._episode import Episode
from sift.nodes._services import Services
from sift.nodes._state import EpisodeInput, EpisodeState
from sift.protocols import TokenCounter

__all__ = ["check_question", "new_episode", "run_settings", "start"]


def _positive(name: str, value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return value


def run_settings(
    default: HarnessConfig,
    context: object,
    configurable: Mapping[str, Any] | None,
    state: Mapping[str, Any],
) -> HarnessConfig:
    """The settings of one run: the runtime context (else the graph's), with the known
    keys of `configurable` over it, then the input's `max_turns` and `top_k`."""
    if isinstance(context, Mapping):
        context = default.merged(context)
    elif not isinstance(context, HarnessConfig):
        # No context, or a parent graph's own context type: the graph's settings apply.
        context = None
    settings = (context or default).merged(configurable)
    overrides: dict[str, int] = {}
    for key in ("max_turns", "top_k"):
        value = _positive(key, state.get(key))
        if value is not None:
            overrides[key] = value
    if overrides.get("max_turns", 0) > settings.max_turns_limit:
        raise ValueError(
            f"max_turns={overrides['max_turns']} is above HarnessConfig.max_turns_limit="
            f"{settings.max_turns_limit} (env SIFT_MAX_TURNS_LIMIT)"
        )
    return settings.merged(overrides)


def new_episode(
    question: Any, settings: HarnessConfig, counter: TokenCounter, *, filters: Any = None
) -> Episode:
    """A fresh episode whose context holds the task message."""
    question = check_question(question, settings.max_question_chars)
    episode = Episode(
        question=question,
        config=settings,
        filters=Filter.of(filters),
        top_k=settings.top_k,
        max_turns=settings.max_turns,
        deadline=(time.time() + settings.deadline_s) if settings.deadline_s else None,
    )
    episode.add_entry("user", [task_prompt(episode.question, episode.top_k)], counter)
    episode.note_peak()
    return episode


def start(
    state: EpisodeInput, runtime: Runtime[HarnessConfig], *, services: Services
) -> EpisodeState:
    """Opens the episode: the question checked, the run's settings settled, the task
    message in the context."""
    if "question" not in state:
        raise InvalidQueryError(
            "the sift graph's input has no 'question' key: give one, and a parent graph "
            "that calls sift as a node needs a 'question' key in its own state"
        )
    config = get_config()
    settings = run_settings(services.config, runtime.context, config.get("configurable"), state)
    limit = config.get("recursion_limit")
    needed = HarnessConfig.recursion_limit_for(settings.max_turns)
    if isinstance(limit, int) and limit < needed:
        raise ValueError(
            f"max_turns={settings.max_turns} needs a LangGraph recursion_limit of at least "
            f"{needed}, but this run has {limit}: raise HarnessConfig.recursion_limit "
            "(env SIFT_RECURSION_LIMIT) or pass recursion_limit in the run's config"
        )
    episode = new_episode(
        state.get("question"), settings, services.counter, filters=state.get("filters")
    )
    return EpisodeState(episode=episode, outcomes=None)  # type: ignore[typeddict-item]
