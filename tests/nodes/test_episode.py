"""The episode's context: incremental token accounting, pruning, forced pruning, ranking."""

from __future__ import annotations

from sift.config import HarnessConfig
from sift.nodes import EstimateTokenCounter, TermOverlapReranker
from sift.nodes._budget import force_prune
from sift.nodes._episode import Episode
from sift.nodes._finalize import fallback_ranking
from sift.types import Chunk, FoundBy

COUNTER = EstimateTokenCounter()


def chunk(doc: str, index: int, text: str) -> Chunk:
    return Chunk(chunk_id=f"{doc}_{index}", doc_id=doc, index=index, title=doc, text=text)


CHUNKS = [
    chunk("vesuvius", 0, "Vesuvius buried Pompeii in 79 AD under metres of volcanic ash."),
    chunk("danube", 0, "The Danube flows into the Black Sea. " * 12),
    chunk("pompeii", 0, "Pompeii was a Roman town; Vesuvius buried Pompeii."),
    chunk("amazon", 0, "The Amazon river carries more water than any other river. " * 4),
]


def episode_with_chunks() -> Episode:
    episode = Episode(question="Which volcano buried Pompeii?", config=HarnessConfig())
    episode.add_entry("user", ["Find the documents."], COUNTER)
    blocks = []
    for turn, item in enumerate(CHUNKS, start=1):
        found = FoundBy(tool="search_corpus", argument=item.doc_id, turn=turn)
        episode.surface(item, COUNTER.count(item.text), found, rank=0)
        blocks.append(episode.make_block(item, COUNTER))
    episode.add_entry(
        "tool", [*blocks, "[Token usage: 0/16384]"], COUNTER, tool_name="search_corpus"
    )
    return episode


def recount(episode: Episode) -> int:
    overhead = episode.config.message_overhead_tokens
    return sum(COUNTER.count(m.content) + overhead for m in episode.messages())


def test_incremental_count_never_undercounts_the_rendered_context():
    episode = episode_with_chunks()
    assert 0 <= episode.tokens_used - recount(episode) <= 8
    episode.prune("danube_0")
    assert 0 <= episode.tokens_used - recount(episode) <= 8
    assert "danube_0" not in episode.messages()[1].content
    # the trajectory keeps the pruned block
    assert any(getattr(s, "chunk_id", None) == "danube_0" for s in episode.entries[1].segments)


def test_force_prune_drops_lowest_relevance_per_token_first():
    episode = episode_with_chunks()
    before = episode.tokens_used
    pruned = force_prune(episode, before - 1, TermOverlapReranker())
    # both off-topic chunks score zero; the larger frees more and goes first
    assert pruned == ["danube_0"]
    pruned = force_prune(episode, episode.tokens_used - 1, TermOverlapReranker())
    assert pruned == ["amazon_0"]
    assert episode.live_chunk_ids() == ["vesuvius_0", "pompeii_0"]
    assert force_prune(episode, episode.tokens_used, TermOverlapReranker()) == []


def test_fallback_ranking_fuses_surfacing_order_and_relevance():
    episode = episode_with_chunks()
    ranking = fallback_ranking(episode, TermOverlapReranker())
    assert ranking[:2] == ["vesuvius_0", "pompeii_0"]
    assert set(ranking) == {c.chunk_id for c in CHUNKS}
    episode.prune("vesuvius_0")
    assert "vesuvius_0" not in fallback_ranking(episode, TermOverlapReranker())


def test_reranker_prefers_matching_chunks_and_handles_empty_queries():
    scores = TermOverlapReranker().rerank("volcano Vesuvius Pompeii", CHUNKS)
    assert scores[0] > 0 and scores[2] > 0 and scores[1] == scores[3] == 0
    assert TermOverlapReranker().rerank("the of and", CHUNKS) == [0.0] * 4
    assert TermOverlapReranker().rerank("anything", []) == []
