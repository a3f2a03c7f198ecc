"""The budget tiers' enforcement: what the harness prunes itself so the budget is never
crossed (DESIGN "Budget tiers")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sift.nodes._context import Episode

if TYPE_CHECKING:
    from sift.protocols import Reranker

__all__ = ["chunk_values", "force_prune"]


def chunk_values(episode: Episode, chunk_ids: list[str], reranker: Reranker) -> list[float]:
    """Value of keeping each chunk in the context: relevance per token.

    Relevance is the reranker's score of the chunk against the question, plus one so that
    among chunks with no overlap at all the larger ones (more tokens freed) go first.
    """
    chunks = [episode.seen[cid].chunk for cid in chunk_ids]
    scores = reranker.rerank(episode.question, chunks)
    return [
        (1.0 + score) / max(1, sum(b.tokens for b in episode.live_blocks(cid)))
        for cid, score in zip(chunk_ids, scores, strict=True)
    ]


def force_prune(episode: Episode, limit: int, reranker: Reranker) -> list[str]:
    """Prunes the lowest-value live chunks until the context holds at most `limit` tokens.

    Returns the pruned ids in pruning order. The caller concludes the episode when the
    context is still over the limit afterwards (nothing prunable is left).
    """
    if episode.tokens_used <= limit:
        return []
    live = episode.live_chunk_ids()
    values = chunk_values(episode, live, reranker)
    # Lowest value first; among equals the most recently surfaced goes first, so the
    # chunks the policy has been reasoning about longest stay.
    order = sorted(range(len(live)), key=lambda i: (values[i], -i))
    pruned: list[str] = []
    for i in order:
        if episode.tokens_used <= limit:
            break
        if episode.prune(live[i]):
            pruned.append(live[i])
    return pruned
