"""Constrained decisions (issue 45): a model's reply decoded against a JSON schema of the
decision, for models without native tool calls (and any model that is asked to).

A small model left free writes prose plans, `<Document>` blocks in place of ids, ids it was
never shown, and replies the token limit cuts off. With its reply decoded against a schema
that admits nothing but what the harness can act on (tool names from an enum, each tool's
arguments typed, strings and lists bounded to fit the reply budget, final ids limited to
the ids its context shows) a 1.5B model's replies went from 1/10 usable to 9/10. So:

- `decision_schema(view, reply_tokens=...)`: the schema, built from what the view's
  context shows; Ollama takes it as `format`, an OpenAI-compatible server (llama.cpp,
  vLLM) as `response_format.json_schema.schema`. Its final answer grades each chunk id
  shown (0-2; the list is by grade, ties in the order shown), or under
  `constrained_final="list"` lists 1 to top_k of them;
- `constrained_messages(view)`: the transcript as the model reads it in this mode (its
  earlier decisions in the same JSON, tool results as plain turns: a model without a
  tool template drops tool messages), after a system message that says the shape;
- `read_decision(...)`: the reply read straight into a `Decision` (no text-call reader);
- `constrained_turn(view, ask, reply_tokens=...)`: one turn for either policy; a reply
  the token limit cut off is asked again once, shorter, and never taken as a decision; a
  reply whose calls are all searches the episode already ran is asked again once, told so
  and offered no search; the last turn (`view.turn >= view.max_turns`) offers only the
  final list, as the no-model planner concludes there too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, ValidationError

from sift.llm._observations import already_searched, block_ids
from sift.llm._prompt import task_prompt
from sift.llm._tools import ARGUMENT_OF, tool_descriptions
from sift.types import Decision, FinalDocument, Message, PolicyView, ToolCall, split_chunk_id

__all__ = [
    "ConstrainedReply",
    "constrained_messages",
    "constrained_turn",
    "context_ids",
    "decision_schema",
    "read_decision",
]

# Above this many ids an enum makes the grammar (and the schema sent with every request)
# large; ids are then limited by a pattern of the shown documents, else by the id shape.
MAX_ENUM_IDS: Final = 256
# What every chunk id looks like (`make_chunk_id`): the last resort of the final list.
ID_PATTERN: Final = r'^[^"<>\n]+_[0-9]+$'
# What a pattern escapes in a document id: only what grammar converters (llama.cpp's
# json-schema-to-grammar, which Ollama uses too) read as an escaped literal; Python's
# re.escape also escapes spaces and dashes, which they do not know.
_REGEX_SPECIAL: Final = re.compile(r"[\\^$.\[\]()|{}*+?]")
# The most calls one reply may hold, and the longest query and regex, in characters.
_MAX_CALLS: Final = 4
_QUERY_CHARS: Final = 200
_PATTERN_CHARS: Final = 120
# Tokens a reply's JSON spends around its values (braces, keys, names), per call and in all.
_CALL_OVERHEAD: Final = 24
_REPLY_OVERHEAD: Final = 16
# Tokens around an id in a final list (quotes, comma) and in a grading (quotes, colon,
# grade, comma). Qwen2.5 writes a hex chunk id at about a token a character: a 23-character
# id cost about 19 tokens in a list and 22 with its grade (the recorded replies,
# benchmarks/results/real_model*_replies.jsonl).
_LISTED_ID_OVERHEAD: Final = 2
_GRADED_ID_OVERHEAD: Final = 4
# What each grade of a graded final answer means: told to the model, and kept as the
# evidence's justification.
_GRADES: Final = {
    2: "it states part of the answer",
    1: "it is about the question",
    0: "it is not about the question",
}


def context_ids(view: PolicyView) -> list[str]:
    """The chunk ids the model's context shows, in the order shown: the blocks of the
    rendered tool results (a pruned chunk's block is no longer rendered). A bare view
    (no transcript yet) falls back on the chunks the episode has not pruned."""
    if not view.messages:
        return [cid for cid, seen in view.seen.items() if not seen.pruned]
    ids: dict[str, None] = {}
    for message in view.messages:
        if message.role == "tool":
            ids.update(dict.fromkeys(block_ids(message.content)))
    return list(ids)


@dataclass(frozen=True)
class _Bounds:
    """How much one reply may hold, so that it fits the reply budget."""

    calls: int
    query_chars: int
    pattern_chars: int
    final_ids: int
    # How many of the ids shown a graded final answer grades (the first shown).
    graded_ids: int


def _bounds(reply_tokens: int, ids: list[str], top_k: int, shorter: bool) -> _Bounds:
    # Strings are bounded in characters; a character may be a token (Japanese, hex
    # ids), so the worst case is counted.
    room = max(1, reply_tokens - _REPLY_OVERHEAD)
    calls = max(1, min(_MAX_CALLS, room // (_QUERY_CHARS + _CALL_OVERHEAD)))
    longest = max((len(i) for i in ids), default=16)
    final_ids = max(1, min(top_k, len(ids) or top_k, room // (longest + _LISTED_ID_OVERHEAD)))
    graded = max(1, min(len(ids) or 1, room // (longest + _GRADED_ID_OVERHEAD)))
    if not shorter:
        return _Bounds(calls, _QUERY_CHARS, _PATTERN_CHARS, final_ids, graded)
    # Asked again after the limit cut a reply off: every bound halved (never below one).
    return _Bounds(
        max(1, calls // 2),
        _QUERY_CHARS // 2,
        _PATTERN_CHARS // 2,
        max(1, final_ids // 2),
        max(1, graded // 2),
    )


def _id_schema(ids: list[str]) -> dict[str, Any]:
    """One chunk id of the context: an enum, or a pattern when an enum would be too long
    (the shown documents' ids with any index; else any id)."""
    if len(ids) <= MAX_ENUM_IDS:
        return {"type": "string", "enum": ids}
    docs = list(dict.fromkeys(s[0] for i in ids if (s := split_chunk_id(i)) is not None))
    if len(docs) <= MAX_ENUM_IDS:
        alternatives = "|".join(_REGEX_SPECIAL.sub(r"\\\g<0>", d) for d in docs)
        return {"type": "string", "pattern": f"^(?:{alternatives})_[0-9]+$"}
    return {"type": "string", "pattern": ID_PATTERN}


def _grades_schema(ids: list[str]) -> dict[str, Any]:
    """A grade for each of `ids`, every one required, in the order shown: an object
    has no repeated key, where a list of ids cannot be kept from repeating one (llama.cpp's
    grammars do not take uniqueItems; asked for ten ids, the 0.5B wrote five twice)."""
    grade = {"type": "integer", "enum": sorted(_GRADES, reverse=True)}
    return {
        "type": "object",
        "properties": dict.fromkeys(ids, grade),
        "required": ids,
        "additionalProperties": False,
    }


def _call_schema(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": [name]},
            "arguments": {
                "type": "object",
                "properties": arguments,
                "required": list(arguments),
                "additionalProperties": False,
            },
        },
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def decision_schema(
    view: PolicyView, *, reply_tokens: int, shorter: bool = False
) -> dict[str, Any]:
    """The JSON schema of one decision for this view: `{"calls": [...]}` (each call a tool
    from the enum with its typed argument) or the final answer: `{"final": {id: grade}}`,
    a grade for each id the context shows (the first that fit the reply budget), or under
    `constrained_final="list"` `{"final": [...]}`, ids the context shows.

    `reply_tokens` is the reply budget (Ollama's num_predict, a chat model's max_tokens):
    the bounds keep a reply within it. `shorter`: halved bounds, for a reply asked again
    after the limit cut it off. read_document, prune_chunks and the final list are offered
    only when the context shows a chunk."""
    ids = context_ids(view)
    bounds = _bounds(reply_tokens, ids, view.top_k, shorter)
    calls = [
        _call_schema(
            "search_corpus",
            {"query": {"type": "string", "minLength": 1, "maxLength": bounds.query_chars}},
        ),
        _call_schema(
            "grep_corpus",
            {"pattern": {"type": "string", "minLength": 1, "maxLength": bounds.pattern_chars}},
        ),
    ]
    options: list[dict[str, Any]] = []
    if ids:
        one_id = _id_schema(ids)
        docs = list(dict.fromkeys(s[0] for i in ids if (s := split_chunk_id(i)) is not None))
        if docs:
            doc = (
                {"type": "string", "enum": docs}
                if len(docs) <= MAX_ENUM_IDS
                else {"type": "string", "minLength": 1, "maxLength": 512}
            )
            calls.append(_call_schema("read_document", {"doc_id": doc}))
        prune = {"type": "array", "items": one_id, "minItems": 1, "maxItems": len(ids)}
        calls.append(_call_schema("prune_chunks", {"chunk_ids": prune}))
        if _graded_mode(view):
            options.append(_branch("final", _grades_schema(ids[: bounds.graded_ids])))
        else:
            # At least one id, not top_k: asked for 10, the 1.5B filled the list with its
            # own picks where it had listed 1-5 before, and lost gold that the harness's
            # fill (in the order the context showed, the plain search's first) had kept;
            # the 0.5B repeated ids (benchmarks/results/real_model.md).
            final = {
                "type": "array",
                "items": one_id,
                "minItems": 1,
                "maxItems": bounds.final_ids,
            }
            options.append(_branch("final", final))
    batch = {"type": "array", "items": {"anyOf": calls}, "minItems": 1, "maxItems": bounds.calls}
    return {"anyOf": [_branch("calls", batch), *options]}


def _final_only(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The decision's schema with only the final list left (None when the context shows
    no chunk, so there is nothing to list)."""
    finals = [b for b in schema["anyOf"] if "final" in b["properties"]]
    return {"anyOf": finals} if finals else None


def _for_turn(
    view: PolicyView, messages: list[Message], schema: dict[str, Any]
) -> tuple[list[Message], dict[str, Any]]:
    """The request of this turn: on the last one (`view.max_turns`), only the final list,
    and the model told so; otherwise as given."""
    final_only = _final_only(schema) if view.turn >= view.max_turns else None
    if final_only is None:
        return messages, schema
    note = _LAST_TURN_GRADES if _graded_mode(view) else _LAST_TURN_NOTE
    return [*messages, Message(role="user", content=note)], final_only


def _branch(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: value},
        "required": [key],
        "additionalProperties": False,
    }


def _instructions(view: PolicyView, schema: dict[str, Any]) -> str:
    """What the model is told of the reply's shape (the server enforces it; the model
    still has to know what the fields mean)."""
    descriptions = tool_descriptions(view.search_max_chunks, view.grep_max_hits)
    branches = {next(iter(b["properties"])): b["properties"] for b in schema["anyOf"]}
    batch = branches["calls"]["calls"]
    offered = [c["properties"]["name"]["enum"][0] for c in batch["items"]["anyOf"]]
    tools = "\n".join(
        f'- {name} {{"{ARGUMENT_OF[name]}": ...}}: {descriptions[name]}' for name in offered
    )
    lines = [
        "Reply with one JSON object and nothing else, in one of these forms.",
        f'{{"calls": [{{"name": <tool>, "arguments": {{...}}}}, ...]}}: up to '
        f"{batch['maxItems']} tool calls, run together. The tools:",
        tools,
    ]
    final = branches.get("final", {}).get("final")
    if final is not None and final["type"] == "object":
        meaning = ", ".join(f"{g} ({what})" for g, what in _GRADES.items())
        lines.append(
            f'{{"final": {{<chunk id>: <grade>, ...}}}}: your final answer, once the chunks '
            "cover every part of the question: each of the first "
            f"{len(final['required'])} chunk ids shown in the context, in the order shown, "
            f"graded {meaning}."
        )
    elif final is not None:
        lines.append(
            f'{{"final": [<chunk id>, ...]}}: your final list, up to '
            f"{final['maxItems']} chunk ids shown in the context, most "
            "relevant first, once they cover every part of the question."
        )
    lines.append("A search already run is not run again: search for what is still missing.")
    return "\n".join(lines)


def _decision_json(calls: list[ToolCall]) -> str:
    """Calls as the model writes them in this mode (a batch's calls flattened)."""
    shown = [{"name": c.name, "arguments": c.arguments} for c in calls]
    return json.dumps({"calls": shown}, ensure_ascii=False)


def constrained_messages(view: PolicyView, schema: dict[str, Any]) -> list[Message]:
    """The transcript for a constrained turn: a system message with the reply's shape, the
    task message asking for the final list as JSON, the model's earlier calls as the JSON
    it wrote, tool results as user turns."""
    out = [Message(role="system", content=_instructions(view, schema))]
    plain_task = task_prompt(view.question, view.top_k)
    task = task_prompt(
        view.question,
        view.top_k,
        constrained=True,
        graded=_graded_mode(view),
    )
    if not view.messages:
        return [*out, Message(role="user", content=task)]
    for m in view.messages:
        if m.role == "user" and m.content == plain_task:
            out.append(Message(role="user", content=task))
        elif m.role == "assistant" and m.tool_calls:
            out.append(Message(role="assistant", content=_decision_json(m.tool_calls)))
        elif m.role == "tool":
            out.append(
                Message(role="user", content=f"[{m.tool_name or 'tool'} results]\n{m.content}")
            )
        else:
            out.append(Message(role=m.role, content=m.content))
    return out


class _Call(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any]


class _Reply(BaseModel):
    """The decision's shape, as read back (the schema's enums are checked after)."""

    model_config = ConfigDict(extra="forbid")

    calls: list[_Call] | None = None
    # A list of ids, or a grade for each id (HarnessConfig.constrained_final).
    final: list[str] | dict[str, int] | None = None


def read_decision(
    content: str,
    view: PolicyView,
    *,
    thinking: str | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> Decision:
    """A constrained reply as a Decision: its calls, else its final list of ids the context
    shows; anything else (a server that ignored the schema) is a policy error that says
    what was wrong. Final ids the context does not show are dropped: they cannot be what
    the model read."""
    common: dict[str, Any] = {
        "thinking": thinking or None,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
    }
    try:
        reply = _Reply.model_validate_json(content.strip() or "null")
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"] if exc.errors() else str(exc)
        return Decision(
            error=f"the reply is not the decision's JSON ({problem}): {content[:200]!r}",
            **common,
        )
    if reply.calls:
        calls = [
            ToolCall(id=f"t{view.turn}_{n}", name=c.name, arguments=c.arguments)
            for n, c in enumerate(reply.calls)
        ]
        return Decision(tool_calls=calls, answer_repeats=True, **common)
    if isinstance(reply.final, dict):
        if reply.final:
            return _graded(reply.final, view, common)
    elif reply.final:
        shown = set(context_ids(view))
        kept = list(dict.fromkeys(i for i in reply.final if i in shown))
        if not kept:
            return Decision(
                error="the final list names no chunk id shown in the context: "
                + ", ".join(reply.final[:10]),
                **common,
            )
        return Decision(final=[FinalDocument(id=i) for i in kept], **common)
    return Decision(error="the reply held neither calls nor a final list", **common)


def _graded(grades: dict[str, int], view: PolicyView, common: dict[str, Any]) -> Decision:
    """A graded final answer as the final list: every id graded that the context shows, by
    grade, ties in the order shown. A 0 goes last, not out: the list ranks what was read,
    as a reranker does, and the harness keeps its first top_k."""
    wrong = {i: g for i, g in grades.items() if g not in _GRADES}
    if wrong:
        return Decision(
            error=f"the final answer grades outside {sorted(_GRADES)}: "
            + ", ".join(f"{i}={g}" for i, g in list(wrong.items())[:5]),
            **common,
        )
    shown = [i for i in context_ids(view) if i in grades]
    if not shown:
        return Decision(
            error="the final answer grades no chunk id shown in the context: "
            + ", ".join(list(grades)[:10]),
            **common,
        )
    ranked = sorted(shown, key=lambda i: -grades[i])  # stable: ties in the order shown
    final = [
        FinalDocument(id=i, justification=f"graded {grades[i]}: {_GRADES[grades[i]]}")
        for i in ranked
    ]
    return Decision(final=final, **common)


@dataclass
class ConstrainedReply:
    """One reply of a constrained request, as a policy reads it off its server."""

    content: str
    thinking: str | None = None
    cut_off: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


# How a policy sends one constrained request: the messages and the schema to decode with.
Ask = Callable[[list[Message], dict[str, Any]], Awaitable[ConstrainedReply]]


def _shorter_note(tokens: int | None) -> str:
    at = f" at {tokens} tokens" if tokens else ""
    return (
        f"[Your reply was cut off{at} by the token limit and was not used. Reply again, "
        "shorter: fewer calls, shorter queries, fewer ids.]"
    )


def _query_key(query: str) -> str:
    # As the harness compares searches (nodes/_calls.py): spacing and case aside.
    return " ".join(query.split()).casefold()


def _repeated_searches(decision: Decision, view: PolicyView) -> list[str] | None:
    """The queries of a decision whose calls are all searches the episode already ran
    (else None): the harness would answer each as such and count the turn as failed."""
    if not decision.tool_calls:
        return None
    ran = {_query_key(q): q for q in view.search_hits}
    queries = [
        c.arguments.get("query") if c.name == "search_corpus" else None for c in decision.tool_calls
    ]
    if all(isinstance(q, str) and _query_key(q) in ran for q in queries):
        return [ran[_query_key(q)] for q in queries if isinstance(q, str)]
    return None


# Told on the last turn, whose schema admits only the final answer. Without it the 1.5B
# kept searching to the end: 13 of 16 seeded constrained episodes stopped at max_turns
# with no list of its own (benchmarks/results/real_model.md).
_LAST_TURN_NOTE: Final = (
    "[This is your last turn: reply with your final list of the chunk ids shown above that "
    "answer the question, most relevant first.]"
)
_LAST_TURN_GRADES: Final = (
    "[This is your last turn: reply with your final answer, a grade for each chunk id shown above.]"
)

# Told with the answer to a reply of repeated searches: the one asked again offers no search
# (told only that the search had run, the 1.5B at temperature 0 wrote it once more).
_NO_SEARCH_NOTE: Final = (
    "[This reply cannot search: conclude with your final list of chunk ids shown above, "
    "or read, grep or prune.]"
)
_NO_SEARCH_GRADES: Final = (
    "[This reply cannot search: conclude with your final answer, a grade for each chunk id "
    "shown above, or read, grep or prune.]"
)


def _graded_mode(view: PolicyView) -> bool:
    return view.constrained_final == "grades"


def _without_search(schema: dict[str, Any]) -> dict[str, Any]:
    """The decision's schema with search_corpus left out of the calls (the system message
    still lists it, so the prompt the server has cached stays valid)."""
    out: dict[str, Any] = json.loads(json.dumps(schema))
    for branch in out["anyOf"]:
        batch = branch["properties"].get("calls")
        if batch is not None:
            batch["items"]["anyOf"] = [
                c
                for c in batch["items"]["anyOf"]
                if c["properties"]["name"]["enum"] != ["search_corpus"]
            ]
    return out


async def constrained_turn(view: PolicyView, ask: Ask, *, reply_tokens: int) -> Decision:
    """One constrained turn. A reply cut off by the token limit is never a decision: it
    is asked again once, with a note and halved bounds; cut off again, the turn is a
    policy error that says so. A reply whose calls are all searches the episode already
    ran (a small model at temperature 0 copies the seed search, or its own last one) is
    asked again once, after the harness's answer to it, with search_corpus left out of
    the schema; the second reply is the decision. `prompt_tokens` is the first request's
    (the one that matches the view, from which the harness corrects its estimates);
    completion tokens are both replies'."""
    schema = decision_schema(view, reply_tokens=reply_tokens)
    # The system message always lists the whole shape, so the prompt the server cached
    # stays valid on the last turn; the note and the schema sent narrow it.
    messages, schema = _for_turn(view, constrained_messages(view, schema), schema)
    first = await ask(messages, schema)
    if not first.cut_off:
        decision = read_decision(
            first.content,
            view,
            thinking=first.thinking,
            prompt_tokens=first.prompt_tokens,
            completion_tokens=first.completion_tokens,
        )
        repeated = _repeated_searches(decision, view)
        if repeated is None:
            return decision
        told = "\n".join(already_searched(q, view.search_hits[q]) for q in dict.fromkeys(repeated))
        conclude = _NO_SEARCH_GRADES if _graded_mode(view) else _NO_SEARCH_NOTE
        again = await ask(
            [
                *messages,
                Message(role="assistant", content=first.content),
                Message(role="user", content=f"{told}\n{conclude}"),
            ],
            _without_search(schema),
        )
        if again.cut_off:
            # Not taken: the first decision stands, and the harness answers its repeats.
            return decision.model_copy(
                update={
                    "completion_tokens": (first.completion_tokens or 0)
                    + (again.completion_tokens or 0)
                    or None
                }
            )
        return read_decision(
            again.content,
            view,
            thinking=again.thinking,
            prompt_tokens=first.prompt_tokens,
            completion_tokens=(first.completion_tokens or 0) + (again.completion_tokens or 0)
            or None,
        )
    note = Message(role="user", content=_shorter_note(first.completion_tokens))
    shorter = decision_schema(view, reply_tokens=reply_tokens, shorter=True)
    retry, shorter = _for_turn(view, constrained_messages(view, shorter), shorter)
    second = await ask([*retry, note], shorter)
    spent = (first.completion_tokens or 0) + (second.completion_tokens or 0) or None
    if second.cut_off:
        at = f" at {second.completion_tokens} tokens" if second.completion_tokens else ""
        return Decision(
            error=f"the reply was cut off{at} by the token limit twice, the second time "
            f"asked for a shorter one (reply budget {reply_tokens} tokens)",
            prompt_tokens=first.prompt_tokens,
            completion_tokens=spent,
            cut_off=True,
        )
    return read_decision(
        second.content,
        view,
        thinking=second.thinking,
        prompt_tokens=first.prompt_tokens,
        completion_tokens=spent,
    )
