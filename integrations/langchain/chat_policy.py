"""Any LangChain chat model that binds tools as the policy of a sift episode.

    from langchain_ollama import ChatOllama
    policy = ChatModelPolicy(ChatOllama(model="qwen3:8b", reasoning=True))
    result = await sift.graphs.asearch(question, corpus, policy=policy)

The model sees the same tools and the same rendered context as with the native Ollama
policy, and its replies are read by the same parser (multi_tool_use in every shape,
argument repair, Context-1's final format). What LangChain cannot carry is carried as
well as it can be: thinking travels in `additional_kwargs["reasoning_content"]` (where
ChatOllama reads and writes it), tool results are matched to their calls by id.
"""

from __future__ import annotations

import itertools
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from sift.errors import ModelServerError
from sift.llm import build_decision, expand_calls, group_batches, task_prompt, tool_schemas
from sift.types import Decision, Message, PolicyView

__all__ = ["ChatModelPolicy", "to_langchain_messages"]


def to_langchain_messages(messages: list[Message]) -> list[BaseMessage]:
    """The rendered context as LangChain messages, tool results paired with their calls."""
    out: list[BaseMessage] = []
    pending: list[tuple[str, str]] = []  # (call id, tool name) awaiting a tool message
    orphans = itertools.count()
    for m in messages:
        if m.role == "system":
            out.append(SystemMessage(content=m.content))
        elif m.role == "user":
            out.append(HumanMessage(content=m.content))
        elif m.role == "assistant":
            groups = group_batches(m.tool_calls)
            pending = [(call_id, name) for call_id, name, _ in groups]
            extra = {"reasoning_content": m.thinking} if m.thinking else {}
            out.append(
                AIMessage(
                    content=m.content,
                    additional_kwargs=extra,
                    tool_calls=[
                        {"id": call_id, "name": name, "args": args, "type": "tool_call"}
                        for call_id, name, args in groups
                    ],
                )
            )
        else:
            if pending:
                call_id, name = pending.pop(0)
            else:
                call_id, name = f"orphan_{next(orphans)}", m.tool_name or "tool"
            out.append(
                ToolMessage(content=m.content, tool_call_id=call_id, name=m.tool_name or name)
            )
    return out


def _text(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a message content that may be a list of blocks."""
    if isinstance(content, str):
        return content, ""
    text: list[str] = []
    reasoning: list[str] = []
    for block in content or ():
        if isinstance(block, str):
            text.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                text.append(str(block.get("text", "")))
            elif kind in {"reasoning", "thinking"}:
                reasoning.append(str(block.get("reasoning") or block.get("thinking") or ""))
    return "".join(text), "".join(reasoning)


class ChatModelPolicy:
    """A Policy over a LangChain chat model with `bind_tools` (ChatOllama, ChatOpenAI, ...).

    `multi_tool_use=False` leaves the batching tool out for models that already emit
    several tool calls per reply. Retries are the model's own (`.with_retry()` on it
    before passing it in would retry the bound model too).
    """

    def __init__(self, model: BaseChatModel, *, multi_tool_use: bool = True) -> None:
        if not hasattr(model, "bind_tools"):
            raise TypeError(f"{type(model).__name__} cannot bind tools; sift needs tool calls")
        self.model = model
        self.multi_tool_use = multi_tool_use
        self._bound: dict[tuple[int, int], Any] = {}

    def fork(self, seed: int) -> ChatModelPolicy:
        """An independent rollout: the model with another seed (and a temperature above
        zero) when it has those fields; otherwise the same model, sampled again."""
        fields = type(self.model).model_fields
        update: dict[str, Any] = {}
        if "seed" in fields:
            update["seed"] = seed
        if "temperature" in fields and not getattr(self.model, "temperature", None):
            update["temperature"] = 1.0
        model = self.model.model_copy(update=update) if update else self.model
        return ChatModelPolicy(model, multi_tool_use=self.multi_tool_use)

    def _bound_for(self, view: PolicyView) -> Any:
        """The model with the tools bound, declared with the view's result sizes."""
        key = (view.search_max_chunks, view.grep_max_hits)
        bound = self._bound.get(key)
        if bound is None:
            tools = tool_schemas(
                search_max_chunks=key[0],
                grep_max_hits=key[1],
                multi_tool_use=self.multi_tool_use,
            )
            bound = self._bound[key] = self.model.bind_tools(tools)
        return bound

    async def decide(self, view: PolicyView) -> Decision:
        messages = to_langchain_messages(view.messages) or [
            HumanMessage(content=task_prompt(view.question, view.top_k))
        ]
        try:
            reply = await self._bound_for(view).ainvoke(messages)
        except (ConnectionError, TimeoutError) as exc:
            raise ModelServerError(
                f"the chat model {type(self.model).__name__} could not be reached: {exc}"
            ) from exc
        if not isinstance(reply, AIMessage):
            return Decision(error=f"the chat model returned {type(reply).__name__}, not a reply")
        text, reasoning = _text(reply.content)
        thinking = reply.additional_kwargs.get("reasoning_content") or reasoning
        raw: list[tuple[str, Any]] = [(c["name"], c["args"]) for c in reply.tool_calls]
        # LangChain keeps arguments it could not parse as text: repair them like ours.
        raw += [(c.get("name") or "", c.get("args")) for c in reply.invalid_tool_calls]
        calls = expand_calls(raw, id_prefix=f"t{view.turn}")
        usage = reply.usage_metadata
        return build_decision(
            calls,
            content=text,
            thinking=thinking,
            view=view,
            prompt_tokens=usage["input_tokens"] if usage else None,
            completion_tokens=usage["output_tokens"] if usage else None,
            cut_off=_cut_off(reply),
        )


def _cut_off(reply: AIMessage) -> bool:
    """Whether the server stopped the reply at its token limit: OpenAI-compatible
    servers say `finish_reason: length`, Anthropic `stop_reason: max_tokens`, Ollama
    (through ChatOllama) `done_reason: length`."""
    meta = reply.response_metadata or {}
    reason = meta.get("finish_reason") or meta.get("stop_reason") or meta.get("done_reason")
    return reason in {"length", "max_tokens"}
