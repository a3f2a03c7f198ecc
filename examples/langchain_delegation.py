"""An orchestrating agent that delegates search to sift: a LangChain ReAct agent whose
tool is sift (`create_sift_tool`). The orchestrator is any chat model that binds tools;
sift runs its own multi-step search underneath (here the no-model planner) and hands
back ranked passages with document ids and justifications, which the orchestrator
reads and cites.

Run:  python examples/langchain_delegation.py [--model qwen3:8b] [--ollama-host URL]

It needs Ollama serving a chat model that calls tools (`ollama pull qwen3:8b`); sift
itself needs no model. The test (tests/integrations/langchain/test_delegation_example.py)
drives the same agent with the real ChatOllama against sift's loopback fake Ollama.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from sift.integrations.langchain import create_sift_tool
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.protocols import Corpus
from sift.types import Document

SYSTEM_PROMPT = (
    "You answer questions about the user's documents. Delegate every search to the "
    "sift_search tool with one self-contained question; answer only from the passages "
    "it returns, and cite their document ids in square brackets."
)

DOCUMENTS = [
    Document(
        id="vesuvius",
        title="Mount Vesuvius",
        text="Mount Vesuvius is a volcano on the Gulf of Naples in Italy. Its eruption "
        "in 79 AD buried the Roman towns of Pompeii and Herculaneum.",
    ),
    Document(
        id="pliny",
        title="Pliny the Younger",
        text="Pliny the Younger described the eruption of Vesuvius in two letters to "
        "the historian Tacitus; his uncle Pliny the Elder died in the disaster.",
    ),
    Document(
        id="tacitus",
        title="Tacitus",
        text="Tacitus was a Roman historian and senator, author of the Annals and the Histories.",
    ),
    Document(
        id="etna",
        title="Mount Etna",
        text="Mount Etna is an active stratovolcano on the east coast of Sicily.",
    ),
]


def build_agent(model: BaseChatModel, corpus: Corpus) -> Any:
    """A ReAct agent (model, then tools, until the model answers) with sift as its tool:
    LangChain's `create_agent`, else LangGraph's prebuilt ReAct agent."""
    tool = create_sift_tool(corpus, top_k=5)
    try:
        from langchain.agents import create_agent
    except ModuleNotFoundError:  # langchain is not installed: LangGraph's own
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(model, [tool], prompt=SYSTEM_PROMPT)
    return create_agent(model, [tool], system_prompt=SYSTEM_PROMPT)


def ask(agent: Any, question: str) -> tuple[str, list[ToolMessage]]:
    """The agent's answer and the sift results it read (each ToolMessage's `artifact` is
    the whole SearchResult)."""
    state = agent.invoke({"messages": [HumanMessage(question)]})
    messages = state["messages"]
    answer = next(m for m in reversed(messages) if isinstance(m, AIMessage))
    return answer.text, [m for m in messages if isinstance(m, ToolMessage)]


def build_store(folder: Path, embedder: str = "static") -> SqliteCorpus:
    store = SqliteCorpus(folder / "store", embedder=embedder)
    store.upsert(DOCUMENTS)
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen3:8b", help="Ollama chat model that calls tools")
    parser.add_argument("--ollama-host", default=None, help="Ollama address ($OLLAMA_HOST)")
    parser.add_argument(
        "--question", default="Who wrote about the eruption that buried Pompeii, and to whom?"
    )
    options = parser.parse_args()
    from langchain_ollama import ChatOllama

    model = ChatOllama(model=options.model, base_url=options.ollama_host)
    with tempfile.TemporaryDirectory() as folder:
        corpus = build_store(Path(folder))
        try:
            answer, searches = ask(build_agent(model, corpus), options.question)
        finally:
            corpus.close()
    for message in searches:
        result = message.artifact
        print(f"sift: {result.question!r} -> {[e.doc_id for e in result.evidence]}")
    print(answer)


if __name__ == "__main__":
    main()
