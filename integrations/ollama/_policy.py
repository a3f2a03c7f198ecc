"""The Ollama policy: a model served by Ollama chooses the harness's tool calls.

It speaks Ollama's native `/api/chat` through the official `ollama` AsyncClient (never
the OpenAI-compatible endpoint, which drops `think` levels, `thinking` and exact token
counts). The harness owns the rendered context; this class only translates it to
Ollama's message shape, asks for one turn, and reads the reply back into a Decision.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import ollama
from ollama import ResponseError

from sift.errors import ModelServerError
from sift.integrations.ollama._client import (
    ChatReply,
    ToolParseError,
    call_with_retries,
    chat_once,
    describe_host,
    make_client,
)
from sift.integrations.ollama._settings import OllamaSettings
from sift.integrations.ollama._tool_error import parse_ollama_tool_error
from sift.llm import (
    ConstrainedReply,
    build_decision,
    constrained_messages,
    constrained_turn,
    decision_schema,
    expand_calls,
    group_batches,
    task_prompt,
    tool_schemas,
)
from sift.text import estimate_tokens
from sift.types import Decision, Message, PolicyView

__all__ = ["OllamaPolicy", "policy_from_settings", "render_messages"]

log = logging.getLogger("sift.integrations.ollama")

T = TypeVar("T")


# --------------------------------------------------------------------------- rendering


def render_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """sift messages in Ollama's native chat shape (thinking and tool_name kept)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.role == "assistant":
            if m.thinking:
                # gpt-oss reasons worse across tool turns when its own thinking is dropped.
                item["thinking"] = m.thinking
            if m.tool_calls:
                item["tool_calls"] = [
                    {"function": {"name": name, "arguments": args}}
                    for _, name, args in group_batches(m.tool_calls)
                ]
        elif m.role == "tool" and m.tool_name:
            item["tool_name"] = m.tool_name
        out.append(item)
    return out


# --------------------------------------------------------------------------- the policy


class _Shared:
    """State shared by a policy and its forks: per event loop an HTTP client and the lock
    of the model check; the model's details; a cache of token estimates of texts."""

    def __init__(self) -> None:
        self.loops: dict[
            int, tuple[asyncio.AbstractEventLoop, ollama.AsyncClient, asyncio.Lock]
        ] = {}
        self.family: str | None = None
        self.checked = False
        self.estimates: OrderedDict[str, int] = OrderedDict()
        self.warned = False
        self.tools: dict[tuple[int, int], tuple[list[dict[str, Any]], int]] = {}
        # /api/show listed the model's capabilities without "tools".
        self.no_tools = False


