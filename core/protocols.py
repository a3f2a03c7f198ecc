"""The protocols nodes depend on; integrations implement them (DESIGN "Rule of the house")."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

    from sift.entities import WalkResult
    from sift.filters import Filter
    from sift.types import (
        Chunk,
        CorpusStats,
        Decision,
        Document,
        GrepResult,
        Hit,
        PolicyView,
        SearchMode,
        UpsertReport,
    )

__all__ = ["Corpus", "Embedder", "EntityGraphCorpus", "Policy", "Reranker", "TokenCounter"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    Optional: a `releases_gil` attribute, True when `embed` runs mostly without the GIL
    (so the embedded store's ingest thread embeds beside its writer in parallel)."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class Reranker(Protocol):
    """Scores chunks against a query; higher is more relevant."""

    def rerank(self, query: str, chunks: Sequence[Chunk]) -> list[float]: ...


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens of rendered text. Estimates must never undercount."""

    def count(self, text: str) -> int: ...


@runtime_checkable
class Corpus(Protocol):
    """A searchable collection of chunked documents.

    Every method is synchronous and thread-safe; the harness calls them from worker threads.
    """

    def upsert(
        self,
        documents: Iterable[Document],
        *,
        on_progress: Callable[[int], None] | None = None,
    ) -> UpsertReport:
        """Stores documents; unchanged ones (same content hash) are skipped, changed ones
        replace their chunks. Each document is stored whole or not at all."""
        ...

    def delete(self, doc_ids: Iterable[str]) -> int:
        """Removes documents and their chunks; returns how many existed."""
        ...

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        vector: np.ndarray | None = None,
        filters: Filter | None = None,
        exclude: Collection[str] = (),
        alpha: float | None = None,
    ) -> list[Hit]:
        """Best `k` chunks for the query, none of whose ids is in `exclude`. The store
        embeds the query itself when `vector` is None and the mode needs one. `alpha` is
        the hybrid weight of dense scores for this call (None: the store's default)."""
        ...

    def grep(
        self,
        pattern: str,
        *,
        k: int = 5,
        filters: Filter | None = None,
        exclude: Collection[str] = (),
    ) -> GrepResult:
        """Chunks matching a regular expression (RE2 syntax, linear time)."""
        ...

    def read(self, doc_id: str) -> list[Chunk]:
        """The document's chunks in order; empty when the document does not exist."""
        ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked; unknown ids are skipped."""
        ...

    def stats(self) -> CorpusStats: ...

    def close(self) -> None: ...


@runtime_checkable
class EntityGraphCorpus(Protocol):
    """An optional capability of a `Corpus`: a walk over the entity graph of all its
    chunks (docs/entity-graph.md), checked with `isinstance`. The embedded store offers
    it when opened with `entity_graph=True`; Weaviate does not, and needs not: the
    heuristic planner builds the graph of what an episode has read itself."""

    @property
    def entity_graph(self) -> bool:
        """Whether this corpus keeps the graph (`walk_entities` answers)."""
        ...

    def walk_entities(
        self,
        question: str,
        *,
        seeds: Sequence[str] = (),
        k: int = 10,
        exclude: Collection[str] = (),
        filters: Filter | None = None,
    ) -> WalkResult:
        """Chunk ids nearest the question's entities and the `seeds` chunk ids, best
        first, each with the entity it came through; only chunks passing `filters`."""
        ...


@runtime_checkable
class Policy(Protocol):
    """Chooses the next step of an episode from what the harness shows it."""

    async def decide(self, view: PolicyView) -> Decision: ...
