"""SiftRetriever: the sift harness as a LangChain `BaseRetriever`.

    retriever = SiftRetriever(corpus=open_store("./store"), k=10)
    docs = retriever.invoke("Which volcano buried Pompeii?")        # or await ainvoke
    docs = retriever.invoke("...", k=3, filters={"lang": "en"})      # per-call overrides

Each Document is one evidence chunk: `page_content` is the chunk text; `metadata` holds
the chunk's own metadata plus `doc_id`, `chunk_id`, `title`, `score`, `justification` and
`found_by` (a list of {tool, argument, turn} dicts).
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from sift.graphs import HarnessConfig, asearch, search, single_shot
from sift.types import SearchMode, SearchResult

__all__ = ["SiftRetriever"]


class SiftRetriever(BaseRetriever):
    """Agentic multi-hop retrieval over a sift Corpus (or the single-shot baseline)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    corpus: Any = Field(description="A sift Corpus, e.g. sift.open_store(path).")
    policy: Any = Field(default=None, description="A sift Policy; None: the heuristic planner.")
    config: HarnessConfig | None = Field(default=None, description="Harness limits.")
    k: int = Field(default=30, ge=1, description="Documents returned (the evidence top_k).")
    filters: Any = Field(default=None, description="Metadata filter (sift.Filter short form).")
    mode: Literal["agentic", "single_shot"] = "agentic"
    search_mode: SearchMode = Field(default="hybrid", description="Single-shot search mode.")
    rollouts: int = Field(default=1, ge=1, description="Independent rollouts merged by RRF.")

    def _options(self, kwargs: dict[str, Any]) -> tuple[int, Any]:
        unknown = set(kwargs) - {"k", "filters"}
        if unknown:
            raise TypeError(
                f"SiftRetriever got unknown arguments {sorted(unknown)}; it accepts k and filters"
            )
        k = kwargs.get("k", self.k)
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive integer; got {k!r}")
        return k, kwargs.get("filters", self.filters)

    def _to_documents(self, result: SearchResult, k: int) -> list[Document]:
        return [
            Document(
                id=item.chunk_id,
                page_content=item.text,
                metadata={
                    **item.metadata,
                    "doc_id": item.doc_id,
                    "chunk_id": item.chunk_id,
                    "title": item.title,
                    "score": item.score,
                    "justification": item.justification,
                    "found_by": [f.model_dump() for f in item.found_by],
                },
            )
            for item in result.evidence[:k]
        ]

    def _single_shot(self, query: str, k: int, filters: Any) -> SearchResult:
        return single_shot(query, self.corpus, top_k=k, mode=self.search_mode, filters=filters)

    def _options_of_episode(self, k: int, filters: Any) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "config": self.config,
            "filters": filters,
            "top_k": k,
            "rollouts": self.rollouts,
        }

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        k, filters = self._options(kwargs)
        if self.mode == "single_shot":
            result = self._single_shot(query, k, filters)
        else:
            result = search(query, self.corpus, **self._options_of_episode(k, filters))
        return self._to_documents(result, k)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        k, filters = self._options(kwargs)
        if self.mode == "single_shot":
            result = self._single_shot(query, k, filters)
        else:
            result = await asearch(query, self.corpus, **self._options_of_episode(k, filters))
        return self._to_documents(result, k)
