"""The service's single-shot takes the run's settings (issue 46, item 1): the plan's
config, as its episodes do, on `mode="single_shot"` and the deadline fallback."""

from __future__ import annotations

from sift.integrations.http import _search
from sift.integrations.stores.sqlite import SqliteCorpus
from tests.graphs import test_single_shot_graph as pages
from tests.graphs.test_single_shot_graph import EN, called

# The entity-graph store of tests/graphs/test_single_shot_graph.py, the same fixture.
store = pages.store


def test_the_service_passes_the_plans_config_to_single_shot(store: SqliteCorpus) -> None:
    """The HTTP service's single-shot (mode "single_shot" and the deadline fallback)
    builds the run's HarnessConfig from the plan, as its episodes do."""

    def plan(**config: object) -> _search.SearchPlan:
        return _search.SearchPlan(
            question=EN,
            mode="single_shot",
            top_k=5,
            filters=None,
            deadline_s=10,
            grace_s=1,
            config=dict(config),
        )

    assert called(_search.single_shot(plan(), store)) == ["search_corpus", "entity_graph"]
    off = _search.single_shot(plan(single_shot_graph_weight=0, search_mode="bm25"), store)
    assert called(off) == ["search_corpus"]
    assert "single bm25 search" in off.evidence[0].justification
    fallback = _search.single_shot_fallback(plan(single_shot_graph_weight=0), store)
    assert called(fallback) == ["search_corpus"] and "deadline_fallback" in fallback.flags
