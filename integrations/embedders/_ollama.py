"""Embeddings from an Ollama model over `/api/embed` (e.g. nomic-embed-text, bge-m3).

For users who already run Ollama and want a stronger embedder than the shipped static
one. Nothing is downloaded by sift: the model must be pulled with `ollama pull` first.
A multilingual model (bge-m3 for Japanese) declares its languages so that hybrid search
uses it on Japanese queries (see sift.integrations.embedders._languages).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import httpx
import numpy as np
import ollama
from ollama import ResponseError

from sift.errors import ModelNotFoundError, ModelServerError
from sift.integrations.ollama import RetryPolicy, describe_host

__all__ = ["OllamaEmbedder"]

log = logging.getLogger("sift.integrations.embedders")


class OllamaEmbedder:
    """An Embedder backed by Ollama's `/api/embed`: batched, with timeouts and retries.

    The dimension is learned from the first reply (one probe request when `dim` is read
    before anything was embedded). Vectors are L2-normalised here whatever the server does.
    """

    def __init__(
        self,
        model: str,
        host: str | None = None,
        *,
        batch_size: int = 64,
        timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 0.5,
        keep_alive: str | float | None = "30m",
        languages: str | Iterable[str] | None = None,
    ) -> None:
        if not model:
            raise ValueError(
                "an Ollama embedder needs a model name, e.g. 'ollama:nomic-embed-text'"
            )
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.model = model
        self.host = describe_host(host)
        self.batch_size = batch_size
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._retry = RetryPolicy(retries, backoff, self._log_retry)
        self.keep_alive = keep_alive
        self._client = ollama.Client(
            host=self.host, timeout=httpx.Timeout(timeout, connect=min(10.0, timeout))
        )
        self._dim: int | None = None
        from sift.integrations.embedders._languages import languages_of_model, parse_languages

        self._languages = (
            languages_of_model(model) if languages is None else parse_languages(languages)
        )

    @property
    def name(self) -> str:
        return f"ollama:{self.model}"

    @property
    def languages(self) -> frozenset[str]:
        """The model's languages: the `languages` option, `SIFT_OLLAMA_EMBED_LANGUAGES`,
        a known multilingual model (bge-m3, ...: "*"), else English."""
        return self._languages

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._embed_batch(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        out = np.concatenate(parts).astype(np.float32, copy=False)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def close(self) -> None:
        self._client.close()

    # ---------------------------------------------------------------- internals

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        response = self._call(texts)
        vectors = np.asarray(response.embeddings, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ModelServerError(
                f"Ollama at {self.host} returned {len(response.embeddings)} embeddings for "
                f"{len(texts)} texts (model {self.model!r}); is it an embedding model?"
            )
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise ModelServerError(
                f"Ollama model {self.model!r} changed dimension from {self._dim} to "
                f"{vectors.shape[1]}; a store needs one dimension"
            )
        return vectors

    def _call(self, texts: list[str]) -> ollama.EmbedResponse:
        try:
            return self._retry.call(
                lambda: self._client.embed(
                    model=self.model, input=texts, keep_alive=self.keep_alive
                )
            )
        except ResponseError as exc:
            if exc.status_code == 404:
                raise ModelNotFoundError(
                    f"Ollama at {self.host} does not have the embedding model "
                    f"{self.model!r}: run `ollama pull {self.model}`"
                ) from None
            raise ModelServerError(
                f"Ollama at {self.host} failed to embed with {self.model!r}: "
                f"{exc.error} (HTTP {exc.status_code})"
            ) from exc
        except httpx.TimeoutException as exc:
            raise ModelServerError(
                f"Ollama at {self.host} did not answer an embedding request within "
                f"{self.timeout:g} s (model {self.model!r}); raise the timeout or "
                f"lower batch_size ({self.batch_size})"
            ) from exc
        except (ConnectionError, httpx.TransportError) as exc:
            raise ModelServerError(
                f"cannot reach Ollama at {self.host} to embed with {self.model!r}: "
                f"is `ollama serve` running? Set OLLAMA_HOST to its address"
            ) from exc

    def _log_retry(self, exc: BaseException, number: int, delay: float) -> None:
        log.warning("Ollama embed at %s failed; retry %d in %.2f s", self.host, number, delay)
