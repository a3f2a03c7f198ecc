"""The Python faces refuse a question with no word in it (issue 43): the retriever, in
both modes, sync and async, and the agent tool, with InvalidQueryError (a ValueError), or
for the tool an error message back to the model, never unrelated passages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from sift.errors import InvalidQueryError
from sift.integrations.langchain import SiftRetriever, create_sift_tool
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

DOCS = [
    Document(id="etna", title="Mount Etna", text="Mount Etna is an active volcano on Sicily."),
    Document(id="fuji", title="富士山", text="富士山は日本一高い火山で、標高は3776メートルです。"),
]

WORDLESS = ["?!?...", "。、！？"]  # English and Japanese punctuation / 英語と日本語の記号


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[SqliteCorpus]:
    store = SqliteCorpus(tmp_path / "store", embedder="hash")
    store.upsert(DOCS)
    yield store
    store.close()


@pytest.mark.parametrize("question", WORDLESS)
@pytest.mark.parametrize("mode", ["agentic", "single_shot"])
async def test_the_retriever_raises_a_value_error(
    corpus: SqliteCorpus, question: str, mode: str
) -> None:
    retriever = SiftRetriever(corpus=corpus, mode=mode, k=3)
    with pytest.raises(InvalidQueryError, match="has no word to search for") as refused:
        retriever.invoke(question)
    assert isinstance(refused.value, ValueError)
    with pytest.raises(InvalidQueryError, match="has no word to search for"):
        await retriever.ainvoke(question)
    # One word is enough, in either language.
    assert [d.metadata["doc_id"] for d in retriever.invoke("Etna?!")][:1] == ["etna"]
    assert "fuji" in [d.metadata["doc_id"] for d in retriever.invoke("富士山？")]


@pytest.mark.parametrize("question", WORDLESS)
def test_the_tool_answers_the_model_with_an_error(corpus: SqliteCorpus, question: str) -> None:
    tool = create_sift_tool(corpus)
    message = tool.invoke(
        {"type": "tool_call", "id": "c1", "name": tool.name, "args": {"question": question}}
    )
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert f"the question {question!r} has no word to search for" in str(message.content)
