"""sift as a LangChain tool: what an orchestrating agent calls to delegate a search.

    from sift.integrations.langchain import create_sift_tool
    tool = create_sift_tool(open_store("./store", create=False))
    agent = create_agent(model, [tool])     # langchain.agents, or LangGraph's ReAct agent

    tool = SiftRetriever(corpus=corpus, k=8).as_tool()   # the same, from a retriever

The tool's description tells the model when to delegate (any question the indexed
documents may answer) and that sift finds passages but does not answer. It takes
`question`, optional `filters`, `top_k` and `max_turns`; the model reads the evidence as
text (one block per passage: title, document and chunk ids, page, justification, text)
and the `ToolMessage.artifact` carries the whole `SearchResult` for the application.
A bad argument or a failed search comes back to the model as an error message it can
act on; the agent goes on.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field, ValidationError

from sift.config import HarnessConfig
from sift.errors import SiftError
from sift.graphs import asearch, search
from sift.integrations.subagent import (
    FILTERS_DESCRIPTION,
    MAX_TOP_K,
    QUESTION_DESCRIPTION,
    SEARCH_TOOL_DESCRIPTION,
    SearchReport,
    checked_filter,
    failure_of,
    run_config,
)
from sift.protocols import Corpus, Policy
from sift.types import SearchResult

__all__ = ["SiftSearchInput", "create_sift_tool"]


class SiftSearchInput(BaseModel):
    """The arguments the model gives the sift tool."""

    question: str = Field(min_length=1, description=QUESTION_DESCRIPTION)
    filters: dict[str, Any] | None = Field(None, description=FILTERS_DESCRIPTION)
    top_k: int | None = Field(
        None, ge=1, le=MAX_TOP_K, description="Passages to return (default: the tool's)."
    )
    max_turns: int | None = Field(
        None, ge=1, le=1000, description="Most search steps (default: the tool's)."
    )


class _Delegate:
    """The tool's body: one episode per call, with the tool's defaults."""

    def __init__(
        self,
        corpus: Corpus,
        policy: Policy | None,
        config: HarnessConfig,
        top_k: int,
        filters: Any,
        rollouts: int,
    ) -> None:
        self.corpus = corpus
        self.policy = policy
        self.config = config
        self.top_k = top_k
        self.filters = filters
        self.rollouts = rollouts

    def _options(
        self, filters: dict[str, Any] | None, top_k: int | None, max_turns: int | None
    ) -> dict[str, Any]:
        spec = filters if filters is not None else self.filters
        try:
            run = run_config(self.config, max_turns)
            checked_filter(spec)
        except ValueError as exc:
            raise ToolException(str(exc)) from None
        top_k = top_k if top_k is not None else self.top_k
        return {
            "policy": self.policy,
            "config": run,
            "filters": spec,
            "top_k": top_k,
            "rollouts": self.rollouts,
        }

    @staticmethod
    def _answer(result: SearchResult, top_k: int) -> tuple[str, SearchResult]:
        failed = failure_of(result)
        if failed:
            raise ToolException(failed)
        return SearchReport.of(result, top_k=top_k).to_text(), result

    def run(
        self,
        question: str,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        max_turns: int | None = None,
    ) -> tuple[str, SearchResult]:
        options = self._options(filters, top_k, max_turns)
        try:
            result = search(question, self.corpus, **options)
        except (SiftError, ValueError) as exc:
            raise ToolException(str(exc)) from exc
        return self._answer(result, options["top_k"])

    async def arun(
        self,
        question: str,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        max_turns: int | None = None,
    ) -> tuple[str, SearchResult]:
        options = self._options(filters, top_k, max_turns)
        try:
            result = await asearch(question, self.corpus, **options)
        except (SiftError, ValueError) as exc:
            raise ToolException(str(exc)) from exc
        return self._answer(result, options["top_k"])


def _explain(error: ValidationError) -> str:
    """Arguments the schema refused, said field by field for the model to correct."""
    problems = "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
        for item in error.errors()
    )
    return f"invalid arguments: {problems}"


def create_sift_tool(
    corpus: Corpus,
    *,
    policy: Policy | None = None,
    config: HarnessConfig | None = None,
    top_k: int = 10,
    filters: Any = None,
    rollouts: int = 1,
    name: str = "sift_search",
    description: str = SEARCH_TOOL_DESCRIPTION,
) -> StructuredTool:
    """A tool that runs one sift episode over `corpus` per call (sync or async).

    `policy` defaults to the heuristic planner; `config` holds the episode limits (a call
    may ask for any `max_turns` up to `max_turns_limit`); `top_k` and `filters` are the
    defaults of a call that gives none; `rollouts` > 1 runs that many episodes per call,
    fused by reciprocal rank. The tool answers `(text, SearchResult)`
    (`response_format="content_and_artifact"`).
    """
    if not 1 <= top_k <= MAX_TOP_K:
        raise ValueError(f"top_k must be between 1 and {MAX_TOP_K}; got {top_k}")
    if rollouts < 1:
        raise ValueError(f"rollouts must be a positive integer; got {rollouts}")
    checked_filter(filters)  # a bad default filter is the caller's error, now
    settings = config if config is not None else HarnessConfig()
    body = _Delegate(corpus, policy, settings, top_k, filters, rollouts)
    return StructuredTool.from_function(
        func=body.run,
        coroutine=body.arun,
        name=name,
        description=description,
        args_schema=SiftSearchInput,
        response_format="content_and_artifact",
        handle_tool_error=True,
        handle_validation_error=_explain,
    )
