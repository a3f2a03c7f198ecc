"""Reading a real model's replies (issue 27): every call written runs, in order, whatever
the wrapping; a block that cannot be read is answered, never dropped; a reply cut off by
the token limit is never a final answer; ids are a final list only when the reply is one.

The shapes are those Qwen2.5-Coder-1.5B wrote through llama-server (recorded replies
replay in tests/integrations/test_real_model_replay.py); Japanese beside English."""

from __future__ import annotations

import pytest

from sift.llm import (
    MULTI_TOOL,
    UNPARSED_KEY,
    UNREADABLE,
    build_decision,
    expand_calls,
    no_calls_error,
    over_budget_message,
    read_text_calls,
)
from sift.types import Chunk, FoundBy, PolicyView, SeenChunk

SEARCH = '{"name": "search_corpus", "arguments": {"query": "Scott Derrickson nationality"}}'
GREP = '{"name": "grep_corpus", "arguments": {"pattern": "Ed Wood"}}'
SEARCH_JA = '{"name": "search_corpus", "arguments": {"query": "梅雨 北海道 小笠原"}}'


def view(*seen: str, turn: int = 2) -> PolicyView:
    chunks = {
        cid: SeenChunk(
            chunk=Chunk(chunk_id=cid, doc_id=cid.rsplit("_", 1)[0], index=0, title="t", text="x"),
            tokens=10,
            found_by=[FoundBy(tool="search_corpus", argument="q", turn=1)],
        )
        for cid in seen
    }
    return PolicyView(
        question="q",
        turn=turn,
        max_turns=4,
        messages=[],
        seen=chunks,
        threshold=3000,
        rejection=4000,
        budget=4500,
    )


def names(text: str) -> list[tuple[str, str]]:
    calls = read_text_calls(text, id_prefix="t")
    return [(c.name, str(next(iter(c.arguments.values()), ""))) for c in calls.calls]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # one fence, as every reply of the recorded run wrote its calls
        (f"```json\n{SEARCH}\n```", [("search_corpus", "Scott Derrickson nationality")]),
        # several fences with prose between and around
        (
            f"First the director.\n```json\n{SEARCH}\n```\nThen the other one:\n"
            f"```json\n{GREP}\n```\nThat covers both.",
            [("search_corpus", "Scott Derrickson nationality"), ("grep_corpus", "Ed Wood")],
        ),
        # bare objects one after another
        (
            f"{SEARCH}\n{GREP}",
            [("search_corpus", "Scott Derrickson nationality"), ("grep_corpus", "Ed Wood")],
        ),
        # several objects in one fence
        (
            f"```json\n{SEARCH}\n{GREP}\n```",
            [("search_corpus", "Scott Derrickson nationality"), ("grep_corpus", "Ed Wood")],
        ),
        # Qwen's own tags, which its template asks for
        (
            f"<tool_call>\n{SEARCH}\n</tool_call>\n<tool_call>\n{GREP}\n</tool_call>",
            [("search_corpus", "Scott Derrickson nationality"), ("grep_corpus", "Ed Wood")],
        ),
        # prose before and after, Japanese
        (
            f"まず梅雨について検索します。\n{SEARCH_JA}\n結果を見てから続けます。",
            [("search_corpus", "梅雨 北海道 小笠原")],
        ),
        # a fence without a language tag, arguments only (the tool is inferred)
        ('```\n{"pattern": "\\\\d{4}"}\n```', [("grep_corpus", "\\d{4}")]),
    ],
)
def test_every_call_in_the_text_runs_in_order(text, expected):
    assert names(text) == expected


def test_a_call_inside_multi_tool_use_in_a_fence_is_expanded():
    text = (
        "```json\n"
        '{"name": "multi_tool_use", "arguments": {"tool_calls": ['
        f"{SEARCH}, {GREP}]}}}}\n```"
    )
    calls = read_text_calls(text, id_prefix="t3").calls
    assert [(c.name, c.batch_id) for c in calls] == [
        ("search_corpus", "t3_0"),
        ("grep_corpus", "t3_0"),
    ]


def test_the_prose_around_calls_is_kept_and_the_calls_are_not():
    read = read_text_calls(f"I will search.\n```json\n{SEARCH}\n```\nDone.", id_prefix="t")
    assert read.prose == "I will search.\n\nDone."
    assert "search_corpus" not in read.prose


def test_a_block_that_cannot_be_read_becomes_a_call_that_names_it():
    broken = '{"name": "search_corpus", "arguments": {"query": "Ed Wood" "director"}}'
    read = read_text_calls(f"```json\n{broken}\n```\n```json\n{GREP}\n```", id_prefix="t")
    assert [c.name for c in read.calls] == [UNREADABLE, "grep_corpus"]
    assert read.calls[0].arguments[UNPARSED_KEY] == broken


def test_a_code_sample_that_is_not_json_stays_prose():
    read = read_text_calls("```python\nprint('hi')\n```", id_prefix="t")
    assert read.calls == [] and "print" in read.prose


@pytest.mark.parametrize(
    "text",
    [
        "I could not find anything useful.",
        '{"title": "x"}',
        "<Document id=a_0>",
        "見つかりませんでした。",
    ],
)
def test_text_without_a_call_yields_none(text):
    assert read_text_calls(text, id_prefix="t").calls == []


def test_an_unknown_tool_written_as_a_call_is_still_a_call_the_harness_answers():
    (call,) = read_text_calls(
        '{"name": "web_search", "arguments": {"q": "x"}}', id_prefix="t"
    ).calls
    assert call.name == "web_search"


