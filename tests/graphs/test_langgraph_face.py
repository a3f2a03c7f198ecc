"""The compiled graph as LangGraph users meet it: sync and async runs, nested in sync and
async parents, JSON schemas, checkpoints that resume an episode exactly, per-run limits
as input and as context, and clear errors for a missing or empty question."""

from __future__ import annotations

import logging
import sqlite3
import time
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from sift.config import HarnessConfig
from sift.errors import InvalidQueryError
from sift.graphs import EVENT_NAMES, ScriptedPolicy, build_graph
from sift.graphs.policies import HeuristicPlanner
from sift.types import Evidence

from .conftest import call

QUESTION = "Which volcano buried the Roman town of Pompeii near Naples?"


def scripted() -> ScriptedPolicy:
    return ScriptedPolicy(
        [
            [call("search_corpus", query="Vesuvius"), call("grep_corpus", pattern="Pompeii")],
            lambda view: [call("prune_chunks", chunk_ids=sorted(view.seen)[:2])],
            [call("read_document", doc_id="atlas"), call("search_corpus", query="Naples")],
        ]
    )


def outcome(output: dict[str, Any]) -> dict[str, Any]:
    """Everything an episode decided, without its wall times."""
    result = output["result"]
    trace = [t.model_dump(exclude={"wall_ms"}) for t in result.trace]
    return {
        "evidence": [e.model_dump() for e in result.evidence],
        "trace": trace,
        "usage": result.usage.model_dump(),
        "stopped_because": result.stopped_because,
        "error": result.error,
        "flags": result.flags,
    }


def test_sync_invoke_and_stream_match_async(corpus):
    graph = build_graph(corpus, scripted())
    done = graph.invoke({"question": QUESTION})
    events = [e for e in graph.stream({"question": QUESTION}, stream_mode="custom")]
    assert done["stopped_because"] == "final" and done["evidence"]
    assert events[0]["event"] == "sift.turn_started"
    assert events[-1]["event"] == "sift.finished" and {e["event"] for e in events} <= set(
        EVENT_NAMES
    )


async def test_sync_and_async_runs_end_alike(corpus):
    graph = build_graph(corpus, HeuristicPlanner())
    assert outcome(graph.invoke({"question": QUESTION})) == outcome(
        await graph.ainvoke({"question": QUESTION})
    )


class ParentState(TypedDict, total=False):
    question: str
    evidence: list[Evidence]
    stopped_because: str


def parent_of(graph: Any) -> Any:
    parent = StateGraph(ParentState)
    parent.add_node("sift", graph)
    parent.add_edge(START, "sift")
    parent.add_edge("sift", END)
    return parent.compile()


def test_nested_in_a_sync_parent_streams_its_events(corpus):
    parent = parent_of(build_graph(corpus, scripted()))
    seen = list(parent.stream({"question": QUESTION}, stream_mode="custom", subgraphs=True))
    names = [event["event"] for _, event in seen]
    assert names[0] == "sift.turn_started" and names[-1] == "sift.finished"
    assert all(namespace[0].startswith("sift:") for namespace, _ in seen)
    final = parent.invoke({"question": QUESTION})
    assert final["stopped_because"] == "final" and final["evidence"]


async def test_nested_in_an_async_parent(corpus):
    final = await parent_of(build_graph(corpus, scripted())).ainvoke({"question": QUESTION})
    assert final["stopped_because"] == "final" and final["evidence"]


def test_input_and_output_json_schemas_build(corpus):
    graph = build_graph(corpus, ScriptedPolicy())
    given = graph.get_input_jsonschema()
    assert set(given["properties"]) == {"question", "filters", "top_k", "max_turns"}
    assert given["required"] == ["question"]
    returned = graph.get_output_jsonschema()
    assert {"evidence", "usage", "stopped_because", "result"} <= set(returned["properties"])
    assert graph.get_context_jsonschema()["properties"]["max_turns"]["default"] == 10


def test_a_parent_without_a_question_key_is_told_so(corpus):
    class Other(TypedDict, total=False):
        query: str

    parent = StateGraph(Other)
    parent.add_node("sift", build_graph(corpus, ScriptedPolicy()))
    parent.add_edge(START, "sift")
    parent.add_edge("sift", END)
    with pytest.raises(InvalidQueryError, match="no 'question' key"):
        parent.compile().invoke({"query": "Which volcano?"})
    with pytest.raises(InvalidQueryError, match="the question is empty"):
        build_graph(corpus, ScriptedPolicy()).invoke({"question": "  "})


