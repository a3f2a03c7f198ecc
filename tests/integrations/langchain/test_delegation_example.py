"""examples/langchain_delegation.py: a ReAct agent delegates its search to sift.

The orchestrator is the real ChatOllama, talking to sift's loopback fake Ollama, which
plays a model that calls the sift tool and then answers; sift itself runs its no-model
planner over a real store.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from langchain_ollama import ChatOllama

from sift.integrations.ollama.testing import FakeOllama, reply, tool_call
from sift.types import SearchResult

from ...conftest import load_script

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "langchain_delegation.py"


def load_example() -> ModuleType:
    return load_script(EXAMPLE, "langchain_delegation_example")


def test_the_agent_delegates_to_sift_and_answers_from_its_passages(tmp_path: Path) -> None:
    example = load_example()
    question = "Who wrote about the eruption that buried Pompeii, and to whom?"
    delegated = "Who described the eruption of Vesuvius that buried Pompeii, and to whom?"
    with FakeOllama(models=["qwen3:8b"], family="qwen3") as ollama:
        ollama.script(
            reply(tool_calls=[tool_call("sift_search", question=delegated, top_k=3)]),
            reply("Pliny the Younger wrote two letters to Tacitus about it [pliny]."),
        )
        model = ChatOllama(model="qwen3:8b", base_url=ollama.host)
        corpus = example.build_store(tmp_path, embedder="hash")
        try:
            answer, searches = example.ask(example.build_agent(model, corpus), question)
        finally:
            corpus.close()
        first, second = ollama.chat_requests()

    assert answer == "Pliny the Younger wrote two letters to Tacitus about it [pliny]."
    # The orchestrator was offered sift, with the description that says when to use it.
    (offered,) = first["tools"]
    assert offered["function"]["name"] == "sift_search"
    assert "sub-agent" in offered["function"]["description"]
    assert first["messages"][0]["content"] == example.SYSTEM_PROMPT
    # sift ran the delegated question and handed back its passages...
    (search,) = searches
    assert isinstance(search.artifact, SearchResult)
    assert search.artifact.question == delegated
    assert len(search.artifact.evidence) <= 3
    assert "pliny" in [e.doc_id for e in search.artifact.evidence]
    # ...which the orchestrator read on its next turn, as the tool's answer.
    tool_turn = second["messages"][-1]
    assert tool_turn["role"] == "tool"
    assert "Pliny the Younger (doc pliny; chunk pliny_0)" in tool_turn["content"]
    assert "Tacitus" in tool_turn["content"]
