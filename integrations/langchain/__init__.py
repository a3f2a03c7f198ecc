"""LangChain faces of sift: `SiftRetriever` (a BaseRetriever) and `ChatModelPolicy` (any
chat model that binds tools as a sift policy)."""

from __future__ import annotations

from typing import Any

from sift.integrations.langchain.retriever import SiftRetriever

__all__ = ["ChatModelPolicy", "SiftRetriever"]


def __getattr__(name: str) -> Any:
    if name == "ChatModelPolicy":
        from sift.integrations.langchain.chat_policy import ChatModelPolicy

        return ChatModelPolicy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
