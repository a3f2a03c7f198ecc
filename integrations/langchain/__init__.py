"""LangChain faces of sift: `SiftRetriever` (a BaseRetriever), `create_sift_tool` (sift as
a tool an orchestrating agent delegates searches to; also `SiftRetriever.as_tool()`) and
`ChatModelPolicy` (any chat model that binds tools as a sift policy)."""

from __future__ import annotations

from typing import Any

from sift.integrations.langchain.retriever import SiftRetriever
from sift.integrations.langchain.tool import SiftSearchInput, create_sift_tool

__all__ = ["ChatModelPolicy", "SiftRetriever", "SiftSearchInput", "create_sift_tool"]


def __getattr__(name: str) -> Any:
    if name == "ChatModelPolicy":
        from sift.integrations.langchain.chat_policy import ChatModelPolicy

        return ChatModelPolicy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
