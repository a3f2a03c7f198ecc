from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from sift.integrations.embedders import (
    DEFAULT_EMBEDDER,
    HashEmbedder,
    embedder_names,
    get_embedder,
)
from sift.integrations.embedders._static import StaticEmbedder
from sift.protocols import Embedder


def test_unknown_name_lists_the_valid_names() -> None:
    with pytest.raises(ValueError, match="unknown embedder 'bert'") as info:
        get_embedder("bert")
    for name in embedder_names():
        assert name in str(info.value)


def test_default_is_the_shipped_static_model() -> None:
    embedder = get_embedder()
    assert DEFAULT_EMBEDDER == "static"
    assert isinstance(embedder, StaticEmbedder)
    assert isinstance(embedder, Embedder)


@pytest.mark.parametrize(("name", "dim"), [("hash", 256), ("hash:64", 64)])
def test_hash_embedder_by_name(name: str, dim: int) -> None:
    embedder = get_embedder(name)
    assert isinstance(embedder, HashEmbedder)
    assert isinstance(embedder, Embedder)
    assert embedder.name == f"hash:{dim}"
    vectors = embedder.embed(["alpha beta", "alpha beta", "gamma"])
    assert vectors.shape == (3, dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(vectors[0], vectors[1])
    assert float(vectors[0] @ vectors[2]) < 0.99


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is not None,
    reason="checks the error without the minilm extra, which is installed here "
    "(pip uninstall sentence-transformers to run it)",
)
def test_minilm_without_its_extra_names_the_extra() -> None:
    with pytest.raises(ImportError, match=r"sift-harness\[minilm\]"):
        get_embedder("minilm")
