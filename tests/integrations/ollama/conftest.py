from __future__ import annotations

import pytest

from sift.integrations.ollama.testing import FakeOllama


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """Settings read the environment; a developer's own Ollama set-up must not leak in."""
    import os

    for name in list(os.environ):
        if name.startswith("SIFT_OLLAMA_") or name == "OLLAMA_HOST":
            monkeypatch.delenv(name)


@pytest.fixture
def server():
    with FakeOllama() as fake:
        yield fake
