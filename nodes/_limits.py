"""The numbers the nodes obey, as a protocol: `sift.graphs.HarnessConfig` documents them.

Nodes depend on this shape, not on the settings class, so that they stay free of graph
assembly and of environment parsing.
"""

from __future__ import annotations

from typing import Protocol

from sift.types import SearchMode

__all__ = ["Limits"]


class Limits(Protocol):
    max_turns: int
    top_k: int
    search_mode: SearchMode
    search_alpha: float | None
    search_max_chunks: int
    grep_max_hits: int
    call_token_cap: int
    min_call_tokens: int
    threshold_tokens: int
    rejection_tokens: int
    budget_tokens: int
    message_overhead_tokens: int
    max_failed_turns: int
    deadline_s: float | None
