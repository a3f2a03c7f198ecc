"""What the nodes work with besides the state: bound once, when the graph is built."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sift.config import HarnessConfig

if TYPE_CHECKING:
    from sift.protocols import Corpus, Policy, Reranker, TokenCounter

__all__ = ["Services"]


@dataclass(frozen=True)
class Services:
    """The corpus, policy, reranker and token counter of one graph, its default settings,
    and the bounded pool its store calls run on.

    The pool is the graph's own: a store call that outlives the deadline keeps one of
    its threads, never one of the event loop's default executor, which the rest of the
    process (and LangGraph itself) shares.
    """

    corpus: Corpus
    policy: Policy
    reranker: Reranker
    counter: TokenCounter
    config: HarnessConfig = field(default_factory=HarnessConfig)
    executor: ThreadPoolExecutor = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Threads start on first use; the pool is bounded by HarnessConfig.store_threads.
        pool = ThreadPoolExecutor(
            max_workers=self.config.store_threads, thread_name_prefix="sift-store"
        )
        object.__setattr__(self, "executor", pool)
