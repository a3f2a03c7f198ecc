from __future__ import annotations

from pathlib import Path

import pytest

from sift.integrations.stores._common import ALPHA_BY_EMBEDDER, DEFAULT_ALPHA, default_alpha
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
