"""SiftRetriever against langchain-tests' standard retriever suite, over a real store."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_tests.integration_tests import RetrieversIntegrationTests

from sift.graphs import ScriptedPolicy
from sift.integrations.langchain import SiftRetriever
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

TOPICS = [
    (
        "vesuvius",
        "Mount Vesuvius",
        "Mount Vesuvius is the volcano near Naples that buried Pompeii in 79 AD.",
    ),
    ("pompeii", "Pompeii", "Pompeii was a Roman town destroyed by the eruption of Vesuvius."),
    ("herculaneum", "Herculaneum", "Herculaneum was buried by pyroclastic flows of Vesuvius."),
    ("naples", "Naples", "Naples is the city on the bay beneath Vesuvius in Italy."),
    ("etna", "Mount Etna", "Mount Etna is an active volcano on Sicily."),
    ("danube", "Danube", "The Danube flows through Vienna and Budapest to the Black Sea."),
]

_STORE: SqliteCorpus | None = None


def shared_store() -> SqliteCorpus:
    """One store for the standard suite (it constructs retrievers from plain params)."""
    global _STORE
    if _STORE is None:
        folder = Path(tempfile.mkdtemp(prefix="sift-retriever-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _STORE = SqliteCorpus(folder / "s", embedder="hash")
        _STORE.upsert(
            [Document(id=i, title=t, text=x, metadata={"kind": "place"}) for i, t, x in TOPICS]
        )
    return _STORE


class TestSiftRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[SiftRetriever]:
        return SiftRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"corpus": shared_store()}  # the default policy: the heuristic planner

    @property
    def retriever_query_example(self) -> str:
        return "Which volcano buried Pompeii?"


def search_then_conclude() -> ScriptedPolicy:
    return ScriptedPolicy([[{"name": "search_corpus", "arguments": {"query": "Vesuvius"}}]])


def test_documents_carry_evidence_metadata():
    retriever = SiftRetriever(corpus=shared_store(), policy=search_then_conclude(), k=2)
    docs = retriever.invoke("Which volcano buried Pompeii?")
    assert len(docs) == 2 and all(isinstance(d, LCDocument) for d in docs)
    first = docs[0]
    chunk = shared_store().get_chunks([first.metadata["chunk_id"]])[0]
    assert first.page_content == chunk.text and first.id == chunk.chunk_id
    assert first.metadata["doc_id"] == chunk.doc_id and first.metadata["title"] == chunk.title
    assert first.metadata["kind"] == "place"
    assert first.metadata["found_by"] == [
        {"tool": "search_corpus", "argument": "Vesuvius", "turn": 1}
    ]
    assert first.metadata["justification"]
    assert first.metadata["score"] >= docs[1].metadata["score"]


async def test_async_with_k_and_filters_kwargs():
    retriever = SiftRetriever(corpus=shared_store(), policy=search_then_conclude())
    docs = await retriever.ainvoke("Vesuvius", k=1, filters={"kind": "nothing"})
    assert docs == []
    docs = await retriever.ainvoke("Vesuvius", k=1, filters={"kind": "place"})
    assert len(docs) == 1


def test_single_shot_mode_matches_the_store():
    retriever = SiftRetriever(corpus=shared_store(), mode="single_shot", search_mode="bm25", k=3)
    docs = retriever.invoke("Vesuvius volcano")
    hits = shared_store().search("Vesuvius volcano", k=3, mode="bm25")
    assert [d.metadata["chunk_id"] for d in docs] == [h.chunk.chunk_id for h in hits]


def test_bad_arguments_are_named():
    retriever = SiftRetriever(corpus=shared_store(), policy=search_then_conclude())
    with pytest.raises(ValueError, match="k must be a positive integer"):
        retriever.invoke("Vesuvius", k=0)
    with pytest.raises(TypeError, match="unknown arguments \\['top_n'\\]"):
        retriever.invoke("Vesuvius", top_n=3)
