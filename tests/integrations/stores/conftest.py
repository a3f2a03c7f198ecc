"""Fixtures for the store tests, parametrised over every Corpus backend.

`corpus_factory(name="main", **options)` returns an empty Corpus of the backend under
test; every test using it runs once per backend. Backends that need a server are skipped
when its address is not set.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sift.protocols import Corpus

CorpusFactory = Callable[..., Corpus]


def _sqlite_factory(tmp_path: Path) -> tuple[CorpusFactory, Callable[[], None]]:
    from sift.integrations.stores.sqlite import SqliteCorpus

    made: list[Corpus] = []

    def make(name: str = "main", **options: Any) -> Corpus:
        options.setdefault("embedder", "hash")
        corpus = SqliteCorpus(tmp_path / name, **options)
        made.append(corpus)
        return corpus

    def cleanup() -> None:
        for corpus in made:
            corpus.close()

    return make, cleanup


# Backends by name. The Weaviate engineer appends "weaviate" here: a factory creating a
# fresh collection per test at WEAVIATE_URL (skipped when unset) and dropping it after.
BACKENDS: dict[str, Callable[[Path], tuple[CorpusFactory, Callable[[], None]]]] = {
    "sqlite": _sqlite_factory,
}
# Backends whose factory needs an environment variable; skipped when it is unset.
REQUIRES_ENV: dict[str, str] = {"weaviate": "WEAVIATE_URL"}


def _weaviate_factory(tmp_path: Path) -> tuple[CorpusFactory, Callable[[], None]]:
    """A fresh collection per corpus at WEAVIATE_URL, dropped afterwards."""
    return _weaviate_at(os.environ["WEAVIATE_URL"])


def _weaviate_wire_factory(tmp_path: Path) -> tuple[CorpusFactory, Callable[[], None]]:
    """The same adapter against the loopback Weaviate (real client, real wire protocol)."""
    global _FAKE_WEAVIATE
    if _FAKE_WEAVIATE is None:
        import atexit

        from sift.integrations.stores.weaviate.testing import FakeWeaviate

        # One loopback server per test process; every corpus gets its own collection.
        _FAKE_WEAVIATE = FakeWeaviate().start()
        atexit.register(_FAKE_WEAVIATE.stop)
    return _weaviate_at(_FAKE_WEAVIATE.url())


_FAKE_WEAVIATE: Any = None


def _weaviate_at(url: str) -> tuple[CorpusFactory, Callable[[], None]]:
    import uuid

    from sift.integrations.stores.weaviate import WeaviateCorpus

    made: list[Any] = []
    # One collection per name, so that making "main" twice reopens the same corpus.
    names: dict[str, str] = {}

    def make(name: str = "main", **options: Any) -> Corpus:
        options.setdefault("embedder", "hash")
        collection = names.setdefault(name, f"SiftTest_{uuid.uuid4().hex[:12]}")
        options.setdefault("collection", collection)
        corpus = WeaviateCorpus.from_url(url, **options)
        made.append(corpus)
        return corpus

    def cleanup() -> None:
        for corpus in made:
            try:
                corpus.drop()
            finally:
                corpus.close()

    return make, cleanup


BACKENDS["weaviate"] = _weaviate_factory
BACKENDS["weaviate-wire"] = _weaviate_wire_factory


@pytest.fixture(params=sorted(BACKENDS))
def corpus_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CorpusFactory]:
    backend = request.param
    needed = REQUIRES_ENV.get(backend)
    if needed and not os.environ.get(needed):
        pytest.skip(
            f"the {backend} backend needs a real Weaviate: set {needed} "
            "(e.g. weaviate://localhost:8080?grpc=50051, see docs/weaviate.md)"
        )
    make, cleanup = BACKENDS[backend](tmp_path)
    try:
        yield make
    finally:
        cleanup()