class OllamaPolicy:
    """A Policy backed by an Ollama model (gpt-oss, Context-1, Qwen3, ...).

    `OllamaPolicy("gpt-oss:20b")`; any OllamaSettings field may be given as a keyword,
    the rest come from the environment (SIFT_OLLAMA_*, OLLAMA_HOST).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        host: str | None = None,
        settings: OllamaSettings | None = None,
        **overrides: Any,
    ) -> None:
        given = dict(overrides)
        if model is not None:
            given["model"] = model
        if host is not None:
            given["host"] = host
        base = settings if settings is not None else OllamaSettings()
        unknown = set(given) - set(OllamaSettings.model_fields)
        if unknown:
            raise TypeError(
                f"unknown Ollama setting(s) {sorted(unknown)}; valid: "
                f"{', '.join(OllamaSettings.model_fields)}"
            )
        self.settings = OllamaSettings.model_validate({**base.model_dump(), **given})
        self.host = describe_host(self.settings.host)
        self._shared = _Shared()

    # ---------------------------------------------------------------- public surface

    @property
    def model(self) -> str:
        return self.settings.model

    def fork(self, seed: int) -> OllamaPolicy:
        """An independent rollout: same model and client, another seed, and a
        temperature above zero so that rollouts actually differ."""
        temperature = self.settings.temperature or self.settings.rollout_temperature
        twin = OllamaPolicy.__new__(OllamaPolicy)
        twin.settings = self.settings.model_copy(update={"seed": seed, "temperature": temperature})
        twin.host = self.host
        twin._shared = self._shared
        return twin

    async def aclose(self) -> None:
        """Closes the HTTP client of the running event loop (and forgets the others)."""
        loops = list(self._shared.loops.values())
        self._shared.loops.clear()
        current = asyncio.get_running_loop()
        for loop, client, _ in loops:
            if loop is current:
                await client.close()

    async def __aenter__(self) -> OllamaPolicy:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def constrained(self) -> bool:
        """Whether replies are decoded against the decision's JSON schema: the setting,
        else (auto) whether /api/show said the model cannot call tools."""
        chosen = self.settings.constrained
        return self._shared.no_tools if chosen is None else chosen

    def request_for(self, view: PolicyView) -> dict[str, Any]:
        """The exact keyword arguments of the AsyncClient.chat call for this view (the
        first request of a constrained turn: `format` holds the decision's schema)."""
        if self.constrained:
            schema = decision_schema(view, reply_tokens=self.settings.num_predict)
            rendered = render_messages(constrained_messages(view, schema))
            return self._request(rendered, context_tokens=view.budget, schema=schema)
        # The harness renders the context; a bare view gets the harness's task prompt.
        messages = render_messages(view.messages) or [
            {"role": "user", "content": task_prompt(view.question, view.top_k)}
        ]
        return self._request(messages, context_tokens=view.budget, tools=self._tools(view)[0])

    def _request(
        self,
        messages: list[dict[str, Any]],
        *,
        context_tokens: int,
        tools: list[dict[str, Any]] | None = None,
        schema: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A chat request whose context window fits `context_tokens`: with `tools`
        declared, or decoded against `schema`."""
        s = self.settings
        options: dict[str, Any] = {
            "num_ctx": s.context_window(context_tokens),
            "num_predict": s.num_predict,
            "temperature": s.temperature,
        }
        if s.seed is not None:
            options["seed"] = s.seed
        request: dict[str, Any] = {"model": s.model, "messages": messages}
        if tools is not None:
            request["tools"] = tools
        if schema is not None:
            # Ollama's /api/chat decodes the reply against a JSON schema given as `format`.
            request["format"] = schema
        request["stream"] = s.stream
        request["options"] = options
        think = s.think_for(self._shared.family)
        if think is not None:
            request["think"] = think
        if s.keep_alive is not None:
            request["keep_alive"] = s.keep_alive
        return request

    async def decide(self, view: PolicyView) -> Decision:
        await self._check_model(view.budget)
        if self.constrained:
            return await self._decide_constrained(view)
        request = self.request_for(view)
        client = self._client()
        s = self.settings

        async def attempt() -> ChatReply:
            try:
                return await chat_once(client, request)
            except ToolParseError as exc:
                calls = parse_ollama_tool_error(exc.message, id_prefix=f"t{view.turn}")
                if calls is None:
                    raise
                log.info("repaired a tool call Ollama could not parse: %s", exc.message[:200])
                return ChatReply(repaired_calls=calls)

        try:
            reply = await self._retrying(attempt)
        except ToolParseError as exc:
            return Decision(
                error=f"the model wrote a tool call that could not be read, "
                f"{s.retries + 1} times: {exc.message[:500]}"
            )
        decision = self._decision(reply, view)
        self._compare_tokens(decision.prompt_tokens, request["messages"], self._tools(view)[1])
        return decision

    async def _decide_constrained(self, view: PolicyView) -> Decision:
        client = self._client()
        sent: list[dict[str, Any]] = []

        async def ask(messages: list[Message], schema: dict[str, Any]) -> ConstrainedReply:
            request = self._request(
                render_messages(messages), context_tokens=view.budget, schema=schema
            )
            sent.append(request)
            return await self._send_constrained(client, request)

        decision = await constrained_turn(view, ask, reply_tokens=self.settings.num_predict)
        self._compare_tokens(decision.prompt_tokens, sent[0]["messages"], 0)
        return decision

    async def ask_constrained(
        self, messages: list[Message], schema: dict[str, Any]
    ) -> ConstrainedReply:
        """One short question decoded against `schema` (Ollama's `format`): the
        `ConstrainedAsk` of `sift.graphs.policies.AssistedPlanner`, which asks the model
        only to choose among options the planner computed. The context window fits the
        question (its estimate), not an episode's budget."""
        prompt = sum(self._estimate(m.content) for m in messages)
        request = self._request(render_messages(messages), context_tokens=prompt, schema=schema)
        return await self._send_constrained(self._client(), request)

    async def _send_constrained(
        self, client: ollama.AsyncClient, request: dict[str, Any]
    ) -> ConstrainedReply:
        reply = await self._retrying(lambda: chat_once(client, request))
        return ConstrainedReply(
            content=reply.content,
            thinking=reply.thinking or None,
            cut_off=reply.done_reason == "length",
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
        )

    # ---------------------------------------------------------------- internals

    def _per_loop(self) -> tuple[ollama.AsyncClient, asyncio.Lock]:
        # httpx pools and asyncio locks are bound to the loop that first used them;
        # asyncio.run per question (the CLI's batch mode) must not reuse a closed loop's.
        loop = asyncio.get_running_loop()
        loops = self._shared.loops
        entry = loops.get(id(loop))
        if entry is None or entry[0] is not loop:
            for key in [k for k, (other, _, _) in loops.items() if other.is_closed()]:
                del loops[key]
            client = make_client(
                self.host,
                timeout=self.settings.timeout,
                connect_timeout=self.settings.connect_timeout,
            )
            entry = loops[id(loop)] = (loop, client, asyncio.Lock())
        return entry[1], entry[2]

    def _tools(self, view: PolicyView) -> tuple[list[dict[str, Any]], int]:
        """The tool declarations for the view's result sizes, and their token estimate."""
        key = (view.search_max_chunks, view.grep_max_hits)
        entry = self._shared.tools.get(key)
        if entry is None:
            tools = tool_schemas(search_max_chunks=key[0], grep_max_hits=key[1])
            entry = self._shared.tools[key] = (tools, estimate_tokens(json.dumps(tools)))
        return entry

    def _client(self) -> ollama.AsyncClient:
        return self._per_loop()[0]

    async def _retrying(self, attempt: Callable[[], Awaitable[T]]) -> T:
        s = self.settings
        return await call_with_retries(
            attempt,
            retries=s.retries,
            backoff=s.backoff,
            host=self.host,
            model=s.model,
            timeout=s.timeout,
        )

    async def _check_model(self, budget: int) -> None:
        """Once per policy: does Ollama have the model, and what family is it?"""
        shared = self._shared
        if shared.checked:
            return
        client, lock = self._per_loop()
        async with lock:
            if shared.checked:
                return
            s = self.settings
            try:
                info = await self._retrying(lambda: client.show(s.model))
            except ModelServerError as exc:
                cause = exc.__cause__
                if isinstance(cause, ResponseError) and cause.status_code in (400, 405):
                    # A proxy or an old server without /api/show: chat will tell.
                    shared.checked = True
                    return
                raise
            details = info.details
            shared.family = details.family if details is not None else None
            trained = next(
                (v for k, v in (info.modelinfo or {}).items() if k.endswith(".context_length")),
                None,
            )
            window = s.context_window(budget)
            if isinstance(trained, int) and trained < window:
                log.warning(
                    "model %r was trained for %d tokens of context; sift asks for %d "
                    "(the budget plus the generation reserve): lower the budget",
                    s.model,
                    trained,
                    window,
                )
            capabilities = list(info.capabilities or [])
            if capabilities and "tools" not in capabilities:
                if s.constrained is False:
                    raise ModelServerError(
                        f"the Ollama model {s.model!r} at {self.host} does not support tool "
                        f"calling (capabilities: {', '.join(capabilities)}); leave "
                        "SIFT_OLLAMA_CONSTRAINED unset (or true) to decode its replies as "
                        "JSON decisions, or use a tool-calling model such as gpt-oss:20b"
                    )
                # No native tool calls: its replies are decoded against the decision's
                # schema instead (issue 45).
                shared.no_tools = True
            shared.checked = True

    def _decision(self, reply: ChatReply, view: PolicyView) -> Decision:
        calls = list(reply.repaired_calls) or expand_calls(
            reply.tool_calls, id_prefix=f"t{view.turn}"
        )
        hint = (
            f"it stopped at num_predict={self.settings.num_predict} tokens: raise "
            "SIFT_OLLAMA_NUM_PREDICT"
            if reply.done_reason == "length"
            else None
        )
        return build_decision(
            calls,
            content=reply.content,
            thinking=reply.thinking,
            view=view,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cut_off=reply.done_reason == "length",
            truncated_hint=hint,
        )

    def _estimate(self, text: str) -> int:
        cache = self._shared.estimates
        count = cache.get(text)
        if count is None:
            count = cache[text] = estimate_tokens(text)
            if len(cache) > 4096:
                cache.popitem(last=False)
        return count

    def _compare_tokens(
        self, exact: int | None, messages: list[dict[str, Any]], tools_tokens: int
    ) -> None:
        if not exact or self._shared.warned:
            return
        estimate = tools_tokens
        for m in messages:
            estimate += 4 + self._estimate(m["content"])
            if m.get("thinking"):
                estimate += self._estimate(m["thinking"])
            if m.get("tool_calls"):
                estimate += self._estimate(json.dumps(m["tool_calls"]))
        ratio = self.settings.token_mismatch_ratio
        if exact > estimate * ratio or estimate > exact * ratio:
            self._shared.warned = True
            log.warning(
                "Ollama counted %d prompt tokens where sift estimated %d for model %r; the "
                "budget follows Ollama's count (an old Ollama may omit cached tokens)",
                exact,
                estimate,
                self.settings.model,
            )


def policy_from_settings(**overrides: Any) -> OllamaPolicy:
    """An OllamaPolicy from the environment, with `overrides` (None values ignored):
    the entry point of the CLI's `--policy ollama --model ... --think ...` flags."""
    settings = OllamaSettings(**{k: v for k, v in overrides.items() if v is not None})
    return OllamaPolicy(settings=settings)
