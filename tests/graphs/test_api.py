"""The Python API: single shot, rollouts merged by RRF, sync wrapper, input errors."""

from __future__ import annotations

import asyncio

import pytest

from sift.errors import InvalidQueryError
from sift.graphs import HarnessConfig, ScriptedPolicy, asearch, merge_rollouts, search, single_shot
from sift.types import Evidence, FoundBy, SearchResult, Usage

from .conftest import WAITED_DEADLINE_S, call


def evidence(chunk_id: str, turn: int = 1) -> Evidence:
    return Evidence(
        doc_id=chunk_id.split("_")[0],
        chunk_id=chunk_id,
        title="",
        text=chunk_id,
        score=0.0,
        justification=f"from rollout turn {turn}",
        found_by=[FoundBy(tool="search_corpus", argument=chunk_id, turn=turn)],
    )


def test_merge_rollouts_is_reciprocal_rank_fusion():
    first = SearchResult(
        question="q",
        evidence=[evidence("a_0"), evidence("b_0"), evidence("c_0")],
        usage=Usage(turns=2, tool_calls=4, calls_per_turn=2.0, peak_context_tokens=900),
    )
    second = SearchResult(
        question="q",
        evidence=[evidence("b_0", 2), evidence("d_0", 2)],
        usage=Usage(turns=3, tool_calls=2, calls_per_turn=1.0, peak_context_tokens=1200),
        stopped_because="max_turns",
    )
    merged = merge_rollouts("q", [first, second], rrf_k=60, top_k=3)
    assert [e.chunk_id for e in merged.evidence] == ["b_0", "a_0", "d_0"]
    assert merged.evidence[0].score == round(1 / 62 + 1 / 61, 6)
    assert merged.evidence[1].score == round(1 / 61, 6)
    assert [f.turn for f in merged.evidence[0].found_by] == [1, 2]
    assert merged.evidence[0].justification == "from rollout turn 2"  # ranked best there
    assert merged.usage.turns == 5 and merged.usage.tool_calls == 6
    assert merged.usage.peak_context_tokens == 1200
    assert merged.stopped_because == "final" and merged.flags == ["rollouts:2"]


class ForkingPolicy(ScriptedPolicy):
    """Each fork searches its own query and records how many forks are mid-episode."""

    queries = ("Vesuvius", "Etna", "Fuji", "Danube")

    def __init__(self, seed: int = 0, tracker: dict | None = None) -> None:
        super().__init__([[call("search_corpus", query=self.queries[seed % 4])]])
        self.tracker = tracker if tracker is not None else {"active": 0, "peak": 0, "seeds": []}

    def fork(self, seed: int) -> ForkingPolicy:
        self.tracker["seeds"].append(seed)
        return ForkingPolicy(seed, self.tracker)

    async def decide(self, view):
        if view.turn == 1:
            self.tracker["active"] += 1
            self.tracker["peak"] = max(self.tracker["peak"], self.tracker["active"])
        for _ in range(5):
            await asyncio.sleep(0)  # let the other rollouts run if they may
        decision = await super().decide(view)
        if not decision.tool_calls:
            self.tracker["active"] -= 1
        return decision


async def test_rollouts_fork_run_bounded_and_merge(corpus):
    policy = ForkingPolicy()
    events: list[dict] = []
    result = await asearch(
        "volcanoes",
        corpus,
        policy=policy,
        rollouts=4,
        config=HarnessConfig(rollout_concurrency=2),
        top_k=8,
        on_event=events.append,
    )
    assert sorted(policy.tracker["seeds"]) == [0, 1, 2, 3]
    assert policy.tracker["peak"] == 2
    assert {e["rollout"] for e in events} == {0, 1, 2, 3}
    assert "rollouts:4" in result.flags and len(result.evidence) == 8
    arguments = {f.argument for e in result.evidence for f in e.found_by}
    assert len(arguments) > 1  # the fused list draws on several rollouts
    assert result.usage.turns == 8


class StallingPolicy:
    def __init__(self) -> None:
        self.calls = 0

    async def decide(self, view):
        self.calls += 1
        await asyncio.Event().wait()  # never answers: only the deadline ends the episode


async def test_the_deadline_covers_all_rollouts_not_each(corpus):
    policy = StallingPolicy()
    result = await asearch(
        "volcanoes",
        corpus,
        policy=policy,
        rollouts=3,
        config=HarnessConfig(rollout_concurrency=1, deadline_s=WAITED_DEADLINE_S),
    )
    assert result.stopped_because == "deadline"
    assert policy.calls == 1  # the queued rollouts start after the deadline: skipped
    assert "rollout_skipped_after_deadline" in result.flags


def test_single_shot_is_one_store_search(corpus):
    result = single_shot("Which volcano buried Pompeii?", corpus, top_k=5, mode="bm25")
    hits = corpus.search("Which volcano buried Pompeii?", k=5, mode="bm25")
    assert result.mode == "single_shot"
    assert [e.chunk_id for e in result.evidence] == [h.chunk.chunk_id for h in hits]
    assert [e.score for e in result.evidence] == [h.score for h in hits]
    assert result.evidence[0].found_by == [
        FoundBy(tool="search_corpus", argument="Which volcano buried Pompeii?", turn=0)
    ]
    assert result.usage.tool_calls == 1 and result.trace[0].calls[0].added


async def test_sync_search_works_inside_a_running_loop(corpus):
    result = search(
        "Where is Mount Etna?",
        corpus,
        policy=ScriptedPolicy([[call("search_corpus", query="Etna")]]),
    )
    assert result.evidence and result.evidence[0].doc_id == "etna"


async def test_bad_inputs_are_named(corpus):
    with pytest.raises(InvalidQueryError, match="the question is empty"):
        await asearch("  ", corpus, policy=ScriptedPolicy())
    with pytest.raises(InvalidQueryError, match="SIFT_MAX_QUESTION_CHARS"):
        await asearch(
            "why? " * 10,
            corpus,
            policy=ScriptedPolicy(),
            config=HarnessConfig(max_question_chars=20),
        )
    with pytest.raises(ValueError, match="rollouts must be a positive integer"):
        await asearch("q", corpus, policy=ScriptedPolicy(), rollouts=0)
    with pytest.raises(InvalidQueryError):
        single_shot("", corpus)
