"""SiftRetriever: the sift harness as a LangChain `BaseRetriever`.

    retriever = SiftRetriever(corpus=open_store("./store"), k=10)
    docs = retriever.invoke("Which volcano buried Pompeii?")        # or await ainvoke
    docs = retriever.invoke("...", k=3, filters={"lang": "en"})      # per-call overrides
    tool = retriever.as_tool()       # sift as a tool an agent delegates searches to

Each Document is one evidence chunk: `page_content` is the chunk text; `metadata` holds
the chunk's own metadata plus `doc_id`, `chunk_id`, `title`, `score`, `justification`,
`found_by` (a list of {tool, argument, turn} dicts) and `not_found`, the same on every
Document of a result: None unless the planner flagged the result as not matching the
question (`SearchResult.not_found`), then the names the question types that occur nowhere
in the corpus, or [] when nothing holds enough of its key terms (the Documents are then
only the nearest text).
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field

from sift.config import from_environment
from sift.graphs import HarnessConfig, asearch, search, single_shot
from sift.types import SearchMode, SearchResult

__all__ = ["SiftRetriever"]


class SiftRetriever(BaseRetriever):
    """Agentic multi-hop retrieval over a sift Corpus (or the single-shot baseline)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    corpus: Any = Field(description="A sift Corpus, e.g. sift.open_store(path).")
    policy: Any = Field(default=None, description="A sift Policy; None: the heuristic planner.")
    config: HarnessConfig | None = Field(default=None, description="Harness limits.")
    k: int | None = Field(
        default=None, ge=1, description="Documents returned (None: the config's top_k)."
    )
    filters: Any = Field(default=None, description="Metadata filter (sift.Filter short form).")
    mode: Literal["agentic", "single_shot"] = "agentic"
    search_mode: SearchMode | None = Field(
        default=None, description="Single-shot search mode (None: the config's search_mode)."
    )
    rollouts: int = Field(default=1, ge=1, description="Independent rollouts merged by RRF.")

    def _options(self, kwargs: dict[str, Any]) -> tuple[int, Any]:
        unknown = set(kwargs) - {"k", "filters"}
        if unknown:
            raise TypeError(
                f"SiftRetriever got unknown arguments {sorted(unknown)}; it accepts k and filters"
            )
        k = kwargs.get("k", self.k)
        if k is None:
            k = (self.config or from_environment(HarnessConfig)).top_k
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive integer; got {k!r}")
        return k, kwargs.get("filters", self.filters)

    def _to_documents(self, result: SearchResult, k: int) -> list[Document]:
        # A retriever returns Documents only: what the result says as a whole rides on each.
        not_found = result.not_found
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
                    "not_found": None if not_found is None else list(not_found),
                },
            )
            for item in result.evidence[:k]
        ]

    def _single_shot(self, query: str, k: int, filters: Any) -> SearchResult:
        return single_shot(
            query, self.corpus, config=self.config, top_k=k, mode=self.search_mode, filters=filters
        )

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

    def as_tool(
        self,
        args_schema: type[BaseModel] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_types: dict[str, type] | None = None,
    ) -> BaseTool:
        """sift as a tool an orchestrating agent delegates searches to:
        `create_sift_tool` over this retriever's corpus, policy, limits, filters and
        rollouts, with `k` as the passages per call (see `sift_search`'s description).
        Given `args_schema` or `arg_types`, LangChain's generic `Runnable.as_tool`."""
        if args_schema is not None or arg_types is not None:
            return super().as_tool(
                args_schema, name=name, description=description, arg_types=arg_types
            )
        if self.mode == "single_shot":
            raise ValueError(
                "a single-shot SiftRetriever has no search to delegate: use mode='agentic', "
                "or langchain_core.tools.create_retriever_tool for plain retrieval"
            )
        from sift.integrations.langchain.tool import create_sift_tool
        from sift.integrations.subagent import SEARCH_TOOL_DESCRIPTION

        return create_sift_tool(
            self.corpus,
            policy=self.policy,
            config=self.config,
            top_k=self._options({})[0],
            filters=self.filters,
            rollouts=self.rollouts,
            name=name or "sift_search",
            description=description or SEARCH_TOOL_DESCRIPTION,
        )
