"""Each tool's exact observation, driven through the graph by a ScriptedPolicy."""

from __future__ import annotations

import re

import pytest

from sift.errors import InvalidPatternError
from sift.text import estimate_tokens
from sift.types import Message

from .conftest import call

MARKER = re.compile(r"\n\n\[Token usage: (\d+)/(\d+)\]$")


def block(chunk) -> str:
    return f"# DOCUMENT ID: {chunk.chunk_id} ({estimate_tokens(chunk.text)} tokens)\n{chunk.text}"


def tool_messages(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role == "tool"]


def strip_marker(content: str) -> str:
    return MARKER.sub("", content)


async def test_search_observation_is_blocks_in_store_order(corpus, run):
    result, policy, _ = await run(corpus, [[call("search_corpus", query="volcano Naples")]])
    expected = [h.chunk for h in corpus.search("volcano Naples", k=10)]
    content = tool_messages(policy.views[1].messages)[0].content
    assert strip_marker(content) == "\n\n".join(block(c) for c in expected)
    used, threshold = map(int, MARKER.search(content).groups())
    assert threshold == 16384
    assert used == result.trace[0].tokens_after == policy.views[1].tokens_used
    assert result.trace[0].calls[0].added == [c.chunk_id for c in expected]
    assert "score" not in content.lower()


async def test_search_respects_max_chunks_and_token_cap(corpus, run):
    result, policy, _ = await run(
        corpus,
        [[call("search_corpus", query="volcano")]],
        search_max_chunks=3,
    )
    assert len(result.trace[0].calls[0].added) == 3
    result, policy, _ = await run(
        corpus,
        [[call("search_corpus", query="volcano")]],
        call_token_cap=80,
        min_call_tokens=16,
    )
    content = strip_marker(tool_messages(policy.views[1].messages)[0].content)
    shown = re.findall(r"# DOCUMENT ID: (\S+) \((\d+) tokens\)", content)
    assert shown and sum(estimate_tokens(b) for b in content.split("\n\n")) <= 80
    assert len(shown) < 10


async def test_search_without_hits_says_no_results(corpus, run):
    result, policy, _ = await run(
        corpus,
        [[call("search_corpus", query="zzqqxx")]],
        search_mode="bm25",
        keep_plain_search=False,
    )
    content = tool_messages(policy.views[1].messages)[0].content
    assert strip_marker(content) == "No results found"
    assert result.evidence == [] and result.stopped_because == "final"


async def test_grep_shows_at_most_five_hits_and_the_store_note(corpus, run):
    result, policy, _ = await run(corpus, [[call("grep_corpus", pattern=r"Mount \w+")]])
    found = corpus.grep(r"Mount \w+", k=5)
    assert found.note  # more than five chunks match, so the store says so
    content = strip_marker(tool_messages(policy.views[1].messages)[0].content)
    assert content == "\n\n".join([*(block(h.chunk) for h in found.hits), found.note])
    assert len(result.trace[0].calls[0].added) == 5


async def test_grep_invalid_pattern_is_an_error_observation(corpus, run):
    with pytest.raises(InvalidPatternError) as caught:
        corpus.grep("(unclosed", k=5)
    result, policy, _ = await run(corpus, [[call("grep_corpus", pattern="(unclosed")]])
    content = strip_marker(tool_messages(policy.views[1].messages)[0].content)
    assert content == f"Error: {caught.value}"
    assert result.trace[0].calls[0].error == content


async def test_read_document_shows_chunks_in_order(corpus, run):
    _result, policy, _ = await run(corpus, [[call("read_document", doc_id="atlas")]])
    chunks = corpus.read("atlas")
    content = strip_marker(tool_messages(policy.views[1].messages)[0].content)
    assert content == "\n\n".join(block(c) for c in chunks)
    # a chunk id where a doc id is due still reads the document
    _, policy, _ = await run(corpus, [[call("read_document", doc_id="atlas_2")]])
    assert strip_marker(tool_messages(policy.views[1].messages)[0].content) == content


