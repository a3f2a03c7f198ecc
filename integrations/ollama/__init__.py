"""Ollama as the policy of a sift episode: gpt-oss, Chroma's Context-1, Qwen3, ...

    from sift.integrations.ollama import OllamaPolicy
    policy = OllamaPolicy("gpt-oss:20b")          # host from SIFT_OLLAMA_HOST or OLLAMA_HOST
    result = await sift.graphs.asearch(question, corpus, policy=policy)

Settings come from keywords or the environment (SIFT_OLLAMA_*, OLLAMA_HOST); see
OllamaSettings. `sift.integrations.ollama.testing` ships a loopback fake Ollama.
`RetryPolicy` is the one retry policy of every call to Ollama (the embedder's too).
"""

from __future__ import annotations

from sift.integrations.ollama._client import describe_host
from sift.integrations.ollama._policy import OllamaPolicy, policy_from_settings
from sift.integrations.ollama._retry import RetryPolicy
from sift.integrations.ollama._settings import OllamaHost, OllamaSettings, ThinkLevel
from sift.llm import tool_schemas

__all__ = [
    "OllamaHost",
    "OllamaPolicy",
    "OllamaSettings",
    "RetryPolicy",
    "ThinkLevel",
    "describe_host",
    "policy_from_settings",
    "tool_schemas",
]
