"""The offline default embedder: a static (model2vec) model distilled from all-MiniLM-L6-v2.

A static model is a table of token vectors; a text's embedding is the mean of its tokens'
vectors. The files are model2vec's format (`model.safetensors`, `tokenizer.json`,
`config.json`) and `model2vec.StaticModel.from_pretrained` reads them too, but this module
reads them itself with safetensors and tokenizers: a local folder is all it ever touches
(model2vec's loader falls back to a hub download when a path is missing), and pooling all
texts of a batch in one numpy pass is faster than model2vec's per-length buckets.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["DEFAULT_MODEL_DIR", "StaticEmbedder"]

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "data" / "static-minilm"

# A static model has no sequence limit, so long chunks are embedded whole; the caps only
# bound the cost of a pathological input (a whole book passed as one text).
_MAX_TOKENS = 8192
_MAX_CHARS = _MAX_TOKENS * 8
# Texts handed to the tokenizer at once (it splits a batch over the cores).
_BATCH = 1024


class StaticEmbedder:
    """Mean of static token vectors, L2-normalised; `embed` of a text with no known token
    (the empty string, say) is the zero vector, which scores 0 against every query."""

    def __init__(self, path: str | Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(path) if path is not None else DEFAULT_MODEL_DIR
        files = {name: folder / name for name in ("config.json", "tokenizer.json")}
        files["model.safetensors"] = folder / "model.safetensors"
        missing = [name for name, file in files.items() if not file.is_file()]
        if missing:
            raise FileNotFoundError(
                f"static embedding model folder {folder} lacks {', '.join(missing)}; "
                "rebuild it with `python -m sift.integrations.embedders.distill --out DIR`"
            )
        self._config = json.loads(files["config.json"].read_text(encoding="utf-8"))
        tensors = load_file(str(files["model.safetensors"]))
        if "embeddings" not in tensors:
            raise ValueError(f"{files['model.safetensors']} has no 'embeddings' tensor")
        table = tensors["embeddings"].astype(np.float32)
        # model2vec's vocabulary-quantised models store shared rows plus a per-token
        # mapping and weight; expanding them once keeps `embed` a plain gather.
        if "mapping" in tensors:
            table = table[tensors["mapping"].astype(np.int64)]
        if "weights" in tensors:
            table = table * tensors["weights"].astype(np.float32)[:, None]
        self._table = np.ascontiguousarray(table)

        tokenizer = Tokenizer.from_file(str(files["tokenizer.json"]))
        tokenizer.no_padding()
        tokenizer.enable_truncation(_MAX_TOKENS)
        if tokenizer.get_vocab_size() != len(self._table):
            raise ValueError(
                f"tokenizer has {tokenizer.get_vocab_size()} tokens but the model "
                f"{len(self._table)} vectors; the folder {folder} mixes two models"
            )
        self._tokenizer = tokenizer
        unk = getattr(tokenizer.model, "unk_token", None)
        # Unknown tokens carry no meaning and would pull every text toward one vector.
        self._unk_id = tokenizer.token_to_id(unk) if unk else None
        self._encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)
        self._folder = folder

    @property
    def name(self) -> str:
        return "static"

    @property
    def languages(self) -> frozenset[str]:
        """Distilled from an English model: Japanese text is unknown tokens to it."""
        return frozenset({"en"})

    @property
    def model_id(self) -> str:
        """Which build of the static model this is (changes when the distillation does)."""
        return str(self._config.get("sift_model_id", "static-unknown"))

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not a single string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            batch = [str(t)[:_MAX_CHARS] for t in texts[start : start + _BATCH]]
            out[start : start + len(batch)] = self._pool(batch)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out /= norms
        return out

    def _pool(self, batch: list[str]) -> np.ndarray:
        pooled = np.zeros((len(batch), self.dim), dtype=np.float32)
        table, unk = self._table, self._unk_id
        # One small gather-and-sum per text stays in cache; gathering a whole batch into
        # one (tokens x dim) matrix first is several times slower (measured).
        for row, encoding in enumerate(self._encode(batch, add_special_tokens=False)):
            ids = np.asarray(encoding.ids, dtype=np.int64)
            if unk is not None:
                ids = ids[ids != unk]
            if ids.size:
                # The sum, not the mean: the caller L2-normalises, which divides it out.
                table.take(ids, axis=0).sum(axis=0, out=pooled[row])
        return pooled

    def __repr__(self) -> str:
        return f"StaticEmbedder({self._folder}, model_id={self.model_id!r}, dim={self.dim})"
