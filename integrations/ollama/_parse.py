"""Reading what a model wrote: tool-call arguments, `multi_tool_use` batches, final answers.

Models served through Ollama get these wrong in a few recurring ways, and each repair
here is one that cannot change what the model meant:
- gpt-oss writes prose around its JSON, or a regex with a lone backslash (`"\\d{4}"`),
  which Ollama cannot parse and answers with HTTP 500 `error parsing tool call:
  raw='...'`; we take the first balanced JSON value and double stray backslashes;
- `multi_tool_use` arrives as `{"tool_calls": [...]}`, as OpenAI's
  `{"tool_uses": [{"recipient_name": "functions.x", "parameters": {...}}]}`, or as a bare
  array (the format Context-1 was trained on, which Ollama cannot parse into an object);
- names carry harmony's `functions.` prefix.
Anything that still makes no sense is passed on as a call the harness answers with an
error observation, so the model learns what was wrong; nothing is dropped silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from sift.integrations.ollama._tools import BASE_TOOLS, MULTI_TOOL
from sift.types import Decision, FinalDocument, PolicyView, ToolCall

__all__ = [
    "UNPARSED_KEY",
    "build_decision",
    "calls_in_content",
    "expand_calls",
    "first_json_value",
    "group_batches",
    "infer_tool_name",
    "parse_final",
    "parse_ollama_tool_error",
]

# Key under which arguments that could not be read reach the harness, verbatim, so its
# error observation can quote them back to the model.
UNPARSED_KEY = "_unparsed_arguments"

_VALID_ESCAPES = set('"\\/bfnrtu')

# Disjoint required keys let us name a call whose name Ollama's error message lost.
_KEY_TO_TOOL = {
    "query": "search_corpus",
    "pattern": "grep_corpus",
    "doc_id": "read_document",
    "chunk_ids": "prune_chunks",
    "tool_calls": MULTI_TOOL,
    "tool_uses": MULTI_TOOL,
}


# --------------------------------------------------------------------------- JSON repair


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the JSON value opening at `start`, honouring strings."""
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _fix_escapes(text: str) -> str:
    """Doubles backslashes inside strings that do not start a valid JSON escape."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_string and c == "\\":
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if nxt in _VALID_ESCAPES and nxt:
                out.append(c + nxt)
                i += 2
                continue
            out.append("\\\\")
            i += 1
            continue
        if c == '"':
            in_string = not in_string
        elif in_string and c == "\n":
            out.append("\\n")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    for candidate in (_fix_escapes(text), _TRAILING_COMMA.sub(r"\1", _fix_escapes(text))):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise ValueError("not JSON")


def first_json_value(text: str, *, arrays: bool = True) -> Any:
    """The JSON value in `text`, else the first balanced object (or array) in it, with
    stray escapes repaired. Raises ValueError when there is none."""
    text = text.strip()
    try:
        return _loads(text)
    except ValueError:
        pass
    openers = "{[" if arrays else "{"
    for start, c in enumerate(text):
        if c not in openers:
            continue
        end = _balanced_end(text, start)
        if end is None:
            continue
        try:
            return _loads(text[start:end])
        except ValueError:
            continue
    raise ValueError("no JSON object found")


# --------------------------------------------------------------------------- tool calls


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
                if item_name in BASE_TOOLS:
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
        if name in BASE_TOOLS:
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


_OLLAMA_TOOL_ERROR = re.compile(r"error parsing tool call: raw='(.*)', err=", re.DOTALL)


def parse_ollama_tool_error(message: str, *, id_prefix: str = "repaired") -> list[ToolCall] | None:
    """Tool calls recovered from Ollama's `error parsing tool call: raw='...'` reply,
    or None when the raw text holds no usable call."""
    match = _OLLAMA_TOOL_ERROR.search(message)
    if not match:
        return None
    try:
        value = first_json_value(match.group(1))
    except ValueError:
        return None
    name = infer_tool_name(value)
    if name is None:
        return None
    calls = expand_calls([(name, value)], id_prefix=id_prefix)
    return calls or None


# --------------------------------------------------------------------------- final answer

_DOCUMENT = re.compile(
    r"<Document\s+id\s*=\s*(?:\"([^\"]+)\"|'([^']+)'|([^\s>]+))\s*/?>"
    r"(.*?)(?=<Document\s+id\s*=|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_JUSTIFICATION = re.compile(
    r"<Justification>\s*(.*?)\s*(?:</Justification>|</Document>|\Z)", re.DOTALL | re.IGNORECASE
)
_CLOSE_TAGS = re.compile(r"</?(?:Document|Justification)>", re.IGNORECASE)
_ID_TOKEN = re.compile(r"[^\s,;\[\]\"'`()<>]+")


def _documents(text: str) -> list[FinalDocument]:
    out: list[FinalDocument] = []
    seen: set[str] = set()
    for match in _DOCUMENT.finditer(text):
        doc_id = next(g for g in match.groups()[:3] if g).strip().rstrip(",.;")
        if doc_id in seen:
            continue
        seen.add(doc_id)
        body = match.group(4)
        just = _JUSTIFICATION.search(body)
        reason = just.group(1) if just else _CLOSE_TAGS.split(body)[0]
        out.append(FinalDocument(id=doc_id, justification=" ".join(reason.split())))
    return out


def _id_list(text: str, known: Iterable[str]) -> list[FinalDocument]:
    known_set = set(known)
    if not known_set:
        return []
    out: list[str] = []
    for token in _ID_TOKEN.findall(text):
        token = token.strip(".:*#")
        if token in known_set and token not in out:
            out.append(token)
    return [FinalDocument(id=i) for i in out]


def parse_final(
    content: str, thinking: str | None, known_ids: Iterable[str] = ()
) -> tuple[list[FinalDocument] | None, bool]:
    """The final documents of an answer, and whether they came from the thinking text.

    `<Document id=...>` blocks are read from the answer, else from the thinking; a plain
    list of ids is accepted only for ids the episode has actually seen, so prose is never
    mistaken for an answer. None when neither holds an answer.
    """
    known = list(known_ids)
    docs = _documents(content)
    if docs:
        return docs, False
    docs = _id_list(content, known)
    if docs:
        return docs, False
    if thinking:
        docs = _documents(thinking)
        if docs:
            return docs, True
    return None, False


# --------------------------------------------------------------------------- decisions

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
    if name not in (*BASE_TOOLS, MULTI_TOOL):
        return []
    return expand_calls([(name, args)], id_prefix=id_prefix)


def build_decision(
    calls: list[ToolCall],
    *,
    content: str,
    thinking: str | None,
    view: PolicyView,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    truncated_hint: str | None = None,
) -> Decision:
    """A model's turn as the harness reads it: tool calls if any, else the final list
    (from the answer, the thinking, or a list of seen ids), else a policy error."""
    common: dict[str, Any] = {
        "content": content,
        "thinking": thinking or None,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
    }
    calls = calls or calls_in_content(content, id_prefix=f"t{view.turn}")
    unread = [c for c in calls if c.name == MULTI_TOOL]
    if unread:
        # The harness knows only the four tools; a batch whose calls could not be read
        # is explained to the model here, with the shape it should have used.
        shown = json.dumps(unread[0].arguments, ensure_ascii=False, default=str)[:300]
        return Decision(
            error='multi_tool_use needs {"tool_calls": [{"name": <tool>, '
            f'"arguments": {{...}}}}, ...]}}; got {shown}',
            **common,
        )
    if calls:
        return Decision(tool_calls=calls, **common)
    known = set(view.seen) | {seen.chunk.doc_id for seen in view.seen.values()}
    final, from_thinking = parse_final(content, thinking, known)
    if final is not None:
        return Decision(final=final, final_from_thinking=from_thinking, **common)
    if not content.strip():
        hint = f"; {truncated_hint}" if truncated_hint else ""
        return Decision(
            error=f"the model replied with neither a tool call nor an answer{hint}", **common
        )
    # Prose without documents: the model is done; the harness concludes with what the
    # episode gathered.
    return Decision(**common)
