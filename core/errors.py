"""Exceptions of sift. Every message says what was wrong and how to fix it."""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "CorpusError",
    "DocumentError",
    "IncompatibleStoreError",
    "InvalidPatternError",
    "InvalidQueryError",
    "MissingExtraError",
    "ModelNotFoundError",
    "ModelServerError",
    "NotAStoreError",
    "SiftError",
    "StoreLockedError",
    "StoreUnavailableError",
]


class SiftError(Exception):
    """Base class of every error sift raises on purpose."""


class InvalidQueryError(SiftError, ValueError):
    """A query is empty, too long, or otherwise unusable."""


class InvalidPatternError(SiftError, ValueError):
    """A grep pattern is too long or not accepted by the linear-time regex engine."""


class ConfigurationError(SiftError, ValueError):
    """A setting or option names something that does not exist (an unknown embedder)."""


class MissingExtraError(SiftError, ImportError):
    """What was asked for needs an optional extra that is not installed; the message
    names the extra and the command that installs it."""


class CorpusError(SiftError):
    """A store operation failed."""


class NotAStoreError(CorpusError):
    """A path given as a store holds something that is not a sift store."""


class IncompatibleStoreError(CorpusError):
    """A store was written by a sift version whose schema this version cannot read."""


class StoreLockedError(CorpusError):
    """Another process is writing to the store: this write is refused before anything of
    it is stored. The message names the other writer where the store knows it."""


class StoreUnavailableError(CorpusError):
    """A remote store (Weaviate) cannot be reached, or its collection is missing."""


class DocumentError(SiftError, ValueError):
    """An input document is malformed (missing id or text, bad metadata, ...)."""


class ModelServerError(SiftError):
    """The model server (Ollama) is unreachable, failed, or timed out."""


class ModelNotFoundError(ModelServerError):
    """The model server does not have the requested model."""
