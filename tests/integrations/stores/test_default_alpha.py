from __future__ import annotations

from pathlib import Path

import pytest

from sift.fusion import ALPHA_BY_EMBEDDER, DEFAULT_ALPHA, default_alpha
from sift.integrations.stores.sqlite import SqliteCorpus


def test_tuned_alphas_belong_to_their_embedders() -> None:
    assert default_alpha("static") == ALPHA_BY_EMBEDDER["static"] < DEFAULT_ALPHA
    assert default_alpha("minilm") == ALPHA_BY_EMBEDDER["minilm"]
    assert default_alpha("ollama:nomic-embed-text") == DEFAULT_ALPHA


def test_store_takes_its_embedders_alpha_unless_told(tmp_path: Path) -> None:
    with SqliteCorpus(tmp_path / "s", embedder="hash") as corpus:
        assert corpus.stats().extra["alpha"] == default_alpha("hash:256")
    # Reopened without naming the embedder: the recorded one decides the alpha.
    with SqliteCorpus(tmp_path / "s", alpha=0.25) as corpus:
        assert corpus.stats().extra["alpha"] == 0.25
    with pytest.raises(ValueError, match="alpha"):
        SqliteCorpus(tmp_path / "s", alpha=1.5)


def test_per_call_alpha_spans_bm25_to_dense(tmp_path: Path) -> None:
    from sift.types import Document

    with SqliteCorpus(tmp_path / "s", embedder="hash") as corpus:
        corpus.upsert(
            Document(id=f"d{i}", title=f"T{i}", text=text)
            for i, text in enumerate(
                [
                    "granite quarry near the river",
                    "the river delta floods in spring",
                    "quarry workers strike for pay",
                    "spring flowers by the granite wall",
                    "a delta of sediment and granite",
                    "pay rise for river pilots",
                ]
            )
        )
        query = "granite river"

        def ids(hits: list) -> list[str]:
            return [h.chunk.chunk_id for h in hits]

        assert ids(corpus.search(query, k=4, alpha=0.0)) == ids(
            corpus.search(query, k=4, mode="bm25")
        )
        assert ids(corpus.search(query, k=4, alpha=1.0)) == ids(
            corpus.search(query, k=4, mode="dense")
        )
        with pytest.raises(ValueError, match="alpha"):
            corpus.search(query, alpha=-0.1)
