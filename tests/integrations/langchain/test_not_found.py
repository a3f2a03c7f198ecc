"""A question the corpus does not answer: every Document the retriever returns carries
`not_found` in its metadata (the names the question types that occur nowhere, or [] when
nothing matches its key terms; None for an answered question), and the sift tool's text
says so before the passages. English beside Japanese, over a real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from sift.integrations.langchain import SiftRetriever, create_sift_tool
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

DOCS = [
    Document(
        id="vesuvius",
        title="Mount Vesuvius",
        text="Mount Vesuvius is a volcano near Naples; in 79 AD it buried Pompeii.",
    ),
    Document(id="etna", title="Mount Etna", text="Mount Etna is an active volcano on Sicily."),
    Document(id="rainier", title="Mount Rainier", text="Mount Rainier is a volcano near Seattle."),
    Document(id="fuji", title="富士山", text="富士山は日本一高い火山で、標高は3776メートルです。"),
    Document(id="biwa", title="琵琶湖", text="琵琶湖は滋賀県にある日本最大の湖です。"),
]

CASES = [
    ("What does --frobnicate-depth control?", ["--frobnicate-depth"]),
    ("--frobnicate-depth は何を制御しますか？", ["--frobnicate-depth"]),
    ("How do I bake a sourdough loaf with rye flour?", []),
    ("ライ麦粉でサワードウを焼くには？", []),
    ("Which volcano buried Pompeii?", None),
    ("富士山の標高は？", None),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteCorpus]:
    store = SqliteCorpus(Path(tmp_path_factory.mktemp("nf")) / "s", embedder="hash")
    store.upsert(DOCS)
    yield store
    store.close()


@pytest.mark.parametrize(("question", "missing"), CASES)
def test_each_document_carries_not_found(
    corpus: SqliteCorpus, question: str, missing: list[str] | None
) -> None:
    docs = SiftRetriever(corpus=corpus, k=3).invoke(question)
    assert docs  # flagged or not, the nearest text comes back
    assert [d.metadata["not_found"] for d in docs] == [missing] * len(docs)


@pytest.mark.parametrize(("question", "missing"), CASES[:4])
async def test_async_documents_carry_it_too(
    corpus: SqliteCorpus, question: str, missing: list[str]
) -> None:
    docs = await SiftRetriever(corpus=corpus, k=2).ainvoke(question)
    assert docs and all(d.metadata["not_found"] == missing for d in docs)


@pytest.mark.parametrize(
    ("question", "said"),
    [
        (CASES[1][0], "not found: '--frobnicate-depth' occurs nowhere in the corpus;"),
        (CASES[2][0], "not found: nothing in the corpus matches the question's key terms;"),
        (CASES[5][0], None),
    ],
)
def test_the_tool_tells_the_model(corpus: SqliteCorpus, question: str, said: str | None) -> None:
    tool = create_sift_tool(corpus, top_k=2)
    message = tool.invoke(
        {"type": "tool_call", "id": "c1", "name": tool.name, "args": {"question": question}}
    )
    assert isinstance(message, ToolMessage)
    head = str(message.content).split("\n\n[1] ", 1)[0]
    if said is None:
        assert "not found" not in str(message.content)
    else:
        assert said in head
