from __future__ import annotations

import pytest

from sift.integrations.ollama.testing import FakeOllama
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

DOCS = [
    Document(
        id="vesuvius",
        title="Mount Vesuvius",
        text="Mount Vesuvius is a volcano near Naples in Italy. It erupted in 79 AD "
        "and buried the Roman town of Pompeii.",
    ),
    Document(
        id="pompeii",
        title="Pompeii",
        text="Pompeii was a Roman town near Naples, buried under ash when Vesuvius erupted.",
    ),
    Document(
        id="etna",
        title="Mount Etna",
        text="Mount Etna is an active volcano on the island of Sicily.",
    ),
    Document(
        id="fuji",
        title="Mount Fuji",
        text="Mount Fuji is a volcano on Honshu and the highest mountain in Japan.",
    ),
    Document(
        id="danube",
        title="Danube",
        text="The Danube is a river of Central Europe that flows into the Black Sea.",
    ),
]


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


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A real embedded store (hash embedder) holding DOCS."""
    store = SqliteCorpus(tmp_path_factory.mktemp("ollama") / "store", embedder="hash")
    assert not store.upsert(DOCS).failed
    yield store
    store.close()
