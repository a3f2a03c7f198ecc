"""Constrained decisions (issue 45): the decision's JSON schema admits only what the harness
can act on, and a constrained reply is read straight into a Decision."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from sift.llm import (
    ConstrainedReply,
    block,
    constrained_messages,
    constrained_turn,
    context_ids,
    decision_schema,
    read_decision,
    task_prompt,
)
from sift.types import Chunk, FoundBy, Message, PolicyView, SeenChunk, ToolCall

# More ids than an enum is given for (a few hundred: the grammar grows with the enum).
MANY = 300
QUESTION = "富士山が最後に噴火したのは何年？"


def results(*ids: str) -> str:
    return "\n\n".join(block(i, 12, f"text of {i}") for i in ids) + "\n\n[Token usage: 90/16384]"


def view(
    *shown: list[str], top_k: int = 30, pruned: tuple[str, ...] = (), final: str = "grades"
) -> PolicyView:
    """A view whose context shows one tool message per list of ids; `final`: how a final
    answer is written (HarnessConfig.constrained_final)."""
    messages = [Message(role="user", content=task_prompt(QUESTION, top_k))]
    for n, ids in enumerate(shown):
        call = ToolCall(id=f"c{n}", name="search_corpus", arguments={"query": f"q{n}"})
        messages += [
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_name="search_corpus", content=results(*ids)),
        ]
    seen = {
        i: SeenChunk(
            chunk=Chunk(chunk_id=i, doc_id=i.rpartition("_")[0], index=0, text="t"),
            tokens=12,
            found_by=[FoundBy(tool="search_corpus", argument="q", turn=1)],
            pruned=i in pruned,
        )
        for ids in shown
        for i in ids
    }
    return PolicyView(
        question=QUESTION,
        turn=2,
        max_turns=6,
        messages=messages,
        seen=seen,
        threshold=16384,
        rejection=24576,
        budget=32768,
        top_k=top_k,
        constrained_final=final,
    )


def branches(schema: dict) -> dict[str, dict]:
    return {next(iter(b["properties"])): b for b in schema["anyOf"]}


def final_enum(schema: dict) -> list[str]:
    """The ids a decision schema lets a final answer name: a list's enum, or the ids a
    graded answer grades."""
    final = branches(schema)["final"]["properties"]["final"]
    return final["required"] if final["type"] == "object" else final["items"]["enum"]


def graded(ids: list[str], grade: int = 1, **grades: int) -> str:
    """A graded final answer: `grade` for each of `ids`, `grades` for the ones named."""
    return json.dumps({"final": {i: grades.get(i, grade) for i in ids}}, ensure_ascii=False)


def max_calls(schema: dict) -> int:
    return branches(schema)["calls"]["properties"]["calls"]["maxItems"]


def seeded_view(question: str, *ids: str) -> PolicyView:
    """The view of turn 2 after a seeded search of `question` that showed `ids` (the
    policies' wire tests decide on it)."""
    results = "\n\n".join(block(i, 20, f"text of {i}") for i in ids)
    call = ToolCall(id="seed_0", name="search_corpus", arguments={"query": question})
    return PolicyView(
        question=question,
        turn=2,
        max_turns=6,
        messages=[
            Message(role="user", content=task_prompt(question, 30)),
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_name="search_corpus", content=results),
        ],
        threshold=16384,
        rejection=24576,
        budget=32768,
    )


def call_schemas(schema: dict) -> dict[str, dict]:
    items = branches(schema)["calls"]["properties"]["calls"]["items"]["anyOf"]
    return {c["properties"]["name"]["enum"][0]: c["properties"]["arguments"] for c in items}


def test_final_ids_are_an_enum_of_the_ids_the_context_shows():
    v = view(["fuji_0", "etna_2"], ["富士山_1", "fuji_0"], final="list")
    assert context_ids(v) == ["fuji_0", "etna_2", "富士山_1"]
    schema = decision_schema(v, reply_tokens=768)
    final = branches(schema)["final"]
    assert final["required"] == ["final"] and final["additionalProperties"] is False
    ids = final["properties"]["final"]
    assert ids["items"] == {"type": "string", "enum": ["fuji_0", "etna_2", "富士山_1"]}
    assert (ids["minItems"], ids["maxItems"]) == (1, 3)  # never more ids than shown
    tools = call_schemas(schema)
    assert list(tools) == ["search_corpus", "grep_corpus", "read_document", "prune_chunks"]
    assert tools["read_document"]["properties"]["doc_id"]["enum"] == ["fuji", "etna", "富士山"]
    prune = tools["prune_chunks"]["properties"]["chunk_ids"]
    assert prune["items"]["enum"] == ["fuji_0", "etna_2", "富士山_1"]
    query = tools["search_corpus"]["properties"]["query"]
    assert query == {"type": "string", "minLength": 1, "maxLength": 200}
    assert all(t["additionalProperties"] is False for t in tools.values())


