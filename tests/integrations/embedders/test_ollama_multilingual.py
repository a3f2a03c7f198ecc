"""A multilingual Ollama embedder (bge-m3) on Japanese, at the wire: a store built with it
embeds Japanese passages and questions over /api/embed and fuses its dense side into
hybrid search; an English Ollama model gets no say on a Japanese question unless the
configuration declares its languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift.integrations.embedders import covers, embedder_languages, get_embedder
from sift.integrations.ollama.testing import FakeOllama
from sift.integrations.stores.sqlite import SqliteCorpus

QUESTION = "日本で梅雨がないのは北海道とどこか。"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeOllama(models=["bge-m3", "nomic-embed-text"], embed_dim=96) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.host)
        monkeypatch.delenv("SIFT_OLLAMA_EMBED_LANGUAGES", raising=False)
        yield fake


def embedded(server: FakeOllama) -> list[list[str]]:
    return [r.body["input"] for r in server.requests if r.path == "/api/embed"]


def build(path: Path, embedder: str, sample) -> SqliteCorpus:
    store = SqliteCorpus(path, embedder=embedder)
    report = store.upsert([d for d in sample.documents if d.title == "梅雨"])
    assert not report.failed
    return store


def test_languages_of_ollama_models(server, monkeypatch) -> None:
    assert embedder_languages(get_embedder("ollama:bge-m3")) == frozenset({"*"})
    assert embedder_languages(get_embedder("ollama:bge-m3:567m")) == frozenset({"*"})
    assert embedder_languages(get_embedder("ollama:nomic-embed-text")) == frozenset({"en"})
    monkeypatch.setenv("SIFT_OLLAMA_EMBED_LANGUAGES", "ja, en")
    declared = embedder_languages(get_embedder("ollama:nomic-embed-text"))
    assert declared == frozenset({"ja", "en"}) and covers(declared, QUESTION)
    assert not covers(frozenset({"en"}), QUESTION) and covers(frozenset({"en"}), "Tokyo")
    assert not covers(frozenset({"zh"}), "ソウル") and covers(frozenset({"ko"}), "서울 漢字")


def test_bge_m3_embeds_japanese_and_hybrid_uses_it(server, tmp_path, japanese_sample) -> None:
    store = build(tmp_path / "m3", "ollama:bge-m3", japanese_sample)
    try:
        passages = [t for batch in embedded(server) for t in batch]
        assert any("小笠原諸島" in t for t in passages)  # Japanese passages went over the wire
        before = len(server.requests)
        hybrid = store.search(QUESTION, k=5, mode="hybrid")
        bm25 = store.search(QUESTION, k=5, mode="bm25")
        asked = [r.body["input"] for r in server.requests[before:] if r.path == "/api/embed"]
        assert asked == [[QUESTION]]  # the hybrid search embedded the question
        assert [h.score for h in hybrid] != pytest.approx([h.score for h in bm25])
        gold = japanese_sample.gold(QUESTION)
        assert gold in [h.chunk.doc_id for h in hybrid]
        dense = store.search(QUESTION, k=5, mode="dense")
        assert gold in [h.chunk.doc_id for h in dense]
    finally:
        store.close()


def test_an_english_model_is_left_out_of_japanese_hybrid_search(
    server, tmp_path, japanese_sample
) -> None:
    store = build(tmp_path / "nomic", "ollama:nomic-embed-text", japanese_sample)
    try:
        before = len(server.requests)
        hybrid = store.search(QUESTION, k=5, mode="hybrid")
        assert not [r for r in server.requests[before:] if r.path == "/api/embed"]
        bm25 = store.search(QUESTION, k=5, mode="bm25")
        assert [h.chunk.chunk_id for h in hybrid] == [h.chunk.chunk_id for h in bm25]
        # English questions still get the dense side.
        store.search("rainy season", k=5, mode="hybrid")
        assert embedded(server)[-1] == ["rainy season"]
    finally:
        store.close()
