"""Opt-in: a real episode against a real Ollama. Runs when OLLAMA_HOST is set and the
model (SIFT_OLLAMA_MODEL, default gpt-oss:20b) is there; skipped otherwise."""

from __future__ import annotations

import os

import pytest

from sift.graphs import HarnessConfig, asearch
from sift.integrations.ollama import OllamaPolicy
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

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


async def test_real_episode_finds_the_evidence(tmp_path):
    if not _has_model():
        pytest.skip(f"Ollama at {HOST} does not have {MODEL} (run `ollama pull {MODEL}`)")
    store = SqliteCorpus(tmp_path / "store", embedder="hash")
    store.upsert(
        [
            Document(
                id="vesuvius",
                title="Mount Vesuvius",
                text="Mount Vesuvius is a volcano near Naples in Italy. It erupted in 79 AD "
                "and buried the Roman town of Pompeii.",
            ),
            Document(
                id="etna",
                title="Mount Etna",
                text="Mount Etna is an active volcano on the island of Sicily.",
            ),
            Document(
                id="danube",
                title="Danube",
                text="The Danube is a river of Central Europe that flows into the Black Sea.",
            ),
        ]
    )
    policy = OllamaPolicy(MODEL, host=HOST, timeout=600)
    try:
        result = await asearch(
            "Which volcano buried Pompeii?", store, policy=policy, config=HarnessConfig(max_turns=6)
        )
    finally:
        await policy.aclose()
        store.close()
    assert result.stopped_because in {"final", "max_turns"}, result.error
    assert result.usage.prompt_tokens > 0  # Ollama's exact counts reached the budget
    assert "vesuvius" in {e.doc_id for e in result.evidence}
