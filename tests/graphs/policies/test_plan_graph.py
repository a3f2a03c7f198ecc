"""The planner's entity graph of what it has read (_plan_graph), English and Japanese."""

from __future__ import annotations

import pytest

from sift.entities import EntityGraphConfig
from sift.graphs.policies._plan_graph import GraphFusion, fuse_with_graph, graph_bridges
from sift.graphs.policies.heuristic import HeuristicPlanner, HeuristicPlannerConfig
from sift.types import Chunk, FoundBy, Message, PolicyView, SeenChunk, ToolCall

QUESTION = "What currency predated the Euro in the country Signmark is from?"
# The planner's own order: the anchor first, then pages that share the question's words
# but lead nowhere, the second hop's page last.
PAGES = [
    ("signmark", "Signmark", "Signmark is a rapper from Finland, the first deaf artist signed."),
    ("euro-coins", "Euro coins", "Euro coins are minted by the member states of the eurozone."),
    ("currency-board", "Currency board", "A currency board predated a central bank in Hong Kong."),
    ("deaf-rap", "Deaf hip hop", "Deaf hip hop is performed in sign language."),
    ("rapper-list", "List of rappers", "Rappers from many countries are listed here."),
    ("markka", "Finnish markka", "The markka was the currency of Finland until the euro came."),
]
QUESTION_JA = "シグマークの出身国でユーロより前に使われていた通貨は何か。"
PAGES_JA = [
    ("a", "シグマーク", "シグマークはフィンランド出身のラッパーである。"),
    ("b", "ユーロ硬貨", "ユーロ硬貨はユーロ圏の各国で鋳造される。"),
    ("c", "通貨委員会", "通貨委員会は香港で中央銀行より前に使われていた制度。"),
    ("d", "手話ラップ", "手話ラップは手話で演じられる音楽。"),
    ("e", "マルッカ", "マルッカはフィンランドの通貨で、ユーロ導入まで使われていた。"),
]


def _seen(pages: list[tuple[str, str, str]]) -> dict[str, SeenChunk]:
    seen = {}
    for rank, (doc_id, title, text) in enumerate(pages):
        chunk = Chunk(chunk_id=f"{doc_id}_0", doc_id=doc_id, index=0, title=title, text=text)
        found = [FoundBy(tool="search_corpus", argument="q", turn=1)]
        seen[chunk.chunk_id] = SeenChunk(chunk=chunk, tokens=30, found_by=found, first_rank=rank)
    return seen


def _fusion(weight: float = 1.0) -> GraphFusion:
    return GraphFusion.from_settings(weight, 1, 60, EntityGraphConfig())


def test_the_page_reached_through_the_bridge_entity_moves_up() -> None:
    seen = _seen(PAGES)
    ranked = list(seen)
    fused, via = fuse_with_graph(QUESTION, ranked, seen, _fusion())
    assert fused[0] == "signmark_0"
    # The markka page names Finland, which Signmark's page names: it passes the pages
    # that only share the question's words.
    assert fused.index("markka_0") < fused.index("deaf-rap_0")
    assert fused.index("markka_0") < fused.index("rapper-list_0")
    assert via["markka_0"] == "finland"
    # Nothing is lost or added.
    assert sorted(fused) == sorted(ranked)


def test_weight_zero_keeps_the_planner_order() -> None:
    seen = _seen(PAGES)
    assert fuse_with_graph(QUESTION, list(seen), seen, _fusion(0.0)) == (list(seen), {})


def test_bridges_are_the_entities_the_walk_reaches_not_the_question_ones() -> None:
    seen = _seen(PAGES)
    bridges = graph_bridges(QUESTION, list(seen), seen, _fusion())
    assert bridges[0] == "finland"
    assert "signmark" not in bridges and "euro" not in bridges


def test_japanese_page_reached_through_the_bridge_moves_up() -> None:
    seen = _seen(PAGES_JA)
    fused, via = fuse_with_graph(QUESTION_JA, list(seen), seen, _fusion())
    assert fused.index("e_0") < fused.index("d_0")
    # Through the currency the question names, or the country the anchor names.
    assert via["e_0"] in {"通貨", "フィンランド"}
    assert fused.index("e_0") < fused.index("c_0")


def test_final_list_says_when_the_graph_placed_a_chunk() -> None:
    seen = _seen(PAGES)
    first = [ToolCall(id="h1_0", name="search_corpus", arguments={"query": QUESTION})]
    view = PolicyView(
        question=QUESTION,
        turn=3,
        max_turns=3,
        messages=[
            Message(role="user", content=QUESTION),
            Message(role="assistant", tool_calls=first),
            Message(role="tool", tool_name="search_corpus", content="..."),
        ],
        seen=seen,
        tokens_used=0,
        threshold=16384,
        rejection=16384 * 3 // 2,
        budget=16384 * 2,
        top_k=30,
    )
    decision = HeuristicPlanner(HeuristicPlannerConfig()).step(view)
    assert decision.final is not None
    why = {f.id: f.justification for f in decision.final}
    assert "entity graph" in why["markka_0"] and "'finland'" in why["markka_0"]
    via = {f.id: f.via_entity for f in decision.final}
    assert via["markka_0"] == "finland"
    assert via["deaf-rap_0"] is None  # the walk never reached it
    off = HeuristicPlanner(HeuristicPlannerConfig(graph_weight=0.0)).step(view)
    assert off.final is not None
    assert all("entity graph" not in f.justification for f in off.final)
    assert all(f.via_entity is None for f in off.final)


@pytest.mark.parametrize(
    ("question", "pages", "bridge_page", "entities"),
    [
        (QUESTION, PAGES, "markka", {"finland"}),
        (QUESTION_JA, PAGES_JA, "e", {"通貨", "フィンランド", "マルッカ"}),
    ],
    ids=["english", "japanese"],
)
def test_an_episode_over_a_real_store_says_which_entity_led_to_a_chunk(
    tmp_path, question, pages, bridge_page, entities
) -> None:
    from sift.graphs import search
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    corpus = SqliteCorpus(tmp_path / "s", embedder="hash")
    try:
        corpus.upsert(Document(id=d, title=t, text=x) for d, t, x in pages)
        result = search(question, corpus, policy=HeuristicPlanner())
    finally:
        corpus.close()
    bridge = next(e for e in result.evidence if e.doc_id == bridge_page)
    assert "entity graph" in bridge.justification
    # found_by keeps the search that surfaced it and adds the graph's entity, once.
    assert bridge.found_by[0].tool == "search_corpus"
    graph = [f for f in bridge.found_by if f.tool == "entity_graph"]
    assert len(graph) == 1 and graph[0].argument in entities
    assert graph[0].turn == result.usage.turns
    # A page the walk never reached keeps the searches' provenance alone.
    unreached = [e for e in result.evidence if "entity graph" not in e.justification]
    assert all(f.tool != "entity_graph" for e in unreached for f in e.found_by)
