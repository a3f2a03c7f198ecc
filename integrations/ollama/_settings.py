"""Configuration of the Ollama policy, readable from the environment.

Every field reads `SIFT_OLLAMA_<FIELD>`; the host also reads Ollama's own `OLLAMA_HOST`
so that a machine already set up for the `ollama` CLI needs nothing more. `OllamaHost`
is the one reader of both host variables: the policy's settings extend it, and the
Ollama embedder reads its host through it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["OllamaHost", "OllamaSettings", "ThinkLevel"]

ThinkLevel = Literal["low", "medium", "high"]

# Model families whose chat template takes a reasoning level instead of a boolean
# (Ollama ignores `think: true` for them). Context-1 is fine-tuned from gpt-oss.
_LEVELLED_FAMILIES = ("gpt-oss", "gptoss", "context-1", "context1")


def takes_think_level(model: str, family: str | None = None) -> bool:
    name = model.lower()
    return any(f in name for f in _LEVELLED_FAMILIES) or (
        family is not None and family.lower() in _LEVELLED_FAMILIES
    )


class OllamaHost(BaseSettings):
    """Where Ollama listens: `SIFT_OLLAMA_HOST`, else `OLLAMA_HOST` (never a bare `HOST`)."""

    model_config = SettingsConfigDict(
        env_prefix="SIFT_OLLAMA_", extra="ignore", populate_by_name=True
    )

    host: str | None = Field(
        None,
        validation_alias=AliasChoices("SIFT_OLLAMA_HOST", "OLLAMA_HOST"),
        description="Ollama address; default http://127.0.0.1:11434.",
    )


class OllamaSettings(OllamaHost):
    """How sift talks to Ollama. Defaults suit gpt-oss:20b and the Context-1 build."""

    model: str = Field(
        "gpt-oss:20b",
        description="Ollama model name, e.g. gpt-oss:20b or maternion/context-1:20b-q4_K_M.",
    )
    think: ThinkLevel | bool | None = Field(
        None,
        description="Reasoning: low|medium|high for gpt-oss-family models (None: high, as "
        "Context-1 was trained), true/false for other thinking models (None: not sent).",
    )
    temperature: float = Field(1.0, ge=0.0, le=2.0, description="Sampling temperature.")
    rollout_temperature: float = Field(
        1.0, gt=0.0, le=2.0, description="Temperature of forked rollouts when the base is 0."
    )
    seed: int | None = Field(0, description="Sampling seed; None lets Ollama choose.")
    num_predict: int = Field(
        4096, ge=64, description="Most tokens the model may generate in one turn."
    )
    num_ctx: int | None = Field(
        None,
        ge=2048,
        description="Context window; never below budget + generation reserve (raised if so).",
    )
    template_reserve: int = Field(
        1536,
        ge=0,
        description="Tokens kept for the chat template and tool declarations, on top of "
        "the budget and num_predict, when sizing num_ctx.",
    )
    keep_alive: str | float | None = Field(
        "30m", description="How long Ollama keeps the model loaded after a call."
    )
    timeout: float = Field(
        300.0, gt=0, description="Seconds without any reply byte before a call fails."
    )
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to open a connection.")
    retries: int = Field(
        2, ge=0, le=10, description="Retries on connection errors, HTTP 5xx and 429."
    )
    backoff: float = Field(
        0.5, ge=0, description="First retry delay in seconds; doubles at each retry."
    )
    stream: bool = Field(
        True,
        description="Stream replies (NDJSON): the timeout then bounds silence, not the "
        "whole generation, so long thinking turns do not time out.",
    )
    constrained: bool | None = Field(
        None,
        description="Decode each reply against the JSON schema of a decision (Ollama's "
        "`format`): tool calls from the tool enum or a final list of the ids shown, no "
        "native tool calls. None (auto): on when the model has no tool-calling capability.",
    )
    token_mismatch_ratio: float = Field(
        2.0,
        gt=1.0,
        description="Warn when Ollama's prompt count and sift's estimate differ by more "
        "than this factor.",
    )

    @field_validator("think", mode="before")
    @classmethod
    def _parse_think(cls, value: object) -> object:
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in {"true", "on", "yes", "1"}:
                return True
            if lowered in {"false", "off", "no", "0", "none"}:
                return False
            if lowered in {"", "auto", "default"}:
                return None
            if lowered not in {"low", "medium", "high"}:
                raise ValueError(
                    f"think must be low, medium, high, true, false or auto; got {value!r}"
                )
            return lowered
        return value

    @field_validator("constrained", mode="before")
    @classmethod
    def _parse_constrained(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in {"", "auto", "default"}:
            return None
        return value

    def think_for(self, family: str | None = None) -> ThinkLevel | bool | None:
        """The `think` value to send for this model."""
        levelled = takes_think_level(self.model, family)
        if self.think is None:
            return "high" if levelled else None
        if levelled and isinstance(self.think, bool):
            # gpt-oss cannot switch reasoning off and ignores booleans: map to levels.
            return "high" if self.think else "low"
        if not levelled and isinstance(self.think, str):
            # Other thinking models (Qwen3, DeepSeek-R1) take a boolean only.
            return True
        return self.think

    def context_window(self, budget: int) -> int:
        floor = budget + self.num_predict + self.template_reserve
        return max(self.num_ctx or 0, floor)