def test_a_pruned_chunk_is_no_longer_offered():
    # The harness renders a pruned chunk's block no more: it is not in the context.
    for final in ("grades", "list"):
        v = view(["fuji_0", "etna_2"], final=final)
        v.messages[-1] = Message(role="tool", tool_name="search_corpus", content=results("etna_2"))
        assert final_enum(decision_schema(v, reply_tokens=768)) == ["etna_2"]


def test_without_a_chunk_in_context_only_searches_are_offered():
    schema = decision_schema(view(), reply_tokens=768)
    assert list(branches(schema)) == ["calls"]
    assert list(call_schemas(schema)) == ["search_corpus", "grep_corpus"]


def test_bounds_fit_the_reply_budget_and_halve_when_asked_shorter():
    v = view(["a_0", "b_1", "c_2", "d_3", "e_4", "f_5"], top_k=5, final="list")
    roomy = decision_schema(v, reply_tokens=4096)
    assert branches(roomy)["calls"]["properties"]["calls"]["maxItems"] == 4
    assert branches(roomy)["final"]["properties"]["final"]["maxItems"] == 5  # top_k
    tight = decision_schema(v, reply_tokens=300)
    # A query may be 200 characters, each a token at worst (Japanese): one call fits.
    assert branches(tight)["calls"]["properties"]["calls"]["maxItems"] == 1
    shorter = decision_schema(v, reply_tokens=4096, shorter=True)
    assert branches(shorter)["calls"]["properties"]["calls"]["maxItems"] == 2
    assert branches(shorter)["final"]["properties"]["final"]["maxItems"] == 2
    assert call_schemas(shorter)["search_corpus"]["properties"]["query"]["maxLength"] == 100


def test_too_many_ids_for_an_enum_become_a_pattern_of_the_shown_documents():
    ids = [f"doc.{n % 40}_{n}" for n in range(MANY)]
    item = branches(decision_schema(view(ids, final="list"), reply_tokens=4096))["final"][
        "properties"
    ]["final"]["items"]
    assert "enum" not in item
    pattern = re.compile(item["pattern"])
    assert pattern.match("doc.7_7") and pattern.match("doc.39_999")
    assert not pattern.match("docx7_7")  # the dot is escaped
    assert not pattern.match("<Document id=doc.7_7>")
    # Only what grammar converters read as escaped is escaped (not spaces or dashes).
    spaced = [f"富士 山-{n % 3}_{n}" for n in range(MANY)]
    item = branches(decision_schema(view(spaced, final="list"), reply_tokens=4096))["final"][
        "properties"
    ]["final"]["items"]
    assert item["pattern"] == "^(?:富士 山-0|富士 山-1|富士 山-2)_[0-9]+$"
    many_docs = [f"d{n}_0" for n in range(MANY)]
    item = branches(decision_schema(view(many_docs, final="list"), reply_tokens=4096))["final"][
        "properties"
    ]["final"]["items"]
    # Too many documents as well: any id of the chunk-id shape, never a <Document> block.
    generic = re.compile(item["pattern"])
    assert generic.match("d7_0") and generic.match("富士山 (山)_12")
    assert not generic.match('<Document id="d7_0">') and not generic.match("d7")


def test_the_transcript_is_plain_turns_after_the_shape_of_the_reply():
    v = view(["fuji_0"], final="list")
    schema = decision_schema(v, reply_tokens=768)
    messages = constrained_messages(v, schema)
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert '{"final": [<chunk id>, ...]}' in messages[0].content
    assert "up to 1 chunk ids" in messages[0].content
    # The task asks for the final list in the decision's JSON, not as <Document> blocks.
    assert messages[1].content == task_prompt(QUESTION, 30, constrained=True)
    assert "<Document" not in messages[1].content
    assert json.loads(messages[2].content) == {
        "calls": [{"name": "search_corpus", "arguments": {"query": "q0"}}]
    }
    assert messages[3].content.startswith("[search_corpus results]\n# DOCUMENT ID: fuji_0")


