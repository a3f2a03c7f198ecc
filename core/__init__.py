"""sift: an open agentic search harness for Context-1-style search models.

The public surface is small: the data types, the protocols, the errors, `sift.paths`
(where sift keeps its files) and `open_store` (a Corpus from a path or URL, found through
the `sift.stores` entry-point group). The harness entry points live in `sift.graphs`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from sift._lazy import lazy_names

__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "Condition",
    "ConfigurationError",
    "Corpus",
    "CorpusError",
    "Decision",
    "Document",
    "DocumentError",
    "Embedder",
    "Evidence",
    "Filter",
    "FinalDocument",
    "Hit",
    "IncompatibleStoreError",
    "InvalidFilterError",
    "InvalidPatternError",
    "InvalidQueryError",
    "MissingExtraError",
    "ModelNotFoundError",
    "ModelServerError",
    "NotAStoreError",
    "Policy",
    "PolicyView",
    "Reranker",
    "SearchResult",
    "SiftError",
    "StoreLockedError",
    "StoreUnavailableError",
    "TokenCounter",
    "ToolCall",
    "__version__",
    "open_store",
]


# Imported on first use (sift._lazy says why): `import sift` loads no pydantic model.
_ORIGINS = {
    "sift.errors": (
        "ConfigurationError",
        "CorpusError",
        "DocumentError",
        "IncompatibleStoreError",
        "InvalidFilterError",
        "InvalidPatternError",
        "InvalidQueryError",
        "MissingExtraError",
        "ModelNotFoundError",
        "ModelServerError",
        "NotAStoreError",
        "SiftError",
        "StoreLockedError",
        "StoreUnavailableError",
    ),
    "sift.filters": ("Condition", "Filter"),
    "sift.protocols": ("Corpus", "Embedder", "Policy", "Reranker", "TokenCounter"),
    "sift.types": (
        "Chunk",
        "Decision",
        "Document",
        "Evidence",
        "FinalDocument",
        "Hit",
        "PolicyView",
        "SearchResult",
        "ToolCall",
    ),
}

if TYPE_CHECKING:
    from sift.errors import (
        ConfigurationError,
        CorpusError,
        DocumentError,
        IncompatibleStoreError,
        InvalidFilterError,
        InvalidPatternError,
        InvalidQueryError,
        MissingExtraError,
        ModelNotFoundError,
        ModelServerError,
        NotAStoreError,
        SiftError,
        StoreLockedError,
        StoreUnavailableError,
    )
    from sift.filters import Condition, Filter
    from sift.protocols import Corpus, Embedder, Policy, Reranker, TokenCounter
    from sift.types import (
        Chunk,
        Decision,
        Document,
        Evidence,
        FinalDocument,
        Hit,
        PolicyView,
        SearchResult,
        ToolCall,
    )
else:
    __getattr__, __dir__ = lazy_names(__name__, _ORIGINS)


def open_store(location: str | os.PathLike[str] | None = None, **options: Any) -> Corpus:
    """Opens the Corpus at a location: a path (the embedded SQLite store; when absent it
    is made by the first write, and reading it before is NotAStoreError naming the path;
    `create=False` never makes one) or a URL such as `weaviate://host:8080?collection=Docs`.

    No location: `$SIFT_STORE` (a path or a URL), else `~/.sift/store` (see `sift.paths`).
    The back-end is the one registered for the location's scheme in the `sift.stores`
    entry-point group; an unknown scheme is a CorpusError listing the registered ones.
    """
    from sift._stores import open_location

    return open_location(location, **options)
