"""sift: an open agentic search harness for Context-1-style search models.

The public surface is small: the data types, the protocols, the errors, and the entry
points `open_store` (a Corpus from a path or URL). The harness entry points live in
`sift.graphs`.
"""

from __future__ import annotations

from sift.errors import (
    CorpusError,
    DocumentError,
    IncompatibleStoreError,
    InvalidPatternError,
    InvalidQueryError,
    ModelNotFoundError,
    ModelServerError,
    NotAStoreError,
    SiftError,
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

__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "Condition",
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
    "InvalidPatternError",
    "InvalidQueryError",
    "ModelNotFoundError",
    "ModelServerError",
    "NotAStoreError",
    "Policy",
    "PolicyView",
    "Reranker",
    "SearchResult",
    "SiftError",
    "StoreUnavailableError",
    "TokenCounter",
    "ToolCall",
    "__version__",
    "open_store",
]


def open_store(location: str | None = None, **options: object) -> Corpus:
    """Opens the Corpus at a path (embedded SQLite store) or a `weaviate://` URL."""
    from sift.integrations.stores import open_store as _open

    return _open(location, **options)
