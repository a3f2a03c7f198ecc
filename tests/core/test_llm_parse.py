"""sift.llm: reading tool calls and final answers the way gpt-oss and Context-1 write them."""

from __future__ import annotations

import pytest

from sift.llm import (
    UNPARSED_KEY,
    calls_in_content,
    expand_calls,
    first_json_value,
    parse_final,
)

# --------------------------------------------------------------------------- JSON repair


def test_first_json_value_skips_prose_around_the_object():
    text = 'We need to search for the director. {"query": "director of Inception"} ok'
    assert first_json_value(text) == {"query": "director of Inception"}


def test_stray_backslash_in_a_regex_is_kept_literally():
    # gpt-oss writes regexes with single backslashes, which are invalid JSON escapes.
    assert first_json_value(r'{"pattern": "\d{4} births"}') == {"pattern": r"\d{4} births"}


def test_valid_escapes_are_not_doubled():
    assert first_json_value(r'{"query": "say \"hi\"\n"}') == {"query": 'say "hi"\n'}


def test_braces_inside_strings_do_not_end_the_object():
    text = 'x {"pattern": "a{2}}b", "k": 1} trailing {"other": 2}'
    assert first_json_value(text) == {"pattern": "a{2}}b", "k": 1}


def test_trailing_commas_are_dropped():
    assert first_json_value('{"chunk_ids": ["a_0", "b_1",],}') == {"chunk_ids": ["a_0", "b_1"]}


def test_no_json_raises_value_error():
    with pytest.raises(ValueError):
        first_json_value("no object here, only {unbalanced")


# --------------------------------------------------------------------------- tool calls


def test_single_call_keeps_its_name_and_arguments():
    [call] = expand_calls([("search_corpus", {"query": "x"})], id_prefix="t1")
    assert (call.id, call.name, call.arguments, call.batch_id) == (
        "t1_0",
        "search_corpus",
        {"query": "x"},
        None,
    )


def test_harmony_function_prefix_is_removed():
    [call] = expand_calls([("functions.grep_corpus", {"pattern": "x"})])
    assert call.name == "grep_corpus"


@pytest.mark.parametrize(
    "arguments",
    [
        {
            "tool_calls": [
                {"name": "search_corpus", "arguments": {"query": "a"}},
                {"name": "grep_corpus", "arguments": {"pattern": "b"}},
            ]
        },
        [
            {"name": "search_corpus", "arguments": {"query": "a"}},
            {"name": "grep_corpus", "arguments": {"pattern": "b"}},
        ],
        {
            "tool_uses": [
                {"recipient_name": "functions.search_corpus", "parameters": {"query": "a"}},
                {"recipient_name": "functions.grep_corpus", "parameters": {"pattern": "b"}},
            ]
        },
        {
            "tool_calls": '[{"name": "search_corpus", "arguments": {"query": "a"}}, '
            '{"name": "grep_corpus", "arguments": {"pattern": "b"}}]'
        },
        '[{"name": "search_corpus", "arguments": {"query": "a"}}, '
        '{"name": "grep_corpus", "arguments": {"pattern": "b"}}]',
    ],
    ids=["object", "bare-array", "openai-tool-uses", "array-as-string", "text"],
)
def test_multi_tool_use_expands_every_shape_into_one_batch(arguments):
    calls = expand_calls([("multi_tool_use", arguments)], id_prefix="t2")
    assert [(c.name, c.arguments) for c in calls] == [
        ("search_corpus", {"query": "a"}),
        ("grep_corpus", {"pattern": "b"}),
    ]
    assert {c.batch_id for c in calls} == {"t2_0"}
    assert [c.id for c in calls] == ["t2_0_0", "t2_0_1"]


def test_openai_parallel_recipient_is_multi_tool_use():
    calls = expand_calls([("multi_tool_use.parallel", {"tool_uses": []})])
    assert calls == []


def test_unknown_tool_is_passed_through_for_the_harness_to_answer():
    [call] = expand_calls([("web_search", {"q": "x"})])
    assert (call.name, call.arguments) == ("web_search", {"q": "x"})


def test_unreadable_arguments_reach_the_harness_verbatim():
    [call] = expand_calls([("search_corpus", "query: director of Inception")])
    assert call.arguments == {UNPARSED_KEY: "query: director of Inception"}


