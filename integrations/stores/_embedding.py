"""Embedding for the stores: every vector an embedder returns is checked (shape, finite
values) before anything is stored or searched with it, and hybrid search weighs the
dense side only for queries in a language the embedder covers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sift.protocols import Embedder

__all__ = ["dense_weight", "embed_query", "embed_texts"]


def embed_texts(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """One float32 row per text; ValueError when the embedder's answer is unusable."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    matrix = np.asarray(embedder.embed(texts), dtype=np.float32)
    if matrix.shape != (len(texts), embedder.dim):
        raise ValueError(
            f"embedder {embedder.name!r} returned shape {matrix.shape}, "
            f"expected ({len(texts)}, {embedder.dim})"
        )
    if not np.isfinite(matrix).all():
        raise ValueError(f"embedder {embedder.name!r} returned non-finite values")
    return matrix


def embed_query(embedder: Embedder, query: str, vector: np.ndarray | None) -> np.ndarray:
    """The query vector as float32 of the embedder's dimension, L2-normalised."""
    if vector is None:
        vec = embed_texts(embedder, [query])[0]
    else:
        vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != embedder.dim:
            raise ValueError(
                f"vector has {vec.shape[0]} dimensions but the store's embedder "
                f"{embedder.name!r} has {embedder.dim}"
            )
        if not np.isfinite(vec).all():
            raise ValueError("vector contains non-finite values")
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else vec


def dense_weight(embedder: Embedder, query: str, alpha: float) -> float:
    """The dense weight hybrid search gives `query`: `alpha`, or 0 when the query is
    written in a script none of the embedder's languages uses (an English embedder on a
    Japanese question): its vector would only pull the lexical ranking down."""
    from sift.integrations.embedders import covers, embedder_languages

    if alpha > 0.0 and not covers(embedder_languages(embedder), query):
        return 0.0
    return alpha