# --------------------------------------------------------------------------- decisions


def test_a_reply_cut_off_after_a_complete_call_runs_it_and_is_not_final():
    # The recorded shape that used to end episodes: a complete prune call, then a block
    # cut off by the token limit; the ids named in the prune call are seen chunks.
    text = (
        '```json\n{"name": "prune_chunks", "arguments": {"chunk_ids": ["a_0", "b_0"]}}\n```\n'
        '```json\n{"name": "search_corpus", "arguments": {"query": "Ed Wo'
    )
    decision = build_decision(
        [],
        content=text,
        thinking=None,
        view=view("a_0", "b_0", "c_0"),
        completion_tokens=512,
        cut_off=True,
    )
    assert decision.final is None and decision.error is None
    assert decision.cut_off is True
    assert [c.name for c in decision.tool_calls] == ["prune_chunks", UNREADABLE]
    assert decision.tool_calls[0].arguments == {"chunk_ids": ["a_0", "b_0"]}
    assert decision.calls_from_text == 2
    assert "search_corpus" in decision.tool_calls[1].arguments[UNPARSED_KEY]
    assert decision.content == ""  # the transcript keeps the calls as calls, once


def test_a_reply_cut_off_before_any_complete_call_is_an_error_naming_the_limit():
    decision = build_decision(
        [],
        content="<Document id=a_0><Justification>Names the dir",
        thinking=None,
        view=view("a_0"),
        completion_tokens=512,
        cut_off=True,
    )
    assert decision.final is None
    assert "cut off at 512 tokens" in decision.error


@pytest.mark.parametrize(
    "text",
    [
        '<Document id="a_0"><Justification>Names the director.</Justification></Document>\n'
        '<Document id="b_0"><Justification>Names the year.</Justification></Document>\n'
        '<Document id="c_0"><Justification>The film was shot in',
        "<Document id=a_0><Justification>監督の名前がある。</Justification></Document>\n"
        "<Document id=b_0><Justification>公開年がある。</Justification></Document>\n"
        "<Document id=c_0><Justification>撮影地は",
    ],
    ids=["english", "japanese"],
)
def test_a_final_list_cut_off_is_not_taken_and_the_model_is_told_how_to_fit_it(text):
    # The recorded shape: the 1.5B wrote the same over-long list again three turns in a
    # row when told only that its reply was cut off.
    decision = build_decision(
        [],
        content=text,
        thinking=None,
        view=view("a_0", "b_0", "c_0"),
        completion_tokens=1024,
        cut_off=True,
    )
    assert decision.final is None and decision.tool_calls == []
    told = "final list was cut off at 1024 tokens by the token limit after 2 complete documents"
    assert told in decision.error
    assert "one short sentence" in decision.error


def test_ids_named_in_a_narrative_are_not_a_final_list():
    text = "I will prune a_0 and b_0 because they are about another film, then search c."
    decision = build_decision([], content=text, thinking=None, view=view("a_0", "b_0"))
    assert decision.final is None
    assert decision.error == no_calls_error(True)


def test_japanese_prose_is_answered_with_an_error_not_taken_as_the_end():
    decision = build_decision(
        [], content="北海道には梅雨がありません。", thinking=None, view=view("a_0")
    )
    assert decision.final is None and decision.tool_calls == []
    assert "neither a tool call nor a final list" in decision.error


@pytest.mark.parametrize(
    "text",
    [
        "a_0\nb_0",
        "- a_0\n- b_0",
        '["a_0", "b_0"]',
        "Final list:\n1. a_0\n2. b_0",
        "<Document id=a_0><Justification>x</Justification></Document>\n"
        "<Document id=b_0><Justification>y</Justification></Document>",
    ],
)
def test_a_final_list_is_read_from_a_plain_list_or_documents(text):
    decision = build_decision([], content=text, thinking=None, view=view("a_0", "b_0"))
    assert [d.id for d in decision.final] == ["a_0", "b_0"]


def test_ids_inside_a_call_are_a_call_not_a_final_list():
    text = '{"name": "prune_chunks", "arguments": {"chunk_ids": ["a_0"]}}'
    decision = build_decision([], content=text, thinking=None, view=view("a_0"))
    assert decision.final is None
    assert [c.name for c in decision.tool_calls] == ["prune_chunks"]


def test_structured_calls_and_calls_in_the_text_both_run_structured_first():
    structured = expand_calls([("search_corpus", {"query": "a"})], id_prefix="t2")
    decision = build_decision(
        structured, content=f"```json\n{GREP}\n```", thinking=None, view=view()
    )
    assert [c.name for c in decision.tool_calls] == ["search_corpus", "grep_corpus"]
    assert len({c.id for c in decision.tool_calls}) == 2


def test_an_unreadable_batch_alone_is_still_explained():
    decision = build_decision(
        [],
        content='{"name": "multi_tool_use", "arguments": {"tool_calls": "a then b"}}',
        thinking=None,
        view=view(),
    )
    assert decision.error.startswith(f"{MULTI_TOOL} needs")


def test_the_over_budget_message_says_what_is_refused():
    below = over_budget_message(3200, 3000, 4000)
    past = over_budget_message(4100, 3000, 4000)
    assert "from 4000 tokens on" in below and "will be refused" in below
    assert "are unavailable until chunks are pruned" in past
    assert "unavailable" not in below
