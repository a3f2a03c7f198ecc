"""Single-shot takes the run's settings on every face (issue 46, item 1): `config`
on the Python API and the LangChain retriever, `--set` on the CLI. Before, single-shot
read `HarnessConfig` from the environment and ignored them: `--set
single_shot_graph_weight=0` was accepted and the walk still ran."""

from __future__ import annotations

import pytest

from sift.graphs import HarnessConfig, single_shot
from sift.integrations.langchain import SiftRetriever
from sift.integrations.stores.sqlite import SqliteCorpus
from tests.graphs import test_single_shot_graph as pages
from tests.graphs.test_single_shot_graph import EN, JA, called

# The entity-graph store of test_single_shot_graph, the same fixture.
store = pages.store


@pytest.mark.parametrize("question", [EN, JA], ids=["english", "japanese"])
def test_the_python_api_takes_the_config(store: SqliteCorpus, question: str) -> None:
    assert called(single_shot(question, store, top_k=5)) == ["search_corpus", "entity_graph"]
    off = HarnessConfig(single_shot_graph_weight=0, top_k=2, search_mode="bm25")
    result = single_shot(question, store, config=off)
    assert called(result) == ["search_corpus"]
    assert len(result.evidence) == 2  # the config's top_k
    assert "single bm25 search" in result.evidence[0].justification  # its search_mode
    # An argument given beside the config wins over it.
    assert len(single_shot(question, store, config=off, top_k=1).evidence) == 1


def test_the_langchain_retriever_takes_its_config(store: SqliteCorpus) -> None:
    retriever = SiftRetriever(
        corpus=store,
        mode="single_shot",
        config=HarnessConfig(single_shot_graph_weight=0, top_k=3),
    )
    documents = retriever.invoke(EN)
    assert len(documents) == 3
    assert all(f["tool"] == "search_corpus" for d in documents for f in d.metadata["found_by"])
    walked = SiftRetriever(corpus=store, mode="single_shot", k=5).invoke(EN)
    assert any(f["tool"] == "entity_graph" for d in walked for f in d.metadata["found_by"])