def test_per_run_max_turns_as_input_and_as_context(corpus):
    turns = [[call("search_corpus", query=q)] for q in ("a", "b", "c", "d", "e", "f")]
    graph = build_graph(corpus, ScriptedPolicy(turns), config=HarnessConfig(max_turns=2))
    assert graph.invoke({"question": QUESTION})["usage"].turns == 2
    assert graph.invoke({"question": QUESTION, "max_turns": 5})["usage"].turns == 5
    by_context = graph.invoke({"question": QUESTION}, context=HarnessConfig(max_turns=4))
    assert by_context["usage"].turns == 4
    # A run may ask for up to max_turns_limit turns: the recursion limit is sized for it.
    long = build_graph(corpus, ScriptedPolicy(turns * 10), config=HarnessConfig(max_turns=1))
    out = long.invoke({"question": QUESTION}, context=HarnessConfig(max_turns=60))
    assert out["stopped_because"] == "max_turns" and out["usage"].turns == 60
    with pytest.raises(ValueError, match="max_turns_limit=100"):
        long.invoke({"question": QUESTION, "max_turns": 101})


def no_unregistered_types(caplog: pytest.LogCaptureFixture) -> None:
    logged = [r.getMessage() for r in caplog.records]
    assert not [m for m in logged if "unregistered type" in m or "Blocked" in m], logged


async def test_an_episode_resumed_from_memory_ends_as_an_uninterrupted_one(corpus, caplog):
    whole = await build_graph(corpus, scripted()).ainvoke({"question": QUESTION})
    graph = build_graph(corpus, scripted(), checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t1"}}
    with caplog.at_level(logging.WARNING):
        await graph.ainvoke({"question": QUESTION}, thread, interrupt_after=["budget"])
        state = await graph.aget_state(thread)
        assert state.next == ("policy",)
        assert state.values["episode"].turn == 1 and "result" not in state.values
        resumed = await graph.ainvoke(None, thread)
    no_unregistered_types(caplog)
    assert outcome(resumed) == outcome(whole)


def test_an_episode_resumed_from_sqlite_in_a_new_graph_ends_alike(corpus, tmp_path, caplog):
    whole = build_graph(corpus, HeuristicPlanner()).invoke({"question": QUESTION})
    path = tmp_path / "checkpoints.sqlite"
    thread = {"configurable": {"thread_id": "t2"}}
    with caplog.at_level(logging.WARNING):
        with sqlite3.connect(path, check_same_thread=False) as conn:
            graph = build_graph(corpus, HeuristicPlanner(), checkpointer=SqliteSaver(conn))
            graph.invoke({"question": QUESTION}, thread, interrupt_after=["search_corpus"])
        # Another graph and another connection, as after a restart of the process.
        with sqlite3.connect(path, check_same_thread=False) as conn:
            graph = build_graph(corpus, HeuristicPlanner(), checkpointer=SqliteSaver(conn))
            assert graph.get_state(thread).next == ("budget",)
            resumed = graph.invoke(None, thread)
    no_unregistered_types(caplog)
    assert outcome(resumed) == outcome(whole)


def builtins_only(value: Any, where: str = "checkpoint") -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            builtins_only(key, where)
            builtins_only(item, f"{where}[{key!r}]")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            builtins_only(item, f"{where}[{i}]")
    else:
        assert value is None or type(value) in (str, int, float, bool), (where, type(value))


def test_a_checkpoint_holds_the_episode_and_the_tool_outcomes_as_plain_data(corpus):
    saver = InMemorySaver()
    graph = build_graph(corpus, scripted(), checkpointer=saver)
    thread = {"configurable": {"thread_id": "t4"}}
    graph.invoke({"question": QUESTION}, thread, interrupt_after=["search_corpus"])
    saved = saver.get_tuple(thread)
    assert saved is not None
    values = saved.checkpoint["channel_values"]
    outcomes = values["outcomes"]
    assert outcomes and all(o.get("chunks") for o in outcomes.values())
    builtins_only(outcomes, "outcomes")
    builtins_only(values["episode"], "episode")
    # Resumed, the outcomes are Chunks again and the episode ends as usual.
    resumed = graph.invoke(None, thread)
    assert resumed["stopped_because"] == "final" and resumed["evidence"]


def test_the_deadline_is_a_wall_clock_time_in_the_saved_episode(corpus):
    graph = build_graph(
        corpus, scripted(), config=HarnessConfig(deadline_s=600), checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t3"}}
    graph.invoke({"question": QUESTION}, thread, interrupt_after=["start"])
    saved = graph.get_state(thread).values["episode"].to_data()
    assert time.time() < saved["deadline"] <= time.time() + 600
