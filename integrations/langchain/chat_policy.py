"""Any LangChain chat model that binds tools as the policy of a sift episode.

    from langchain_ollama import ChatOllama
    policy = ChatModelPolicy(ChatOllama(model="qwen3:8b", reasoning=True))
    result = await sift.graphs.asearch(question, corpus, policy=policy)

The model sees the same tools and the same rendered context as with the native Ollama
policy, and its replies are read by the same parser (multi_tool_use in every shape,
argument repair, Context-1's final format). What LangChain cannot carry is carried as
well as it can be: thinking travels in `additional_kwargs["reasoning_content"]` (where
ChatOllama reads and writes it), tool results are matched to their calls by id.

`constrained=True` (automatic for a model class without `bind_tools`) decodes each reply
against the JSON schema of a decision instead of binding tools (issue 45): through
`response_format` for ChatOpenAI (llama.cpp's server, vLLM), else the model's own
structured output (`with_structured_output(schema, method="json_schema")`).
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
from sift.llm import (
    ConstrainedReply,
    build_decision,
    constrained_turn,
    expand_calls,
    group_batches,
    task_prompt,
    tool_schemas,
)
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

    `constrained`: decode each reply against the decision's JSON schema (no tools bound).
    None (auto) turns it on only for a model class that does not implement `bind_tools`:
    whether the model behind a class that does (a ChatOpenAI to llama.cpp serving a small
    model) calls tools well cannot be known from here, so say `constrained=True` for it.
    `reply_tokens`: the reply budget the schema's bounds fit (default: the model's
    `max_tokens` or `num_predict`, else 1024).
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        multi_tool_use: bool = True,
        constrained: bool | None = None,
        reply_tokens: int | None = None,
    ) -> None:
        bind_tools = getattr(type(model), "bind_tools", None)
        if bind_tools is None:
            raise TypeError(f"{type(model).__name__} cannot bind tools; sift needs tool calls")
        if constrained is None:
            # BaseChatModel's own bind_tools only raises NotImplementedError.
            constrained = bind_tools is BaseChatModel.bind_tools
        self.model = model
        self.multi_tool_use = multi_tool_use
        self.constrained = constrained
        self.reply_tokens = reply_tokens or _reply_budget(model)
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
        return ChatModelPolicy(
            model,
            multi_tool_use=self.multi_tool_use,
            constrained=self.constrained,
            reply_tokens=self.reply_tokens,
        )

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

    async def _invoke(self, runnable: Any, messages: list[BaseMessage]) -> Any:
        try:
            return await runnable.ainvoke(messages)
        except (ConnectionError, TimeoutError) as exc:
            raise ModelServerError(
                f"the chat model {type(self.model).__name__} could not be reached: {exc}"
            ) from exc

    async def _ask(self, messages: list[Message], schema: dict[str, Any]) -> ConstrainedReply:
        """One constrained request: the model decoding against `schema`."""
        runnable = _structured(self.model, schema)
        try:
            out = await self._invoke(runnable, to_langchain_messages(messages))
        except Exception as exc:
            cut = _length_cut(exc)
            if cut is None:
                raise
            return cut
        # Structured output with include_raw gives {"raw": AIMessage, "parsed": ...}; the
        # raw reply is read here (its finish reason says whether it was cut off).
        reply = out.get("raw") if isinstance(out, dict) else out
        if not isinstance(reply, AIMessage):
            return ConstrainedReply(content="")
        text, reasoning = _text(reply.content)
        usage = reply.usage_metadata
        return ConstrainedReply(
            content=text,
            thinking=reply.additional_kwargs.get("reasoning_content") or reasoning or None,
            cut_off=_cut_off(reply),
            prompt_tokens=usage["input_tokens"] if usage else None,
            completion_tokens=usage["output_tokens"] if usage else None,
        )

    async def ask_constrained(
        self, messages: list[Message], schema: dict[str, Any]
    ) -> ConstrainedReply:
        """One short question decoded against `schema` (`response_format` for an
        OpenAI-compatible server, else the model's structured output): the
        `ConstrainedAsk` of `sift.graphs.policies.AssistedPlanner`."""
        return await self._ask(messages, schema)

    async def decide(self, view: PolicyView) -> Decision:
        if self.constrained:
            return await constrained_turn(view, self._ask, reply_tokens=self.reply_tokens)
        messages = to_langchain_messages(view.messages) or [
            HumanMessage(content=task_prompt(view.question, view.top_k))
        ]
        reply = await self._invoke(self._bound_for(view), messages)
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


def _reply_budget(model: BaseChatModel) -> int:
    """The most tokens the model may write in a reply, as its own fields say."""
    for name in ("max_tokens", "max_completion_tokens", "num_predict", "max_output_tokens"):
        value = getattr(model, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return 1024


def _is_openai(model: BaseChatModel) -> bool:
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # the OpenAI integration is optional
        return False
    return isinstance(model, BaseChatOpenAI)


def _length_cut(exc: Exception) -> ConstrainedReply | None:
    """A cut-off reply the OpenAI client raised instead of returning (it parses replies
    to a `response_format`, and one stopped by the length limit cannot be parsed)."""
    try:
        from openai import LengthFinishReasonError
    except ImportError:
        return None
    if not isinstance(exc, LengthFinishReasonError):
        return None
    usage = exc.completion.usage
    return ConstrainedReply(
        content="",
        cut_off=True,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
    )


def _structured(model: BaseChatModel, schema: dict[str, Any]) -> Any:
    """The model decoding against `schema`. ChatOpenAI (any OpenAI-compatible server) gets
    the `response_format` that llama.cpp's server and vLLM read
    (`response_format.json_schema.schema`); other models their own structured output."""
    if _is_openai(model):
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "decision", "schema": schema, "strict": True},
        }
        return model.bind(response_format=response_format)
    return model.with_structured_output(schema, method="json_schema", include_raw=True)


def _cut_off(reply: AIMessage) -> bool:
    """Whether the server stopped the reply at its token limit: OpenAI-compatible
    servers say `finish_reason: length`, Anthropic `stop_reason: max_tokens`, Ollama
    (through ChatOllama) `done_reason: length`."""
    meta = reply.response_metadata or {}
    reason = meta.get("finish_reason") or meta.get("stop_reason") or meta.get("done_reason")
    return reason in {"length", "max_tokens"}
