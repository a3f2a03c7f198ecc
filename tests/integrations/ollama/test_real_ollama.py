"""Opt-in: a real episode against a real Ollama. Runs when OLLAMA_HOST is set and the
model (SIFT_OLLAMA_MODEL, default gpt-oss:20b) is there; skipped otherwise."""

from __future__ import annotations

import os

import pytest

from sift.graphs import HarnessConfig, asearch
from sift.integrations.ollama import OllamaPolicy

# Read at import: the suite's autouse fixture clears these for the wire tests.
HOST = os.environ.get("OLLAMA_HOST")
MODEL = os.environ.get("SIFT_OLLAMA_MODEL", "gpt-oss:20b")

pytestmark = [
    pytest.mark.ollama,
    pytest.mark.skipif(not HOST, reason="set OLLAMA_HOST to run against a real Ollama"),
]


def _has_model() -> bool:
    import ollama

    try:
        ollama.Client(host=HOST, timeout=5).show(MODEL)
    except Exception:
        return False
    return True


async def test_real_episode_finds_the_evidence(corpus):
    if not _has_model():
        pytest.skip(f"Ollama at {HOST} does not have {MODEL} (run `ollama pull {MODEL}`)")
    policy = OllamaPolicy(MODEL, host=HOST, timeout=600)
    try:
        result = await asearch(
            "Which volcano buried Pompeii?",
            corpus,
            policy=policy,
            config=HarnessConfig(max_turns=6),
        )
    finally:
        await policy.aclose()
    assert result.stopped_because in {"final", "max_turns"}, result.error
    assert result.usage.prompt_tokens > 0  # Ollama's exact counts reached the budget
    # Both documents name the volcano; a model that searched at all finds one of them.
    assert {"vesuvius", "pompeii"} & {e.doc_id for e in result.evidence}
