"""sift as one node of a parent LangGraph graph, with its progress streamed to the parent.

Run:  python examples/langgraph_subgraph.py

The parent graph normalises the question, hands it to the sift graph (a compiled
subgraph with its own input schema {question, filters, top_k, max_turns} and output schema
{evidence, usage, stopped_because, ...}), then writes a short report from the evidence.
sift's progress events ("sift.turn_started", "sift.tool_call", ...) reach the parent's
stream because it is streamed with `subgraphs=True`.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from sift.graphs import build_graph
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document, Evidence, Usage

DOCUMENTS = [
    Document(
        id="vesuvius",
        title="Mount Vesuvius",
        text="Mount Vesuvius is a volcano on the Gulf of Naples in Italy. Its eruption "
        "in 79 AD buried the Roman towns of Pompeii and Herculaneum.",
    ),
    Document(
        id="pompeii",
        title="Pompeii",
        text="Pompeii was an ancient Roman town near Naples, preserved under volcanic "
        "ash after the eruption of Mount Vesuvius.",
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


class ParentState(TypedDict, total=False):
    question: str
    evidence: list[Evidence]
    usage: Usage
    stopped_because: str
    report: str


def build_store(folder: Path, embedder: str = "static") -> SqliteCorpus:
    store = SqliteCorpus(folder / "store", embedder=embedder)
    store.upsert(DOCUMENTS)
    return store


def build_parent(corpus: SqliteCorpus) -> Any:
    def normalise(state: ParentState) -> dict[str, Any]:
        return {"question": " ".join(state["question"].split())}

    def write_report(state: ParentState) -> dict[str, Any]:
        lines = [f"{e.title} ({e.chunk_id}): {e.justification}" for e in state["evidence"][:3]]
        return {"report": "\n".join(lines)}

    parent = StateGraph(ParentState)
    parent.add_node("normalise", normalise)
    parent.add_node("sift", build_graph(corpus))  # the compiled sift graph as a node
    parent.add_node("report", write_report)
    parent.add_edge(START, "normalise")
    parent.add_edge("normalise", "sift")
    parent.add_edge("sift", "report")
    parent.add_edge("report", END)
    return parent.compile()


async def run(question: str, embedder: str = "static") -> tuple[dict[str, Any], list[Any]]:
    """Runs the parent graph; returns its final state and the (namespace, event) pairs of
    sift's progress events as the parent saw them."""
    with tempfile.TemporaryDirectory() as folder:
        corpus = build_store(Path(folder), embedder)
        try:
            parent = build_parent(corpus)
            events: list[Any] = []
            final: dict[str, Any] = {}
            async for namespace, mode, chunk in parent.astream(
                {"question": question}, stream_mode=["custom", "values"], subgraphs=True
            ):
                if mode == "custom":
                    events.append((namespace, chunk))
                elif not namespace:
                    final = chunk
            return final, events
        finally:
            corpus.close()


def main() -> None:
    question = "Who  wrote letters about the volcano that buried Pompeii, and to whom?"
    final, events = asyncio.run(run(question))
    for namespace, event in events:
        details = {k: v for k, v in event.items() if k != "event"}
        print(f"{'/'.join(namespace)}  {event['event']}  {details}")
    print(f"\nstopped because: {final['stopped_because']}; turns: {final['usage'].turns}")
    print(final["report"])


if __name__ == "__main__":
    main()
