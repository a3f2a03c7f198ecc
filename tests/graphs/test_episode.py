"""Episode behaviour: de-duplication, parallel calls, policy failures, stopping rules,
final lists and the fallback ranking."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from sift.graphs import HarnessConfig, ScriptedPolicy, build_graph
from sift.types import Decision, FinalDocument

from .conftest import WAITED_DEADLINE_S, call


def added(result, turn: int) -> list[list[str]]:
    return [c.added for c in result.trace[turn - 1].calls]


async def test_search_never_repeats_a_chunk_across_turns_pruned_included(corpus, run):
    turns = [
        [call("search_corpus", query="volcano eruption")],
        lambda view: [call("prune_chunks", chunk_ids=list(view.seen))],
        [call("search_corpus", query="volcano eruption")],
    ]
    result, _, _ = await run(corpus, turns, search_max_chunks=4)
    first, third = added(result, 1)[0], added(result, 3)[0]
    assert len(first) == 4 and len(third) == 4
    assert not set(first) & set(third)


async def test_parallel_searches_of_one_turn_never_share_a_chunk(corpus, run):
    same = call("search_corpus", query="Mount volcano")
    result, _, events = await run(corpus, [[same, same, same]], search_max_chunks=4)
    lists = added(result, 1)
    assert all(len(ids) == 4 for ids in lists)  # each still fills its quota
    flat = [c for ids in lists for c in ids]
    assert len(flat) == len(set(flat))
    # the first call of the turn gets the store's best chunks (defined join order)
    best = [h.chunk.chunk_id for h in corpus.search("Mount volcano", k=4)]
    assert lists[0] == best
    tool_events = [e for e in events if e["event"] == "sift.tool_call"]
    assert [e["index"] for e in tool_events] == [0, 1, 2]


class BarrierCorpus:
    """Delegates to a real store; every search waits until `parties` searches are in
    flight at once, so the episode only succeeds if a turn's calls overlap."""

    def __init__(self, inner: Any, parties: int) -> None:
        self.inner = inner
        self.barrier = threading.Barrier(parties, timeout=60)  # bounds a broken run only

    def search(self, *args: Any, **kwargs: Any):
        self.barrier.wait()
        return self.inner.search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_calls_of_one_turn_run_concurrently(corpus, run):
    wrapped = BarrierCorpus(corpus, parties=3)
    turn = [call("search_corpus", query=q) for q in ("Etna", "Fuji", "Danube")]
    result, _, _ = await run(wrapped, [turn], search_max_chunks=2)
    assert [c.error for c in result.trace[0].calls] == [None, None, None]
    assert all(c.added for c in result.trace[0].calls)


async def test_malformed_and_unknown_calls_get_error_observations(corpus, run):
    turns = [
        [
            call("search_corpus"),
            call("search_corpus", query=5),
            call("prune_chunks", chunk_ids=[1, 2]),
            call("launch_rocket", target="moon"),
            call("search_corpus", query="Etna"),
        ]
    ]
    result, policy, _ = await run(corpus, turns)
    errors = [c.error for c in result.trace[0].calls]
    assert errors[0] == (
        "Error: invalid call to search_corpus: 'query' must be a non-empty "
        "string; got arguments {}."
    )
    assert errors[1] == (
        "Error: invalid call to search_corpus: 'query' must be a non-empty "
        'string; got arguments {"query": 5}.'
    )
    assert errors[2].startswith("Error: invalid call to prune_chunks: 'chunk_ids' must be")
    assert errors[3] == (
        "Error: unknown tool 'launch_rocket'. Available tools: "
        "search_corpus, grep_corpus, read_document, prune_chunks."
    )
    assert errors[4] is None and result.trace[0].calls[4].added
    tools = [m for m in policy.views[1].messages if m.role == "tool"]
    assert len(tools) == 5 and tools[3].content.startswith(errors[3])
    assert result.stopped_because == "final"


async def test_consecutive_failing_turns_end_with_error_and_keep_evidence(corpus, run):
    bad = [call("grep_corpus", pattern="")]
    turns = [[call("search_corpus", query="Etna")], bad, bad, bad, bad]
    result, _, _ = await run(corpus, turns, max_failed_turns=3)
    assert result.stopped_because == "error"
    assert len(result.trace) == 4
    assert "3 consecutive turns" in result.error and "'pattern'" in result.error
    assert result.evidence and result.evidence[0].found_by[0].tool == "search_corpus"


