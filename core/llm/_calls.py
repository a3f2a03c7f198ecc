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
from collections.abc import Iterable, Mapping
from typing import Any

from sift.llm._json import first_json_value
from sift.llm._tools import ARGUMENT_OF, MULTI_TOOL, TOOL_NAMES
from sift.types import ToolCall

__all__ = [
    "UNPARSED_KEY",
    "calls_in_content",
    "expand_calls",
    "group_batches",
    "infer_tool_name",
    "normalise_name",
]

# Key under which arguments that could not be read reach the harness, verbatim, so its
# error observation can quote them back to the model.
UNPARSED_KEY = "_unparsed_arguments"

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


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def calls_in_content(content: str, *, id_prefix: str) -> list[ToolCall]:
    """Tool calls a model wrote as its answer text instead of calling (a JSON object or
    array and nothing else, naming a known tool or shaped like one); else none."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text.startswith(("{", "[")):
        return []
    try:
        value = first_json_value(text)
    except ValueError:
        return []
    if isinstance(value, Mapping) and isinstance(value.get("name"), str):
        name = normalise_name(value["name"])
        args = value.get("arguments", value.get("parameters", {}))
    else:
        name, args = infer_tool_name(value) or "", value
    if name not in (*TOOL_NAMES, MULTI_TOOL):
        return []
    return expand_calls([(name, args)], id_prefix=id_prefix)
