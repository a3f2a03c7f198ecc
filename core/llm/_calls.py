"""Reading a model's tool calls: names, arguments, `multi_tool_use` batches.

Models get these wrong in a few recurring ways, and each repair here is one that cannot
change what the model meant:
- prose around the JSON arguments, or a regex with a lone backslash (see `_json`);
- `multi_tool_use` arrives as `{"tool_calls": [...]}`, as OpenAI's
  `{"tool_uses": [{"recipient_name": "functions.x", "parameters": {...}}]}`, or as a bare
  array (the format Context-1 was trained on);
- names carry harmony's `functions.` prefix.
Anything that still makes no sense is passed on as a call the harness answers with an
error observation, so the model learns what was wrong; nothing is dropped silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sift.llm._json import balanced_end, first_json_value
from sift.llm._tools import ARGUMENT_OF, MULTI_TOOL, TOOL_NAMES
from sift.types import ToolCall

__all__ = [
    "UNPARSED_KEY",
    "UNREADABLE",
    "TextCalls",
    "calls_in_content",
    "expand_calls",
    "group_batches",
    "infer_tool_name",
    "normalise_name",
    "read_text_calls",
]

# Key under which arguments that could not be read reach the harness, verbatim, so its
# error observation can quote them back to the model.
UNPARSED_KEY = "_unparsed_arguments"
# Name of a call written as text that could not be read (a fence or tag holding no
# readable call, or a call cut off mid-way): the harness answers it with an error.
UNREADABLE = "<unreadable call>"

# Disjoint required keys let us name a call whose name a server's error message lost.
_KEY_TO_TOOL = {
    **{argument: tool for tool, argument in ARGUMENT_OF.items()},
    "tool_calls": MULTI_TOOL,
    "tool_uses": MULTI_TOOL,
}


def normalise_name(name: str) -> str:
    name = name.strip()
    for prefix in ("functions.", "tools."):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    # OpenAI's trained recipient for parallel calls is `multi_tool_use.parallel`.
    if name.startswith(MULTI_TOOL):
        return MULTI_TOOL
    return name


def infer_tool_name(arguments: Any) -> str | None:
    """Which tool a bare argument value belongs to, when that is unambiguous."""
    if isinstance(arguments, list):
        return MULTI_TOOL
    if isinstance(arguments, Mapping):
        names = {_KEY_TO_TOOL[k] for k in arguments if k in _KEY_TO_TOOL}
        if len(names) == 1:
            return names.pop()
    return None


def _as_arguments(raw: Any) -> dict[str, Any]:
    """Arguments as a dict, or the raw text under UNPARSED_KEY when unreadable."""
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            value = first_json_value(raw, arrays=False)
        except ValueError:
            return {UNPARSED_KEY: raw}
        if isinstance(value, Mapping):
            return dict(value)
    return {UNPARSED_KEY: raw if isinstance(raw, str) else json.dumps(raw)}


def _repair_base(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    # A prune list written as one string ("a_0, b_1" or '["a_0"]') is unambiguous.
    ids = arguments.get("chunk_ids")
    if name == "prune_chunks" and isinstance(ids, str):
        try:
            parsed = json.loads(ids)
        except ValueError:
            parsed = [p for p in re.split(r"[\s,]+", ids) if p]
        arguments = {**arguments, "chunk_ids": parsed if isinstance(parsed, list) else [ids]}
    return arguments


def _batch_items(arguments: Any) -> list[Any] | None:
    """The list of calls in a `multi_tool_use` argument, whatever its shape."""
    if isinstance(arguments, str):
        try:
            arguments = first_json_value(arguments)
        except ValueError:
            return None
    if isinstance(arguments, list):
        return arguments
    if isinstance(arguments, Mapping):
        for key in ("tool_calls", "tool_uses", "calls"):
            if key in arguments:
                return _batch_items(arguments[key])
    return None


def _item_call(item: Any) -> tuple[str, Any]:
    if isinstance(item, str):
        try:
            item = first_json_value(item)
        except ValueError:
            return "", item
    if not isinstance(item, Mapping):
        return "", item
    fn = item.get("function")
    if isinstance(fn, Mapping):
        item = fn
    name = item.get("name") or item.get("recipient_name") or item.get("tool") or ""
    args = item.get("arguments", item.get("parameters", item.get("args")))
    if args is None:
        # Some models inline the arguments next to the name.
        args = {k: v for k, v in item.items() if k not in {"name", "recipient_name", "tool"}}
    if not name:
        name = infer_tool_name(args) or ""
    return str(name), args


def expand_calls(
    raw_calls: Iterable[tuple[str, Any]], *, id_prefix: str = "call"
) -> list[ToolCall]:
    """Tool calls as the harness runs them: names normalised, arguments repaired,
    `multi_tool_use` expanded into calls sharing a batch id."""
    calls: list[ToolCall] = []
    for n, (raw_name, raw_args) in enumerate(raw_calls):
        name = normalise_name(raw_name or "") or (infer_tool_name(raw_args) or "")
        call_id = f"{id_prefix}_{n}"
        if name == MULTI_TOOL:
            items = _batch_items(raw_args)
            if items is None:
                calls.append(
                    ToolCall(id=call_id, name=MULTI_TOOL, arguments=_as_arguments(raw_args))
                )
                continue
            for m, item in enumerate(items):
                item_name, item_args = _item_call(item)
                item_name = normalise_name(item_name)
                args = _as_arguments(item_args)
                if item_name in TOOL_NAMES:
                    args = _repair_base(item_name, args)
                calls.append(
                    ToolCall(
                        id=f"{call_id}_{m}",
                        name=item_name or "<missing name>",
                        arguments=args,
                        batch_id=call_id,
                    )
                )
            continue
        args = _as_arguments(raw_args)
        if name in TOOL_NAMES:
            args = _repair_base(name, args)
        calls.append(ToolCall(id=call_id, name=name or "<missing name>", arguments=args))
    return calls


def group_batches(calls: Iterable[ToolCall]) -> list[tuple[str, str, dict[str, Any]]]:
    """The calls as the model wrote them, (id, name, arguments) each: the calls of one
    batch become the one `multi_tool_use` call they came from, with the batch id."""
    groups: list[tuple[str, str, dict[str, Any]]] = []
    batches: dict[str, list[dict[str, Any]]] = {}
    for n, call in enumerate(calls):
        if call.batch_id is None:
            groups.append((call.id or f"call_{n}", call.name, call.arguments))
            continue
        items = batches.get(call.batch_id)
        if items is None:
            items = batches[call.batch_id] = []
            groups.append((call.batch_id, MULTI_TOOL, {"tool_calls": items}))
        items.append({"name": call.name, "arguments": call.arguments})
    return groups


# What a call written as text may be wrapped in: a Markdown fence (any language tag) or
# Qwen's own `<tool_call>` tags. Either may be left open when a reply was cut off.
_OPENER = re.compile(r"```[\w+-]*[ \t]*\n?|<tool_call>", re.IGNORECASE)
_CLOSER = {"`": "```", "<": "</tool_call>"}
# A block's text when it reaches an error observation (long enough to recognise it).
_SHOWN = 300


@dataclass
class TextCalls:
    """The calls a model wrote in its answer text, in the order written.

    `calls` holds every call found, readable or not: a block that could not be read is a
    call named `UNREADABLE` whose arguments quote it, so that the harness answers it
    with an error observation. `prose` is the text outside every call. `open_block` is
    True when the text ends inside a call (a reply cut off mid-call).
    """

    calls: list[ToolCall] = field(default_factory=list)
    prose: str = ""
    open_block: bool = False


def _call_shaped(value: Any) -> bool:
    """A JSON value that is a call: a name with arguments, a tool's own argument, or a
    list of those (`multi_tool_use`'s bare array)."""
    if isinstance(value, list):
        return bool(value) and all(_call_shaped(item) for item in value)
    if not isinstance(value, Mapping):
        return False
    fn = value.get("function")
    if isinstance(fn, Mapping):
        value = fn
    name = value.get("name", value.get("recipient_name"))
    if isinstance(name, str) and name.strip():
        return True
    return infer_tool_name(value) is not None


def _raw_call(value: Any) -> tuple[str, Any]:
    if isinstance(value, list):
        return MULTI_TOOL, value
    fn = value.get("function")
    if isinstance(fn, Mapping):
        value = fn
    name = value.get("name", value.get("recipient_name"))
    if isinstance(name, str) and name.strip():
        args = value.get("arguments", value.get("parameters", value.get("args")))
        if args is None:
            args = {k: v for k, v in value.items() if k not in {"name", "recipient_name"}}
        return name, args
    return infer_tool_name(value) or "", value


def _json_spans(text: str, pos: int, stop: int) -> Iterator[tuple[int, int, Any]]:
    """(start, end, value) of each complete JSON value written in text[pos:stop], in
    order; a `{` or `[` that does not parse is passed over; ends at a value left open."""
    i = pos
    while i < stop:
        if text[i] not in "{[":
            i += 1
            continue
        end = balanced_end(text, i)
        if end is None or end > stop:
            return
        try:
            value = first_json_value(text[i:end])
        except ValueError:
            i += 1
            continue
        yield i, end, value
        i = end


def _values(body: str) -> tuple[list[Any], list[str]]:
    """The JSON values written one after another in `body`, and the pieces of it that are
    not JSON (prose, or a value that does not parse)."""
    values: list[Any] = []
    rest: list[str] = []
    mark = 0
    for start, end, value in _json_spans(body, 0, len(body)):
        rest.append(body[mark:start])
        values.append(value)
        mark = end
    rest.append(body[mark:])
    return values, rest


def read_text_calls(content: str, *, id_prefix: str) -> TextCalls:
    """Every call written in a reply's text, in order, whatever the wrapping: fenced
    blocks (one or several), `<tool_call>` tags, bare JSON objects one after another,
    with prose before, between or after them; a call inside `multi_tool_use` is
    expanded. A fence or tag whose body holds no readable call becomes an `UNREADABLE`
    call quoting it (a fence whose body is not JSON at all, such as a code sample, is
    prose). Text holding no call yields no call."""
    out = TextCalls()
    raw: list[tuple[str, Any]] = []
    prose: list[str] = []
    pos = 0
    while pos < len(content):
        opener = _OPENER.search(content, pos)
        bare = _next_bare(content, pos, opener.start() if opener else len(content))
        if bare is not None:
            start, end, value = bare
            prose.append(content[pos:start])
            raw.append(_raw_call(value))
            pos = end
            continue
        if opener is None:
            if _opens_call(content[pos:]):
                # A bare call still open at the end: the reply stopped inside it.
                out.open_block = True
                cut = _first_open(content, pos)
                prose.append(content[pos:cut])
                raw.append((UNREADABLE, {UNPARSED_KEY: content[cut:][:_SHOWN]}))
            else:
                prose.append(content[pos:])
            break
        prose.append(content[pos : opener.start()])
        closer = _CLOSER[opener.group()[0]]
        close = content.find(closer, opener.end())
        body = content[opener.end() : close if close >= 0 else len(content)]
        pos = len(content) if close < 0 else close + len(closer)
        values, rest = _values(body)
        calls = [v for v in values if _call_shaped(v)]
        leftover = "".join(rest).strip()
        if close < 0:
            out.open_block = True
        if calls:
            raw.extend(_raw_call(v) for v in calls)
            if close < 0 and _opens_call(leftover):
                raw.append((UNREADABLE, {UNPARSED_KEY: leftover[:_SHOWN]}))
        elif opener.group().startswith("<") or (body.lstrip()[:1] in ("{", "[")):
            # A tag, or a fence that holds JSON-like text, was meant as a call.
            raw.append((UNREADABLE, {UNPARSED_KEY: body.strip()[:_SHOWN]}))
        else:
            prose.append(opener.group() + body + ("" if close < 0 else closer))
    out.calls = expand_calls(raw, id_prefix=id_prefix)
    out.prose = _tidy("".join(prose))
    return out


def _next_bare(text: str, pos: int, stop: int) -> tuple[int, int, Any] | None:
    """The first complete bare JSON call in text[pos:stop], as (start, end, value)."""
    spans = _json_spans(text, pos, stop)
    return next((span for span in spans if _call_shaped(span[2])), None)


_CALL_START = re.compile(
    r"[{\[]\s*\"(?:name|function|recipient_name|tool_calls|tool_uses|"
    + "|".join(ARGUMENT_OF.values())
    + r")\""
)


def _opens_call(text: str) -> bool:
    return _CALL_START.search(text) is not None


def _first_open(text: str, pos: int) -> int:
    match = _CALL_START.search(text, pos)
    return match.start() if match else pos


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def calls_in_content(content: str, *, id_prefix: str) -> list[ToolCall]:
    """The calls a model wrote in its answer text (see `read_text_calls`)."""
    return read_text_calls(content, id_prefix=id_prefix).calls