async def test_repeated_decision_errors_end_with_error(corpus, run):
    oops = Decision(error="reply was not valid JSON", content="{oops")
    turns = [[call("search_corpus", query="Fuji")], oops, oops]
    result, policy, _ = await run(corpus, turns, max_failed_turns=2)
    assert result.stopped_because == "error"
    assert result.error == "reply was not valid JSON"
    last = policy.views[2].messages[-1]
    assert last.role == "user" and "reply was not valid JSON" in last.content
    assert result.evidence


class RaisingPolicy:
    async def decide(self, view):
        if view.turn == 1:
            return Decision(tool_calls=[{"name": "search_corpus", "arguments": {"query": "Hood"}}])
        raise RuntimeError("model server vanished")


async def test_a_policy_that_raises_ends_with_error_and_evidence(corpus):
    graph = build_graph(corpus, RaisingPolicy())
    out = await graph.ainvoke({"question": "Where is Mount Hood?"})
    assert out["stopped_because"] == "error"
    assert out["error"] == "policy failed: RuntimeError: model server vanished"
    assert out["evidence"]


async def test_max_turns_stops_the_episode(corpus, run):
    turns = [[call("search_corpus", query=q)] for q in ("Etna", "Fuji", "Hood", "Naples")]
    result, policy, _ = await run(corpus, turns, max_turns=2)
    assert result.stopped_because == "max_turns"
    assert result.usage.turns == 2 and len(policy.views) == 2


async def test_deadline_concludes_with_the_evidence_so_far(corpus):
    never = asyncio.Event()

    async def stall(view):
        await never.wait()

    class Stalling(ScriptedPolicy):
        async def decide(self, view):
            if view.turn == 2:
                await stall(view)
            return await super().decide(view)

    policy = Stalling([[call("search_corpus", query="Rainier")]])
    graph = build_graph(corpus, policy, config=HarnessConfig(deadline_s=WAITED_DEADLINE_S))
    out = await graph.ainvoke({"question": "Where is Mount Rainier?"})
    assert out["stopped_because"] == "deadline"
    assert out["evidence"] and out["usage"].turns == 2


class BlockingCorpus:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.release = threading.Event()

    def search(self, *args: Any, **kwargs: Any):
        self.release.wait(10)
        return self.inner.search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_deadline_does_not_wait_for_a_tool_call_in_flight(corpus, run):
    slow = BlockingCorpus(corpus)
    try:
        turns = [[call("search_corpus", query="Etna"), call("grep_corpus", pattern="Fuji")]]
        result, _, _ = await run(slow, turns, deadline_s=WAITED_DEADLINE_S)
    finally:
        slow.release.set()
    assert result.stopped_because == "deadline"
    calls = result.trace[0].calls
    assert calls[0].error == "Error: search_corpus did not finish before the deadline."
    assert calls[1].error is None and result.evidence  # the grep that returned counts


async def test_empty_corpus(empty_corpus, run):
    turns = [
        [
            call("search_corpus", query="anything"),
            call("grep_corpus", pattern="a"),
            call("read_document", doc_id="x"),
        ]
    ]
    result, policy, _ = await run(empty_corpus, turns)
    tools = [m.content for m in policy.views[1].messages if m.role == "tool"]
    assert tools[0] == "No results found" and tools[1] == "No results found"
    assert tools[2].startswith("Error: no document with id 'x'.")
    assert result.evidence == [] and result.stopped_because == "final"


async def test_final_list_ranks_evidence_and_expands_document_ids(corpus, run):
    def conclude(view):
        return Decision(
            final=[
                FinalDocument(id="vesuvius", justification="The volcano that buried Pompeii."),
                FinalDocument(id="pompeii_0", justification="The town that was buried."),
                FinalDocument(id="made_up_9", justification="Never surfaced."),
            ]
        )

    turns = [[call("search_corpus", query="Vesuvius Pompeii")], conclude]
    # The policy's list as it gave it (the plain search's first is tested on its own).
    result, _, _ = await run(corpus, turns, keep_plain_search=False)
    ids = [e.chunk_id for e in result.evidence]
    assert ids[:2] == ["vesuvius_0", "vesuvius_1"] and ids[2] == "pompeii_0"
    assert len(ids) == 3
    assert result.evidence[0].justification == "The volcano that buried Pompeii."
    assert result.evidence[0].found_by[0].tool == "search_corpus"
    assert result.evidence[0].metadata == {"region": "europe"}
    assert [e.score for e in result.evidence] == [1.0, 0.5, 1 / 3]
    assert "final_ids_not_surfaced:made_up_9" in result.flags