async def test_read_document_over_cap_keeps_most_relevant_in_document_order(corpus, run):
    chunks = corpus.read("atlas")
    cap = sum(estimate_tokens(block(c)) for c in chunks[:2]) + 2
    turns = [
        [call("grep_corpus", pattern="Pyroclastic")],  # surfaces the document first
        [call("read_document", doc_id="atlas")],
    ]
    _result, policy, _ = await run(corpus, turns, call_token_cap=cap, min_call_tokens=8)
    content = strip_marker(tool_messages(policy.views[2].messages)[1].content)
    note, *blocks = content.split("\n\n")
    assert note.startswith("[Showing ") and "'Pyroclastic'" in note
    ids = [re.match(r"# DOCUMENT ID: (\S+)", b).group(1) for b in blocks]
    assert "atlas_2" in ids  # the chunk the first query matched survives the cap
    assert ids == sorted(ids, key=lambda c: int(c.rsplit("_", 1)[1]))
    assert len(ids) < len(chunks)


async def test_read_unknown_document_is_an_error(corpus, run):
    _, policy, _ = await run(corpus, [[call("read_document", doc_id="nowhere")]])
    content = strip_marker(tool_messages(policy.views[1].messages)[0].content)
    assert content == "Error: no document with id 'nowhere'."


async def test_prune_answers_pruned_and_reports_unknown_ids(corpus, run):
    turns = [
        [call("search_corpus", query="Pompeii")],
        lambda view: [call("prune_chunks", chunk_ids=[next(iter(view.seen)), "ghost_1"])],
    ]
    result, policy, events = await run(corpus, turns)
    content = strip_marker(tool_messages(policy.views[2].messages)[1].content)
    assert content == "Pruned\n\nUnknown chunk ids (not in the context): ghost_1"
    first = next(iter(policy.views[1].seen))
    assert result.trace[1].calls[0].pruned == [first]
    assert {
        "event": "sift.chunks_pruned",
        "turn": 2,
        "chunk_ids": [first],
        "by": "policy",
    } in events


async def test_prune_removes_blocks_from_rendering_but_not_from_the_trajectory(corpus, run):
    turns = [
        [call("search_corpus", query="Pompeii")],
        lambda view: [call("prune_chunks", chunk_ids=list(view.seen)[:2])],
    ]
    result, policy, _ = await run(corpus, turns)
    before, after = policy.views[1], policy.views[2]
    pruned = list(before.seen)[:2]
    first_obs_before = tool_messages(before.messages)[0].content
    first_obs_after = tool_messages(after.messages)[0].content
    for chunk_id in pruned:
        assert f"# DOCUMENT ID: {chunk_id} " in first_obs_before
        assert f"# DOCUMENT ID: {chunk_id} " not in first_obs_after
        assert after.seen[chunk_id].pruned
    assert after.tokens_used < before.tokens_used + 40  # pruning freed what prune cost
    # pruned chunks are left out of the fallback evidence, but kept in the trace
    assert not {e.chunk_id for e in result.evidence} & set(pruned)
    assert result.trace[0].calls[0].added[:2] == pruned


async def test_multi_tool_use_batch_is_answered_with_one_message(corpus, run):
    turns = [
        [
            call("search_corpus", batch_id="b1", query="Etna Sicily"),
            call("grep_corpus", batch_id="b1", pattern="Danube"),
            call("read_document", doc_id="naples"),
        ]
    ]
    _, policy, _ = await run(corpus, turns)
    tools = tool_messages(policy.views[1].messages)
    assert [m.tool_name for m in tools] == ["multi_tool_use", "read_document"]
    combined = tools[0].content
    assert combined.startswith('[1] search_corpus({"query": "Etna Sicily"})\n\n# DOCUMENT ID:')
    assert '\n\n[2] grep_corpus({"pattern": "Danube"})\n\n# DOCUMENT ID: danube_0' in combined
    assert MARKER.search(tools[1].content) and not MARKER.search(combined)
