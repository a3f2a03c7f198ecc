"""A loopback Weaviate per test module, and a fresh collection per test."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sift.integrations.stores.weaviate import WeaviateCorpus, WeaviateSettings
from sift.integrations.stores.weaviate.testing import FakeWeaviate


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeWeaviate]:
    with FakeWeaviate() as server:
        yield server


@pytest.fixture
def open_corpus(fake: FakeWeaviate) -> Iterator[Callable[..., WeaviateCorpus]]:
    """Opens a corpus on the fake in a collection of its own; closes it afterwards."""
    made: list[WeaviateCorpus] = []
    collection = f"T{uuid.uuid4().hex[:10]}"
    fake.reject(None)

    def make(**options: Any) -> WeaviateCorpus:
        options.setdefault("embedder", "hash")
        fields = set(WeaviateSettings.model_fields)
        settings = {k: options.pop(k) for k in list(options) if k in fields}
        settings.setdefault("collection", collection)
        corpus = WeaviateCorpus(fake.settings(**settings), **options)
        made.append(corpus)
        return corpus

    yield make
    fake.reject(None)
    for corpus in made:
        corpus.close()