async def test_fallback_ranking_without_a_final_list(corpus, run):
    turns = [[call("search_corpus", query="Danube river"), call("grep_corpus", pattern="river")]]
    result, _, _ = await run(
        corpus, turns, question="Which river flows into the Black Sea?", top_k=3
    )
    assert len(result.evidence) == 3
    assert result.evidence[0].chunk_id == "danube_0"
    assert "not in a final list" in result.evidence[0].justification
    assert result.usage.final_evidence_tokens > 0


async def test_filters_reach_every_search(corpus, run):
    turns = [[call("search_corpus", query="volcano"), call("grep_corpus", pattern="Mount")]]
    result, _, _ = await run(corpus, turns, filters={"region": "asia"})
    surfaced = {c for t in result.trace for call_ in t.calls for c in call_.added}
    assert surfaced and {c.split("_")[0] for c in surfaced} <= {"fuji", "pinatubo"}


async def test_usage_and_trace(corpus, run):
    turns = [
        [call("search_corpus", query="Etna"), call("search_corpus", query="Fuji")],
        [call("grep_corpus", pattern="Hood")],
    ]
    result, _, _ = await run(corpus, turns)
    usage = result.usage
    assert usage.turns == 3 and usage.tool_calls == 3 and usage.calls_per_turn == 1.5
    assert usage.peak_context_tokens == max(t.tokens_after for t in result.trace)
    assert result.trace[0].calls[0].arguments == {"query": "Etna"}
    assert all(t.wall_ms >= 0 for t in result.trace)


async def test_runnable_config_overrides_limits(corpus):
    policy = ScriptedPolicy([[call("search_corpus", query=q)] for q in ("a", "b", "c")])
    graph = build_graph(corpus, policy)
    out = await graph.ainvoke(
        {"question": "Etna?"}, config={"configurable": {"max_turns": 1, "unrelated": 1}}
    )
    assert out["stopped_because"] == "max_turns" and out["usage"].turns == 1


async def test_a_per_run_max_turns_beyond_the_configured_one_works(corpus):
    graph = build_graph(corpus, ScriptedPolicy(), config=HarnessConfig(max_turns=4))
    out = await graph.ainvoke({"question": "Etna?", "max_turns": 10})
    assert out["stopped_because"] == "final"


async def test_a_run_recursion_limit_too_small_for_max_turns_is_a_clear_error(corpus):
    graph = build_graph(corpus, ScriptedPolicy(), config=HarnessConfig(max_turns=4))
    with pytest.raises(ValueError, match="recursion_limit of at least 40"):
        await graph.ainvoke({"question": "Etna?", "max_turns": 10}, config={"recursion_limit": 20})
    out = await graph.ainvoke(
        {"question": "Etna?", "max_turns": 10}, config={"recursion_limit": 40}
    )
    assert out["stopped_because"] == "final"


def test_config_reads_the_environment(monkeypatch):
    monkeypatch.setenv("SIFT_MAX_TURNS", "7")
    monkeypatch.setenv("SIFT_THRESHOLD_TOKENS", "1000")
    config = HarnessConfig()
    assert config.max_turns == 7 and config.threshold_tokens == 1000


class CharCounter:
    """A token counter that charges one token per character."""

    def count(self, text: str) -> int:
        return len(text)


class ReverseReranker:
    """Ranks later chunks of a document first, whatever the query."""

    def rerank(self, query: str, chunks) -> list[float]:
        return [float(c.index) for c in chunks]