def test_calls_are_read_straight_into_the_decision():
    v = view(["fuji_0"])
    reply = {
        "calls": [
            {"name": "search_corpus", "arguments": {"query": "宝永大噴火 1707"}},
            {"name": "read_document", "arguments": {"doc_id": "fuji"}},
        ]
    }
    d = read_decision(json.dumps(reply, ensure_ascii=False), v, completion_tokens=40)
    assert d.error is None and d.final is None and d.answer_repeats
    assert [(c.id, c.name, c.arguments) for c in d.tool_calls] == [
        ("t2_0", "search_corpus", {"query": "宝永大噴火 1707"}),
        ("t2_1", "read_document", {"doc_id": "fuji"}),
    ]
    assert d.calls_from_text == 0 and d.content == "" and d.completion_tokens == 40


def test_a_graded_final_answer_grades_every_id_shown_in_the_order_shown():
    """The default final answer: an object can hold no id twice, where a list of ids
    cannot be kept from repeating one (asked for ten, the 0.5B wrote five twice)."""
    v = view(["fuji_0", "etna_2"], ["富士山_1", "fuji_0"])
    schema = decision_schema(v, reply_tokens=768)
    grades = branches(schema)["final"]["properties"]["final"]
    assert grades["required"] == list(grades["properties"]) == ["fuji_0", "etna_2", "富士山_1"]
    assert grades["additionalProperties"] is False
    assert all(g == {"type": "integer", "enum": [2, 1, 0]} for g in grades["properties"].values())
    jsonschema.validate(json.loads(graded(context_ids(v), 0, etna_2=2)), schema)
    for wrong in (
        {"final": {"fuji_0": 1, "etna_2": 1}},  # one shown id left ungraded
        {"final": {"fuji_0": 1, "etna_2": 1, "富士山_1": 3}},  # not a grade
        {"final": {"fuji_0": 1, "etna_2": 1, "富士山_1": 1, "never_9": 2}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, schema)
    messages = constrained_messages(v, schema)
    assert "each of the first 3 chunk ids shown in the context" in messages[0].content
    assert "2 (it states part of the answer)" in messages[0].content
    assert messages[1].content == task_prompt(QUESTION, 30, constrained=True, graded=True)
    assert "a grade for each chunk id shown" in messages[1].content


def test_a_graded_answer_grades_as_many_ids_as_fit_the_reply_budget():
    # About a token a character for a hex id, plus four around it and its grade.
    ids = [f"hotpotqa-{n:012x}_0" for n in range(40)]  # 23 characters each
    grades = branches(decision_schema(view(ids), reply_tokens=768))["final"]
    assert grades["properties"]["final"]["required"] == ids[: (768 - 16) // 27]
    shorter = decision_schema(view(ids), reply_tokens=768, shorter=True)
    assert final_enum(shorter) == ids[: (768 - 16) // 27 // 2]


def test_a_graded_answer_is_the_list_by_grade_ties_in_the_order_shown():
    v = view(["fuji_0", "etna_2"], ["富士山_1", "hoei_3"])
    d = read_decision(graded(context_ids(v), 1, hoei_3=2, fuji_0=0, never_9=2), v)
    assert d.error is None
    # 0 goes last, not out: the list ranks what was read; an id never shown is dropped.
    assert [f.id for f in d.final or []] == ["hoei_3", "etna_2", "富士山_1", "fuji_0"]
    assert d.final and d.final[0].justification == "graded 2: it states part of the answer"
    assert d.final[-1].justification == "graded 0: it is not about the question"
    wrong = read_decision('{"final": {"fuji_0": 7, "etna_2": 1}}', v)
    assert wrong.final is None and wrong.error and "fuji_0=7" in wrong.error
    none = read_decision('{"final": {"never_9": 2}}', v)
    assert none.final is None and none.error and "grades no chunk id shown" in none.error


def test_a_final_list_keeps_only_ids_the_context_shows():
    v = view(["fuji_0", "etna_2"], final="list")
    d = read_decision('{"final": ["etna_2", "never_shown_9", "fuji_0", "etna_2"]}', v)
    assert [f.id for f in d.final or []] == ["etna_2", "fuji_0"]
    none = read_decision('{"final": ["<Document id=x_1>", "y_2"]}', v)
    assert none.final is None and none.error is not None
    assert "names no chunk id shown" in none.error and "y_2" in none.error


@pytest.mark.parametrize(
    "content",
    [
        "",
        "I will search for the volcano.",
        '{"calls": [], "final": []}',
        '{"final": ["fuji_0"], "note": "x"}',
        '{"calls": [{"tool": "search_corpus"}]}',
    ],
)
def test_anything_else_is_a_policy_error_never_a_decision(content):
    d = read_decision(content, view(["fuji_0"]))
    assert d.error and not d.tool_calls and d.final is None


async def test_a_cut_off_reply_is_asked_again_shorter_never_taken():
    v = view(["fuji_0", "etna_2"])
    asked: list[tuple[list[Message], dict]] = []
    replies = [
        ConstrainedReply(content='{"final": ["fuji_0"', cut_off=True, completion_tokens=768),
        ConstrainedReply(content='{"final": ["fuji_0"]}', prompt_tokens=900, completion_tokens=9),
    ]

    async def ask(messages, schema):
        asked.append((messages, schema))
        return replies.pop(0)

    d = await constrained_turn(v, ask, reply_tokens=768)
    assert [f.id for f in d.final or []] == ["fuji_0"]
    assert d.completion_tokens == 777
    (first, roomy), (second, tight) = asked
    assert second[:-1] != first  # the system message states the tighter bounds
    assert second[-1].role == "user" and "cut off at 768 tokens" in second[-1].content
    calls = lambda s: branches(s)["calls"]["properties"]["calls"]["maxItems"]  # noqa: E731
    assert calls(tight) < calls(roomy)


async def test_a_reply_cut_off_twice_is_an_error_that_says_so():
    async def ask(messages, schema):
        return ConstrainedReply(content='{"calls": [', cut_off=True, completion_tokens=64)

    d = await constrained_turn(view(["fuji_0"]), ask, reply_tokens=64)
    assert d.error is not None and not d.tool_calls and d.final is None
    assert "cut off at 64 tokens by the token limit twice" in d.error
    assert d.cut_off and d.completion_tokens == 128


async def test_a_reply_that_only_repeats_searches_is_asked_again_once_told_so():
    """The 1.5B at temperature 0 copied the seed search as its first decision (benchmarks/
    real_model.py): the harness would answer it and count a failed turn, so it is asked
    again once, after that answer."""
    v = view(["fuji_0", "etna_2"]).model_copy(update={"search_hits": {"q0": ["fuji_0", "etna_2"]}})
    asked: list[list[Message]] = []
    schemas: list[dict] = []
    replies = [
        ConstrainedReply(
            content='{"calls": [{"name": "search_corpus", "arguments": {"query": " Q0 "}}]}',
            prompt_tokens=900,
            completion_tokens=20,
        ),
        ConstrainedReply(content='{"final": ["etna_2", "fuji_0"]}', completion_tokens=12),
    ]

    async def ask(messages, schema):
        asked.append(messages)
        schemas.append(schema)
        return replies.pop(0)

    d = await constrained_turn(v, ask, reply_tokens=768)
    assert [f.id for f in d.final or []] == ["etna_2", "fuji_0"]
    # Asked again, it may not search (the system message, cached by the server, is kept).
    assert "search_corpus" in call_schemas(schemas[0])
    assert set(call_schemas(schemas[1])) == {"grep_corpus", "read_document", "prune_chunks"}
    assert "final" in branches(schemas[1])
    assert d.prompt_tokens == 900 and d.completion_tokens == 32
    first, second = asked
    assert second[: len(first)] == first
    assert second[-2].role == "assistant" and '"query": " Q0 "' in second[-2].content
    assert second[-1].role == "user" and 'search_corpus("q0") already ran' in second[-1].content
    assert "This reply cannot search" in second[-1].content
    assert "fuji_0, etna_2" in second[-1].content


async def test_a_new_search_beside_a_repeat_is_taken_at_once():
    v = view(["fuji_0"]).model_copy(update={"search_hits": {"q0": ["fuji_0"]}})
    asked = []
    content = json.dumps(
        {
            "calls": [
                {"name": "search_corpus", "arguments": {"query": "q0"}},
                {"name": "search_corpus", "arguments": {"query": "Etna eruptions"}},
            ]
        }
    )

    async def ask(messages, schema):
        asked.append(messages)
        return ConstrainedReply(content=content, completion_tokens=30)

    d = await constrained_turn(v, ask, reply_tokens=768)
    assert len(asked) == 1 and d.answer_repeats
    assert [c.arguments["query"] for c in d.tool_calls] == ["q0", "Etna eruptions"]


@pytest.mark.parametrize(
    ("final", "content", "listed"),
    [
        ("list", '{"final": ["富士山_1", "fuji_0"]}', ["富士山_1", "fuji_0"]),
        (
            "grades",
            '{"final": {"fuji_0": 1, "etna_2": 0, "富士山_1": 2}}',
            ["富士山_1", "fuji_0", "etna_2"],
        ),
    ],
)
async def test_the_last_turn_offers_only_the_final_list(final, content, listed):
    """Left free to the end, the 1.5B kept searching: 13 of 16 seeded episodes stopped at
    max_turns with no list of its own. Its last turn now admits only the final list, with
    the system message (which the server caches) unchanged and a note after the rest."""
    v = view(["fuji_0", "etna_2"], ["富士山_1"], final=final)
    asked: list[tuple[list[Message], dict]] = []

    async def ask(messages, schema):
        asked.append((messages, schema))
        return ConstrainedReply(content=content, completion_tokens=14)

    d = await constrained_turn(v, ask, reply_tokens=768)
    free_messages, free_schema = asked.pop()
    assert "calls" in branches(free_schema)  # turn 2 of 6: calls still offered

    last = v.model_copy(update={"turn": 6})
    d = await constrained_turn(last, ask, reply_tokens=768)
    assert [f.id for f in d.final or []] == listed
    messages, schema = asked.pop()
    assert list(branches(schema)) == ["final"]
    assert branches(schema)["final"] == branches(free_schema)["final"]
    assert messages[:-1] == free_messages
    assert messages[-1].role == "user" and "This is your last turn" in messages[-1].content


@pytest.mark.parametrize(
    ("final", "cut", "shorter", "listed", "note"),
    [
        ("list", '{"final": ["fuji_0", ', '{"final": ["etna_2"]}', ["etna_2"], "last turn"),
        ("grades", '{"final": {"fuji_0": 1, ', '{"final": {"fuji_0": 0}}', ["fuji_0"], "a grade"),
    ],
)
async def test_a_last_turn_cut_off_is_asked_again_for_a_shorter_final_answer(
    final, cut, shorter, listed, note
):
    v = view(["fuji_0", "etna_2", "富士山_1"], final=final).model_copy(update={"turn": 6})
    asked: list[tuple[list[Message], dict]] = []
    replies = [
        ConstrainedReply(content=cut, cut_off=True, completion_tokens=40),
        ConstrainedReply(content=shorter, completion_tokens=8),
    ]

    async def ask(messages, schema):
        asked.append((messages, schema))
        return replies.pop(0)

    d = await constrained_turn(v, ask, reply_tokens=40)
    assert [f.id for f in d.final or []] == listed
    (_, first), (again, second) = asked
    assert list(branches(second)) == ["final"]
    # Fewer ids: a list's bound halved; grades for fewer of the ids shown (24 tokens of
    # room, about ten an id with its grade: two, then one).
    assert final_room(second) < final_room(first)
    assert final == "list" or final_enum(second) == ["fuji_0"]
    assert note in again[-2].content and "cut off" in again[-1].content


def final_room(schema: dict) -> int:
    """How many ids a final answer of `schema` may name."""
    final = branches(schema)["final"]["properties"]["final"]
    return len(final["required"]) if final["type"] == "object" else final["maxItems"]


async def test_a_last_turn_with_nothing_shown_may_still_search():
    # No chunk in the context: there is no list to write, so the schema stays as it was.
    asked: list[dict] = []

    async def ask(messages, schema):
        asked.append(schema)
        return ConstrainedReply(
            content='{"calls": [{"name": "search_corpus", "arguments": {"query": "富士山"}}]}'
        )

    d = await constrained_turn(view().model_copy(update={"turn": 6}), ask, reply_tokens=768)
    assert [c.name for c in d.tool_calls] == ["search_corpus"]
    assert list(branches(asked[0])) == ["calls"]
