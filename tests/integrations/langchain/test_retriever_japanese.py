"""SiftRetriever over a real store of Japanese paragraphs (whole JSQuAD articles) beside
English pages: the gold paragraph of a Japanese question comes back as a LangChain
Document, agentic and single shot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sift.integrations.langchain import SiftRetriever
from sift.integrations.stores.sqlite import SqliteCorpus

QUESTION = "日本で梅雨がないのは北海道とどこか。"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, japanese_sample) -> Iterator[SqliteCorpus]:
    store = SqliteCorpus(Path(tmp_path_factory.mktemp("ja")) / "s")  # default embedder
    assert not store.upsert(japanese_sample.documents).failed
    yield store
    store.close()


@pytest.mark.parametrize("mode", ["agentic", "single_shot"])
def test_the_japanese_gold_paragraph_is_retrieved(corpus, japanese_sample, mode) -> None:
    retriever = SiftRetriever(corpus=corpus, mode=mode, k=5)
    docs = retriever.invoke(QUESTION)
    ids = [d.metadata["doc_id"] for d in docs]
    assert japanese_sample.gold(QUESTION) in ids
    gold = docs[ids.index(japanese_sample.gold(QUESTION))]
    assert gold.metadata["title"] == "梅雨" and "小笠原諸島" in gold.page_content


async def test_a_japanese_question_with_a_latin_name(corpus) -> None:
    docs = await SiftRetriever(corpus=corpus, k=3).ainvoke("iPodを製作している企業")
    assert docs[0].metadata["doc_id"] == "ja-apple"
