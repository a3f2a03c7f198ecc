"""Exceptions of sift. Every message says what was wrong and how to fix it."""

from __future__ import annotations

__all__ = [
    "CorpusError",
    "DocumentError",
    "IncompatibleStoreError",
    "InvalidPatternError",
    "InvalidQueryError",
    "ModelNotFoundError",
    "ModelServerError",
    "NotAStoreError",
    "SiftError",
    "StoreUnavailableError",
]


class SiftError(Exception):
    """Base class of every error sift raises on purpose."""


class InvalidQueryError(SiftError, ValueError):
    """A query is empty, too long, or otherwise unusable."""


class InvalidPatternError(SiftError, ValueError):
    """A grep pattern is too long or not accepted by the linear-time regex engine."""


class CorpusError(SiftError):
    """A store operation failed."""


class NotAStoreError(CorpusError):
    """A path given as a store holds something that is not a sift store."""


class IncompatibleStoreError(CorpusError):
    """A store was written by a sift version whose schema this version cannot read."""


class StoreUnavailableError(CorpusError):
    """A remote store (Weaviate) cannot be reached, or its collection is missing."""


class DocumentError(SiftError, ValueError):
    """An input document is malformed (missing id or text, bad metadata, ...)."""


class ModelServerError(SiftError):
    """The model server (Ollama) is unreachable, failed, or timed out."""


class ModelNotFoundError(ModelServerError):
    """The model server does not have the requested model."""