async def test_injected_token_counter_and_reranker_are_used(corpus):
    policy = ScriptedPolicy([[call("read_document", doc_id="atlas")]])
    chunks = corpus.read("atlas")
    header = len("# DOCUMENT ID: atlas_0 (00 tokens)\n")
    config = HarnessConfig(
        call_token_cap=2 * (header + max(len(c.text) for c in chunks)), min_call_tokens=1
    )
    graph = build_graph(
        corpus, policy, config=config, token_counter=CharCounter(), reranker=ReverseReranker()
    )
    out = await graph.ainvoke({"question": "Tell me about lava"})
    first = policy.views[0]
    task = first.messages[0].content
    assert first.tokens_used == len(task) + config.message_overhead_tokens + 1
    shown = out["trace"][0].calls[0].added
    assert shown == [c.chunk_id for c in chunks[-2:]]  # the reranker's favourites fit


async def test_a_chunk_read_then_pruned_in_one_turn_leaves_the_context(corpus, run):
    # The recorded shape (issue 27): one reply reads a page and then prunes it. The read's
    # block must not stay behind in the context, its tokens, or the evidence.
    turns = [
        [call("search_corpus", query="Pompeii buried ash")],
        [call("read_document", doc_id="pompeii"), call("prune_chunks", chunk_ids=["pompeii_0"])],
        [call("search_corpus", query="river")],
    ]
    result, policy, _ = await run(corpus, turns, search_max_chunks=3)
    assert "pompeii_0" in result.trace[0].calls[0].added
    assert result.trace[1].calls[1].pruned == ["pompeii_0"]
    view = policy.views[2]
    assert view.seen["pompeii_0"].pruned
    shown = "".join(m.content or "" for m in view.messages if m.role == "tool")
    assert "Pompeii was a Roman town" not in shown
    assert "pompeii_0" not in [e.chunk_id for e in result.evidence]
    assert result.stopped_because in {"final", "max_turns"}


async def test_a_chunk_pruned_then_shown_again_is_back_and_the_trace_says_so(corpus, run):
    turns = [
        [call("search_corpus", query="Pompeii buried ash")],
        [call("prune_chunks", chunk_ids=["pompeii_0"]), call("grep_corpus", pattern="Roman town")],
    ]
    result, policy, _ = await run(corpus, turns, search_max_chunks=3)
    prune, grep = result.trace[1].calls
    assert prune.pruned == ["pompeii_0"]
    assert grep.resurfaced == ["pompeii_0"] and grep.added == []
    assert not policy.views[-1].seen["pompeii_0"].pruned
    assert "pompeii_0" in [e.chunk_id for e in result.evidence]


@pytest.mark.parametrize(
    ("store", "question", "query"),
    [
        ("corpus", "Which volcano buried Pompeii?", "Vesuvius Pompeii volcano"),
        ("ja_corpus", "金閣寺を建てたのは誰か。", "京都 寺 足利"),
    ],
    ids=["english", "japanese"],
)
async def test_fill_final_list_tops_a_short_list_up_from_the_live_context(
    request, run, store, question, query
):
    # A small model pruned one chunk, named one document and stopped; with
    # fill_final_list what else it kept in its context fills the list, never the pruned.
    corpus = request.getfixturevalue(store)
    found = [h.chunk.chunk_id for h in corpus.search(query, k=4)]
    assert len(found) >= 3, found
    picked, pruned = found[0], found[-1]
    turns = [
        [call("search_corpus", query=query)],
        [call("prune_chunks", chunk_ids=[pruned])],
        Decision(final=[FinalDocument(id=picked, justification="It.", score=0.2)]),
    ]
    # The policy's list and what fills it (the harness's plain-search picks are off).
    own = {"keep_plain_search": False}
    plain, _, _ = await run(corpus, turns, question=question, top_k=5, search_max_chunks=4, **own)
    assert [e.chunk_id for e in plain.evidence] == [picked]
    assert not any(f.startswith("final_list_filled") for f in plain.flags)

    filled, _, _ = await run(
        corpus, turns, question=question, top_k=5, search_max_chunks=4, fill_final_list=True, **own
    )
    ids = [e.chunk_id for e in filled.evidence]
    assert filled.trace[0].calls[0].added == found
    assert ids[0] == picked and filled.evidence[0].justification == "It."
    assert sorted(ids[1:]) == sorted(set(found) - {picked, pruned})
    assert f"final_list_filled:{len(ids) - 1}" in filled.flags
    assert all("not in a final list" in e.justification for e in filled.evidence[1:])
    # A chunk filling the list never outscores the policy's own pick.
    assert filled.evidence[0].score == 0.2
    assert all(e.score <= 0.2 for e in filled.evidence[1:])
