"""single_shot over a store that keeps the entity graph: the search fused with a walk
(issue 32, item 2), in English and Japanese, filters kept, every step traced."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift.graphs import single_shot
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

# The search of the question finds Signmark's page and pages that share its words
# ("currency", "country"); the page on the markka shares none, so the search cannot
# find it even with places to spare, and only the walk Signmark -> Finland -> markka
# reaches it. The same in Japanese: the tower's page names its builder, 大林組, whose
# page shares no character bigram with the question.
PAGES = [
    Document(id="signmark", title="Signmark", text="Signmark is a rapper from Finland."),
    Document(
        id="markka",
        title="Finnish markka",
        text="Markka: money in Finland until 2002.",
        metadata={"lang": "en", "kind": "money"},
    ),
    *(
        Document(id=f"other{i}", title=f"Currency {i}", text="The country and its currency.")
        for i in range(2)
    ),
    Document(
        id="tower",
        title="東京スカイツリー",
        text="東京スカイツリーは墨田区にある電波塔。施工は大林組。",
    ),
    Document(id="obayashi", title="大林組", text="大林組、大阪市中央区。"),
    *(
        Document(id=f"ja{i}", title=f"会社{i}", text=f"この会社{i}の本社は大きい。")
        for i in range(2)
    ),
]
EN = "What currency did the country of Signmark use?"
JA = "東京スカイツリーを建てた会社の本社はどこか？"


@pytest.fixture
def store(tmp_path: Path):
    with SqliteCorpus(tmp_path / "s", embedder="hash", entity_graph=True) as corpus:
        corpus.upsert(PAGES)
        yield corpus


def _ids(result) -> list[str]:
    return [e.chunk_id for e in result.evidence]


def called(result) -> list[str]:
    """The tools a single-shot result's one turn called, in order."""
    return [c.tool for c in result.trace[0].calls]


@pytest.mark.parametrize(
    ("question", "anchor", "bridge", "entity"),
    [(EN, "signmark_0", "markka_0", "finland"), (JA, "tower_0", "obayashi_0", "大林組")],
    ids=["english", "japanese"],
)
def test_the_walk_brings_the_second_hop_into_the_top_k(
    store: SqliteCorpus,
    monkeypatch: pytest.MonkeyPatch,
    question: str,
    anchor: str,
    bridge: str,
    entity: str,
) -> None:
    monkeypatch.setenv("SIFT_SINGLE_SHOT_GRAPH_WEIGHT", "0")
    alone = single_shot(question, store, top_k=5, mode="bm25")
    assert anchor in _ids(alone) and bridge not in _ids(alone) and len(_ids(alone)) < 5
    assert called(alone) == ["search_corpus"]

    monkeypatch.delenv("SIFT_SINGLE_SHOT_GRAPH_WEIGHT")
    fused = single_shot(question, store, top_k=5, mode="bm25")
    ids = _ids(fused)
    assert anchor in ids and bridge in ids and len(ids) <= 5
    reached = next(e for e in fused.evidence if e.chunk_id == bridge)
    assert [(f.tool, f.argument) for f in reached.found_by] == [("entity_graph", entity)]
    assert entity in reached.justification and "not in the search's list" in reached.justification
    # The trace has both steps: the search, then the walk seeded by its best hits,
    # which added what the search had not found.
    search, walk = fused.trace[0].calls
    assert (search.tool, walk.tool) == ("search_corpus", "entity_graph")
    assert anchor in walk.arguments["seeds"]
    assert bridge in walk.added and bridge not in search.added
    assert fused.usage.tool_calls == 2
    # Scores are the fused ones, best first.
    scores = [e.score for e in fused.evidence]
    assert scores == sorted(scores, reverse=True)


def test_a_filter_holds_for_what_the_walk_brings(store: SqliteCorpus) -> None:
    kept = single_shot(EN, store, top_k=5, mode="bm25", filters={"kind": "money"})
    assert _ids(kept) == ["markka_0"]  # only the markka page passes; the walk finds it
    none = single_shot(EN, store, top_k=5, mode="bm25", filters={"lang": "fi"})
    assert _ids(none) == []


def test_a_store_without_the_graph_answers_with_the_search_alone(tmp_path: Path) -> None:
    with SqliteCorpus(tmp_path / "plain", embedder="hash") as plain:
        plain.upsert(PAGES)
        assert plain.entity_graph is False
        result = single_shot(EN, plain, top_k=5, mode="bm25")
        assert "markka_0" not in _ids(result)
        assert called(result) == ["search_corpus"]


# ------------------------------------------------------------------ search_corpus


@pytest.mark.parametrize(
    ("question", "anchor", "bridge", "entity"),
    [(EN, "signmark_0", "markka_0", "finland"), (JA, "tower_0", "obayashi_0", "大林組")],
    ids=["english", "japanese"],
)
async def test_search_corpus_fuses_the_walk_when_configured(
    store: SqliteCorpus, question: str, anchor: str, bridge: str, entity: str
) -> None:
    """`search_graph_weight` (off by default): a policy's search_corpus over a store that
    keeps the graph shows the second hop the search alone cannot find, and the chunk says
    which entity brought it."""
    from sift.graphs import HarnessConfig, ScriptedPolicy, asearch

    def episode(weight: float):
        policy = ScriptedPolicy([[{"name": "search_corpus", "arguments": {"query": question}}]])
        config = HarnessConfig(
            max_turns=1, search_max_chunks=5, search_mode="bm25", search_graph_weight=weight
        )
        return asearch(question, store, policy=policy, config=config)

    assert HarnessConfig().search_graph_weight == 0
    alone = await episode(0.0)
    added = alone.trace[0].calls[0].added
    assert anchor in added and bridge not in added and len(added) < 5  # places to spare
    fused = await episode(1.0)
    added = fused.trace[0].calls[0].added
    assert anchor in added and bridge in added and len(added) <= 5
    reached = next(e for e in fused.evidence if e.chunk_id == bridge)
    assert [(f.tool, f.argument) for f in reached.found_by] == [
        ("search_corpus", question),
        ("entity_graph", entity),
    ]
    first = next(e for e in fused.evidence if e.chunk_id == anchor)
    assert [f.tool for f in first.found_by] == ["search_corpus"]  # a seed, not brought


async def test_search_corpus_over_a_store_without_the_graph_is_the_search(
    tmp_path: Path,
) -> None:
    from sift.graphs import HarnessConfig, ScriptedPolicy, asearch

    with SqliteCorpus(tmp_path / "plain", embedder="hash") as plain:
        plain.upsert(PAGES)
        policy = ScriptedPolicy([[{"name": "search_corpus", "arguments": {"query": EN}}]])
        config = HarnessConfig(
            max_turns=1, search_max_chunks=5, search_mode="bm25", search_graph_weight=1.0
        )
        result = await asearch(EN, plain, policy=policy, config=config)
    added = result.trace[0].calls[0].added
    assert "signmark_0" in added and "markka_0" not in added
    assert result.trace[0].calls[0].error is None
