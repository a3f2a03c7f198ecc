"""The Ollama embedder against a loopback server speaking Ollama's /api/embed."""

from __future__ import annotations

import numpy as np
import pytest

from sift.errors import ModelNotFoundError, ModelServerError
from sift.integrations.embedders import get_embedder
from sift.integrations.embedders._ollama import OllamaEmbedder
from sift.integrations.ollama.testing import FakeOllama, Fault, refused_host
from sift.protocols import Embedder


@pytest.fixture
def server():
    with FakeOllama(models=["nomic-embed-text"], embed_dim=48) as fake:
        yield fake


def test_batches_requests_and_returns_normalised_vectors_in_order(server):
    embedder = OllamaEmbedder("nomic-embed-text", host=server.host, batch_size=2, timeout=60.0)
    texts = ["alpha beta", "gamma", "delta epsilon", "alpha beta", "zeta"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (5, 48) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(vectors[0], vectors[3])  # same text, same vector
    assert not np.allclose(vectors[0], vectors[1])
    bodies = [r.body for r in server.requests if r.path == "/api/embed"]
    assert [b["input"] for b in bodies] == [texts[0:2], texts[2:4], texts[4:5]]
    assert {b["model"] for b in bodies} == {"nomic-embed-text"}
    embedder.close()


def test_registered_by_name_and_meets_the_protocol(server, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", server.host)
    embedder = get_embedder("ollama:nomic-embed-text", timeout=60.0)
    assert isinstance(embedder, Embedder)
    assert embedder.name == "ollama:nomic-embed-text"
    assert embedder.dim == 48  # learned with one probe request
    assert embedder.embed([]).shape == (0, 48)
    assert len([r for r in server.requests if r.path == "/api/embed"]) == 1


def test_the_host_is_read_as_the_policy_reads_it(server, monkeypatch):
    # SIFT_OLLAMA_HOST wins over Ollama's own OLLAMA_HOST, for the embedder as for the policy.
    monkeypatch.setenv("OLLAMA_HOST", refused_host())
    monkeypatch.setenv("SIFT_OLLAMA_HOST", server.host)
    embedder = get_embedder("ollama:nomic-embed-text", timeout=60.0, retries=0)
    assert embedder.host == server.host
    assert embedder.embed(["富士山 Fuji"]).shape == (1, 48)


def test_missing_model_names_ollama_pull(server):
    embedder = OllamaEmbedder("mxbai-embed-large", host=server.host, timeout=60.0)
    with pytest.raises(ModelNotFoundError, match="`ollama pull mxbai-embed-large`"):
        embedder.embed(["x"])


def test_unreachable_server_names_the_host():
    host = refused_host()
    embedder = OllamaEmbedder("nomic-embed-text", host=host, timeout=60.0, retries=1, backoff=0.01)
    with pytest.raises(ModelServerError, match=f"cannot reach Ollama at {host}"):
        embedder.embed(["x"])


def test_server_errors_are_retried_then_reported(server):
    server.embed_faults.extend([Fault(status=503, error="loading"), Fault(status=500, error="oom")])
    embedder = OllamaEmbedder("nomic-embed-text", host=server.host, timeout=60.0, backoff=0.01)
    assert embedder.embed(["x"]).shape == (1, 48)  # third try succeeds
    server.embed_faults.extend([Fault(status=500, error="oom")] * 3)
    with pytest.raises(ModelServerError, match="oom"):
        embedder.embed(["x"])


def test_slow_server_times_out_with_a_hint(server):
    server.embed_faults.append(Fault(delay=30.0))  # far past the timeout, even loaded
    embedder = OllamaEmbedder("nomic-embed-text", host=server.host, timeout=0.2)
    with pytest.raises(ModelServerError, match=r"within 0\.2 s"):
        embedder.embed(["x"])


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="model name"):
        OllamaEmbedder("")
    with pytest.raises(ValueError, match="batch_size"):
        OllamaEmbedder("m", batch_size=0)
    with pytest.raises(TypeError, match="sequence of texts"):
        OllamaEmbedder("m").embed("one string")
