"""Every budget tier reached by a scripted policy, with small token numbers."""

from __future__ import annotations

import re

from sift.types import Decision, ToolCall

from .conftest import call

TIERS = {
    "threshold_tokens": 600,
    "rejection_tokens": 1000,
    "budget_tokens": 1400,
    "call_token_cap": 150,
    "min_call_tokens": 16,
}
QUERIES = [
    "Vesuvius",
    "Etna Sicily",
    "Fuji Japan",
    "Rainier Seattle",
    "Pinatubo 1991",
    "Hood Oregon",
    "Danube",
    "Amazon river",
]


def search(query: str) -> list[dict]:
    return [call("search_corpus", query=query)]


def never_past_budget(result, policy) -> None:
    assert all(v.tokens_used <= v.budget for v in policy.views)
    assert all(t.tokens_after <= TIERS["budget_tokens"] for t in result.trace)
    assert result.usage.peak_context_tokens <= TIERS["budget_tokens"]


async def test_threshold_then_rejection_then_prune_reopens_the_tools(corpus, run):
    turns = [search(q) for q in QUERIES[:4]]  # three allowed, then one rejected
    turns.append(lambda view: [call("prune_chunks", chunk_ids=list(view.seen))])
    turns.append(search("Naples city"))
    result, policy, events = await run(corpus, turns, **TIERS)
    never_past_budget(result, policy)

    over = [v for v in policy.views if v.tokens_used > 600]
    assert over, "the script must cross the threshold"
    message = over[0].messages[-1]
    assert message.role == "user"
    shown = re.match(r"\[Token usage: (\d+)/600\] OVER BUDGET\. ", message.content)
    assert shown and abs(int(shown.group(1)) - over[0].tokens_used) <= 1
    # Below the rejection level every tool still runs, and the notice says so (issue 27).
    refusal = "from 1000 tokens on, search_corpus, grep_corpus and read_document will be refused"
    assert refusal in message.content
    assert "unavailable" not in message.content
    assert "prune" in message.content and "conclude" in message.content
    past = [v for v in policy.views if v.tokens_used >= 1000]
    if past and past[0].messages[-1].role == "user":
        assert "read_document are unavailable until" in past[0].messages[-1].content

    rejected = [
        (v.turn, t)
        for v, t in zip(policy.views, result.trace, strict=False)
        if v.tokens_used >= 1000 and t.calls and t.calls[0].tool == "search_corpus"
    ]
    assert rejected, "the script must reach the rejection level"
    _turn, trace = rejected[0]
    assert trace.calls[0].error.startswith("Error: search_corpus rejected: the context holds")
    assert "Only prune_chunks is available" in trace.calls[0].error
    tiers = {e["tier"] for e in events if e["event"] == "sift.token_usage"}
    assert {"over_threshold", "rejecting"} <= tiers

    prune_turn, after = result.trace[4], result.trace[5]
    assert prune_turn.calls[0].pruned and prune_turn.tokens_after < 1000
    assert after.calls[0].error is None and after.calls[0].added


async def test_per_call_cap_shrinks_as_the_budget_fills(corpus, run):
    result, policy, _ = await run(
        corpus,
        [search(q) for q in QUERIES[:3]],
        threshold_tokens=900,
        rejection_tokens=900,
        budget_tokens=900,
        call_token_cap=400,
        min_call_tokens=16,
    )
    never_past_budget(result, policy)
    sizes = [t.calls[0].tokens for t in result.trace if t.calls]
    assert sizes[0] > sizes[-1]  # later calls get a smaller share of what is left


async def test_budget_too_tight_for_a_call_is_an_error_observation(corpus, run):
    result, _policy, _ = await run(
        corpus,
        [search("Vesuvius"), search("Etna")],
        threshold_tokens=900,
        rejection_tokens=900,
        budget_tokens=900,
        call_token_cap=400,
        min_call_tokens=300,
    )
    assert result.trace[1].calls[0].error.startswith("Error: search_corpus rejected: only ")


async def test_the_harness_prunes_when_exact_counts_exceed_the_budget(corpus, run):
    def heavy(view):
        # The model server reports a prompt larger than the estimate, close to the budget.
        return Decision(
            tool_calls=[ToolCall(name="grep_corpus", arguments={"pattern": "x"})],
            prompt_tokens=TIERS["budget_tokens"] - 50,
        )

    turns = [search("Vesuvius"), search("Etna Sicily"), heavy]
    result, _policy, events = await run(corpus, turns, **TIERS)
    forced = [c for t in result.trace for c in t.calls if c.arguments == {"by": "harness"}]
    assert forced and forced[0].pruned
    assert result.trace[2].calls[0].error.startswith("Error: grep_corpus rejected")
    assert result.trace[2].tokens_after <= TIERS["budget_tokens"]
    assert any(e["event"] == "sift.chunks_pruned" and e["by"] == "harness" for e in events)
    assert result.usage.prompt_tokens > 0


async def test_the_episode_concludes_on_budget_when_nothing_is_left_to_prune(corpus, run):
    def enormous(view):
        return Decision(
            tool_calls=[ToolCall(name="search_corpus", arguments={"query": "x"})],
            prompt_tokens=10_000,
        )

    result, _, _ = await run(corpus, [search("Vesuvius"), enormous], **TIERS)
    assert result.stopped_because == "budget"
    assert "budget" in result.error
    assert result.evidence  # what was found is still returned


async def test_exact_prompt_counts_correct_the_estimate(corpus, run):
    plain, _, _ = await run(corpus, [search("Etna"), search("Fuji")])

    def exact(view):
        return Decision(
            tool_calls=[ToolCall(name="search_corpus", arguments={"query": "Fuji"})],
            prompt_tokens=view.tokens_used + 50,
            completion_tokens=7,
        )

    corrected, _, _ = await run(corpus, [search("Etna"), exact])
    assert corrected.trace[1].tokens_after - plain.trace[1].tokens_after in (50, 51)
    assert corrected.usage.completion_tokens == 7


async def test_rejected_turns_end_on_budget(corpus, run):
    turns = [search(q) for q in QUERIES]
    result, policy, _ = await run(corpus, turns, max_failed_turns=2, **TIERS)
    never_past_budget(result, policy)
    assert result.stopped_because == "budget"
    assert "consecutive turns" in result.error


async def test_budget_pruned_everything_a_chunk_the_model_took_back_is_still_evidence(corpus, run):
    # The model pruned pompeii_0, then its grep showed it again (back in its context);
    # then the budget pruned everything. The fallback leaves out what the model pruned,
    # but not a chunk it took back.
    def enormous(view):
        return Decision(
            tool_calls=[ToolCall(name="search_corpus", arguments={"query": "x"})],
            prompt_tokens=10_000,
        )

    turns = [
        search("Pompeii buried ash"),
        [call("prune_chunks", chunk_ids=["pompeii_0"]), call("grep_corpus", pattern="Roman town")],
        enormous,
    ]
    result, _, _ = await run(corpus, turns, **TIERS)
    assert result.trace[1].calls[1].resurfaced == ["pompeii_0"]
    assert result.stopped_because == "budget"
    assert "pompeii_0" in [e.chunk_id for e in result.evidence]
