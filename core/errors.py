"""Exceptions of sift. Every message says what was wrong and how to fix it."""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "CorpusError",
    "DocumentError",
    "IncompatibleStoreError",
    "IndexDamagedError",
    "InvalidFilterError",
    "InvalidPatternError",
    "InvalidQueryError",
    "MissingExtraError",
    "ModelNotFoundError",
    "ModelServerError",
    "NotAStoreError",
    "SiftError",
    "StoreDamagedError",
    "StoreFullError",
    "StoreLockedError",
    "StoreUnavailableError",
]


class SiftError(Exception):
    """Base class of every error sift raises on purpose."""


class InvalidQueryError(SiftError, ValueError):
    """A query is empty, too long, or otherwise unusable."""


class InvalidFilterError(SiftError, ValueError):
    """A metadata filter is malformed: an unknown operator, a value that is not a scalar,
    more conditions or values than a filter may hold. The message names the part."""


class InvalidPatternError(SiftError, ValueError):
    """A grep pattern is too long or not accepted by the linear-time regex engine."""


class ConfigurationError(SiftError, ValueError):
    """A setting or option names something that does not exist (an unknown embedder)."""


class MissingExtraError(SiftError, ImportError):
    """What was asked for needs an optional extra that is not installed; the message
    names the extra and the command that installs it."""


class CorpusError(SiftError):
    """A store operation failed."""


class StoreFullError(CorpusError):
    """The disk holding a store filled during a write: `stored` documents of that call
    were stored whole, none of the others. The message says so and what to do."""

    def __init__(self, message: str, stored: int) -> None:
        super().__init__(message)
        self.stored = stored


class NotAStoreError(CorpusError):
    """A path given as a store holds something that is not a sift store."""


class IncompatibleStoreError(CorpusError):
    """A store was written by a sift version whose schema this version cannot read."""


class StoreLockedError(CorpusError):
    """Another process is writing to the store: this write is refused before anything of
    it is stored. The message names the other writer where the store knows it."""


class IndexDamagedError(CorpusError):
    """An index derived from a store's SQLite file (BM25, vectors, grep's trigrams) is
    damaged or gone: bytes flipped on disk, files removed under a running process. A
    process that may write the store rebuilds it from SQLite; `kind` names it
    ("lexical", "vectors", "trigrams")."""

    def __init__(self, message: str, kind: str = "lexical") -> None:
        super().__init__(message)
        self.kind = kind

    def __reduce__(self) -> tuple[type[IndexDamagedError], tuple[str, str]]:
        # Crosses a pipe from a search process with its kind (the default pickling
        # would call __init__ with the message alone).
        return (type(self), (str(self), self.kind))


class StoreDamagedError(CorpusError):
    """A store's source of truth (its SQLite file) is damaged: restore it from a backup
    or index the documents again. (Damaged derived indexes are rebuilt, never this.)"""


class StoreUnavailableError(CorpusError):
    """A remote store (Weaviate) cannot be reached, or its collection is missing."""


class DocumentError(SiftError, ValueError):
    """An input document is malformed (missing id or text, bad metadata, ...)."""


class ModelServerError(SiftError):
    """The model server (Ollama) is unreachable, failed, or timed out."""


class ModelNotFoundError(ModelServerError):
    """The model server does not have the requested model."""