def test_unreadable_multi_tool_use_is_not_dropped():
    [call] = expand_calls([("multi_tool_use", {"tool_calls": "search for a, then b"})])
    assert call.name == "multi_tool_use"
    assert call.arguments == {"tool_calls": "search for a, then b"}


def test_prune_ids_written_as_one_string_become_a_list():
    calls = expand_calls(
        [("prune_chunks", {"chunk_ids": "a_0, b_1"}), ("prune_chunks", {"chunk_ids": '["c_2"]'})]
    )
    assert [c.arguments["chunk_ids"] for c in calls] == [["a_0", "b_1"], ["c_2"]]


def test_batch_item_without_name_is_named_from_its_arguments():
    calls = expand_calls([("multi_tool_use", [{"arguments": {"doc_id": "d1"}}])])
    assert [(c.name, c.arguments) for c in calls] == [("read_document", {"doc_id": "d1"})]


# --------------------------------------------------------------------------- Ollama's 500


# --------------------------------------------------------------------------- final answers


CONTEXT1_ANSWER = """<Document id=film_3_0>
<Justification>Names the director of the film.</Justification>
</Document>
<Document id="person_7_1">
<Justification>Gives the director's
birth year.</Justification>
</Document>
<Document id='film_3_0'><Justification>duplicate</Justification></Document>"""


def test_context1_documents_with_justifications_in_order_without_duplicates():
    final, from_thinking = parse_final(CONTEXT1_ANSWER, None)
    assert from_thinking is False
    assert [(d.id, d.justification) for d in final] == [
        ("film_3_0", "Names the director of the film."),
        ("person_7_1", "Gives the director's birth year."),
    ]


def test_document_without_justification_tag_keeps_its_text():
    final, _ = parse_final("<Document id=a_0>relevant because X</Document>", None)
    assert [(d.id, d.justification) for d in final] == [("a_0", "relevant because X")]


def test_ids_only_in_thinking_are_used_and_flagged():
    thinking = "Final list:\n<Document id=a_0>\n<Justification>key</Justification>"
    final, from_thinking = parse_final("", thinking)
    assert from_thinking is True
    assert [d.id for d in final] == ["a_0"]


def test_plain_list_of_ids_accepts_only_ids_the_episode_saw():
    content = "1. a_0\n2. b_3\n3. invented_9\nThese cover the question."
    final, _ = parse_final(content, None, known_ids={"a_0", "b_3", "c_1"})
    assert [d.id for d in final] == ["a_0", "b_3"]


def test_prose_is_not_an_answer():
    final, from_thinking = parse_final("I could not find anything useful.", "hmm", {"a_0"})
    assert final is None and from_thinking is False


# --------------------------------------------------------------------------- calls as text


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"name": "search_corpus", "arguments": {"query": "a"}}', [("search_corpus", None)]),
        ('```json\n{"pattern": "\\d{4}"}\n```', [("grep_corpus", None)]),
        (
            '[{"name": "search_corpus", "arguments": {"query": "a"}},'
            ' {"name": "read_document", "arguments": {"doc_id": "d"}}]',
            [("search_corpus", "t4_0"), ("read_document", "t4_0")],
        ),
    ],
)
def test_calls_written_as_the_answer_text_are_run(content, expected):
    calls = calls_in_content(content, id_prefix="t4")
    assert [(c.name, c.batch_id) for c in calls] == expected


@pytest.mark.parametrize(
    "content",
    [
        '{"title": "x"}',  # nothing tool-shaped
        "<Document id=a_0>",
        "The answer is [1, 2] I think",
    ],
)
def test_text_that_is_not_a_call_stays_text(content):
    assert calls_in_content(content, id_prefix="t") == []


def test_prose_around_a_call_and_an_unknown_tool_are_still_calls():
    # Issue 27: a real model writes prose around its calls; an unknown tool written as a
    # call is answered with an error observation rather than dropped.
    calls = calls_in_content('The answer is {"query": "a"} I think', id_prefix="t")
    assert [(c.name, c.arguments) for c in calls] == [("search_corpus", {"query": "a"})]
    (unknown,) = calls_in_content('{"name": "web_search", "arguments": {}}', id_prefix="t")
    assert unknown.name == "web_search"
