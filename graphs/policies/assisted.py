"""The planner with a small model's help (issue 45, item 3).

A 1.5B model on a CPU cannot run a multi-hop search on its own: left to write its own
calls it repeats the question and writes ids it was never shown (benchmarks/results/
real_model.md). What it can do is read two or three short passages and say which of a few
names the question's next step is about, or which passages answer it. So here the
heuristic planner does every search, prune and ranking, and the model is asked only
short questions whose every possible answer the planner computed, decoded against an
enum-constrained JSON schema (the server can write nothing the planner cannot act on):

- the hop: at each round after the first, "which of these names (the bridge candidates
  the planner pulled from the passages read) does the next step need?" The pick is
  searched first (alone and with the rest of the question), *beside* the planner's own
  hop searches, never in their place;
- the passages: at the final list, "which of these passages (the planner's best, by
  number) are needed to answer the question?" Up to `promote` of the model's picks that
  the planner ranked below the top 10 move into it, taking the places of the planner's
  lowest unpicked ones there; nothing else of the planner's order changes.

A model that fails (no server, a timeout, a cut-off or unreadable reply, a pick outside
the options) leaves the planner's own decision standing: the failure is counted
(`AssistedPlanner.records`, and the turn's note in the trace says so), never an episode
error. The prompts are a few hundred tokens (the question, snippets of the best passages,
the options), so a 1.5B model on two CPU threads answers in seconds.

`ask` is any `ConstrainedAsk`: one request of a chat model decoding against a JSON schema.
`OllamaPolicy.ask_constrained` and `ChatModelPolicy.ask_constrained` are two (Ollama's
`format`, an OpenAI-compatible server's `response_format`); a plain async function that
talks to a server (or a test's table) is another.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sift.graphs.policies._plan_graph import graph_bridges
from sift.graphs.policies._plan_rank import ChunkScore, bridge_spans, score_chunks
from sift.graphs.policies._planner_config import HeuristicPlannerConfig
from sift.graphs.policies.heuristic import HeuristicPlanner, _issued_calls, _key, _plan
from sift.llm import ConstrainedReply
from sift.text import has_cjk
from sift.types import Decision, FinalDocument, Message, PolicyView, ToolCall

__all__ = ["AskRecord", "AssistedPlanner", "ConstrainedAsk"]

AskKind = Literal["hop", "passages"]
# The option that lets the model say that no name fits: without it a model that sees no
# right answer must still pick one, and its pick would be searched.
NONE_OPTION = "none of these"
MAX_RECORDS = 1000


class ConstrainedAsk(Protocol):
    """One request to a chat model whose reply is decoded against `schema` (a JSON
    schema): the messages, and the reply as the server sent it."""

    async def __call__(
        self, messages: list[Message], schema: dict[str, Any]
    ) -> ConstrainedReply: ...


@dataclass
class AskRecord:
    """One question put to the model and what came of it (for the trace, the benchmark and
    the recorded replies a replay answers from)."""

    kind: AskKind
    turn: int
    messages: list[dict[str, str]]
    schema: dict[str, Any]
    options: list[str]
    # The planner's own choice: its first hop search, or its top-10 ids.
    planner: list[str]
    reply: str | None = None
    picked: list[str] = field(default_factory=list)
    # Why the planner's choice stood unchanged (the model's reply was not used), else None.
    fallback: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class _Snippet:
    title: str
    text: str


class AssistedPlanner(HeuristicPlanner):
    """The heuristic planner, asking a small model which bridge name the next hop needs and
    which of its best passages answer the question (see the module's docstring).

    `ask`: how a constrained question is sent. `asks`: which questions are asked ("hop",
    "passages"). The passage question alone is the default: on 40 MuSiQue dev questions
    (benchmarks/results/planner_assist.md) a chooser that reads the gold labels lifts
    all-gold@10 by 0.075 through it, and by nothing through the hop question (the planner
    already searches the gold bridge when any candidate is one; the extra searches it
    adds crowd the context). Qwen2.5-Coder-1.5B adds nothing there (it answers with the
    first four numbers offered, the planner's own top 4): the mode is for models that
    read a list of 20 passages and know what links them (an estimated 7B and up).
    `hop_options`: the most candidate names offered;
    `passage_options`: how many of the planner's best passages are shown (20: on the tune
    half the chooser that reads the labels gains as much as with 30, for two thirds of
    the prompt); `promote`: how many of the model's picks may enter the top 10;
    `snippet_chars` / `passage_chars`: how much of a passage the model reads in the hop /
    passage question (20 passages of 140 characters: about 1,000 tokens, which a 1.5B
    model on two CPU threads reads in seconds); `timeout`: seconds one ask may take
    before the planner's choice stands.
    """

    def __init__(
        self,
        ask: ConstrainedAsk,
        config: HeuristicPlannerConfig | None = None,
        *,
        asks: tuple[AskKind, ...] = ("passages",),
        hop_options: int = 8,
        passage_options: int = 20,
        promote: int = 2,
        snippet_chars: int = 400,
        passage_chars: int = 140,
        timeout: float = 60.0,
    ) -> None:
        super().__init__(config)
        self.ask = ask
        self.asks = asks
        self.hop_options = hop_options
        self.passage_options = passage_options
        self.promote = promote
        self.snippet_chars = snippet_chars
        self.passage_chars = passage_chars
        self.timeout = timeout
        # Every ask of this instance, newest last (the benchmark and the replay read them;
        # a policy serving for long keeps the last MAX_RECORDS).
        self.records: list[AskRecord] = []

    def fork(self, seed: int) -> AssistedPlanner:
        forked = super().fork(seed)
        return AssistedPlanner(
            self.ask,
            forked.config,
            asks=self.asks,
            hop_options=self.hop_options,
            passage_options=self.passage_options,
            promote=self.promote,
            snippet_chars=self.snippet_chars,
            passage_chars=self.passage_chars,
            timeout=self.timeout,
        )

    def __repr__(self) -> str:
        return f"AssistedPlanner(seed={self.config.seed}, asks={self.asks})"

    @property
    def fallbacks(self) -> int:
        """Asks whose reply was not used (the planner's choice stood)."""
        return sum(1 for r in self.records if r.fallback is not None)

    async def decide(self, view: PolicyView) -> Decision:
        decision = self.step(view)
        if decision.final is not None:
            if "passages" in self.asks:
                decision = await self._passages(view, decision)
            return _tallied(view, decision)
        _, rounds, _ = _issued_calls(view)
        searches = [c for c in decision.tool_calls if c.name == "search_corpus"]
        if "hop" in self.asks and rounds >= 1 and searches:
            return await self._hop(view, decision)
        return decision

    # ------------------------------------------------------------------ the hop

    def hop_candidates(self, view: PolicyView) -> tuple[list[str], list[_Snippet]]:
        """The names the next hop may need, best first as the planner ranks them, none
        searched yet: each anchor's bridge spans (the anchors' turns taken in rank order,
        as the planner takes them), then the entity graph's bridges; and the anchors'
        snippets the model reads them in."""
        plan = _plan(view.question, self.weights.text_limits)
        issued, _, _ = _issued_calls(view)
        ranked = score_chunks(plan, view.seen, self.weights)
        threshold = self.config.hop_anchor_coverage
        by_doc: dict[str, list[ChunkScore]] = {}
        for s in ranked:
            if not (s.title_entity or s.linked_from or s.coverage >= threshold):
                continue
            doc_id = view.seen[s.chunk_id].chunk.doc_id
            if doc_id not in by_doc and len(by_doc) >= self.config.anchor_window:
                continue
            by_doc.setdefault(doc_id, []).append(s)
        per_anchor: list[list[str]] = []
        snippets: list[_Snippet] = []
        for pieces in by_doc.values():
            chunks = sorted((view.seen[p.chunk_id].chunk for p in pieces), key=lambda c: c.index)
            text = " ".join(c.text for c in chunks)
            spans = bridge_spans(plan, chunks[0].title, text, limit=self.hop_options)
            names = [s for s, _ in spans if ("search_corpus", s.strip().lower()) not in issued]
            if names:
                per_anchor.append(names)
                snippets.append(_Snippet(chunks[0].title, text))
        # Round robin over the anchors: the best name of each page before the second of
        # the first (the page of the question's first entity is not always the one whose
        # name leads on).
        options: list[str] = []
        taken: set[str] = set()
        for depth in range(self.hop_options):
            for names in per_anchor:
                if depth < len(names) and names[depth].lower() not in taken:
                    options.append(names[depth])
                    taken.add(names[depth].lower())
        if self.config.graph_bridges:
            walked = graph_bridges(
                view.question, [s.chunk_id for s in ranked], view.seen, self.graph
            )
            for entity in walked:
                key = entity.strip().lower()
                if ("search_corpus", key) not in issued and key not in taken:
                    options.append(entity)
                    taken.add(key)
        return options[: self.hop_options], snippets[:3]

    async def _hop(self, view: PolicyView, decision: Decision) -> Decision:
        options, snippets = self.hop_candidates(view)
        if len(options) < 2:
            # One name or none: nothing for the model to choose.
            return decision
        japanese = has_cjk(view.question)
        schema = {
            "type": "object",
            "properties": {"name": {"type": "string", "enum": [*options, NONE_OPTION]}},
            "required": ["name"],
            "additionalProperties": False,
        }
        messages = _hop_messages(view.question, snippets, options, japanese, self.snippet_chars)
        planner_first = next(
            (str(c.arguments["query"]) for c in decision.tool_calls if c.name == "search_corpus"),
            "",
        )
        record = AskRecord(
            "hop",
            view.turn,
            _dump(messages),
            schema,
            options,
            [planner_first] if planner_first else [],
        )
        value = await self._ask(record, messages, schema)
        if value is None:
            return _noted(decision, record)
        name = value.get("name") if isinstance(value, dict) else None
        if name == NONE_OPTION:
            record.picked = []
            return _noted(decision, record)
        if not isinstance(name, str) or name not in options:
            record.fallback = f"the reply's name is not one of the options: {name!r}"
            return _noted(decision, record)
        record.picked = [name]
        plan = _plan(view.question, self.weights.text_limits)
        issued, _, _ = _issued_calls(view)
        mine = [ToolCall(name="search_corpus", arguments={"query": name})]
        if plan.residual_text:
            mine.append(
                ToolCall(name="search_corpus", arguments={"query": f"{name} {plan.residual_text}"})
            )
        theirs = {_key(c.name, c.arguments) for c in decision.tool_calls}
        mine = [
            c
            for c in mine
            if _key(c.name, c.arguments) not in issued and _key(c.name, c.arguments) not in theirs
        ]
        # Beside the planner's own calls, never in their place: the model's pick adds a
        # page to the context, it does not take one of the planner's hops away.
        calls = mine + list(decision.tool_calls)
        for i, call in enumerate(calls):
            call.id = f"h{view.turn}_{i}"
        return _noted(decision.model_copy(update={"tool_calls": calls}), record)

    # ------------------------------------------------------------------ the final list

    async def _passages(self, view: PolicyView, decision: Decision) -> Decision:
        final = decision.final or []
        shown = final[: self.passage_options]
        # The head a pick may enter: the first 10 are what a reader (and all-gold@10)
        # takes; below them a promotion would change nothing anyone reads.
        top = 10
        if len(final) <= top or self.promote <= 0:
            # Nothing below the top 10 to bring up: the answer could change nothing.
            return decision
        japanese = has_cjk(view.question)
        numbers = list(range(1, len(shown) + 1))
        schema = {
            "type": "object",
            "properties": {
                "passages": {
                    "type": "array",
                    "items": {"type": "integer", "enum": numbers},
                    "maxItems": 4,
                }
            },
            "required": ["passages"],
            "additionalProperties": False,
        }
        snippets = [
            _Snippet(view.seen[f.id].chunk.title, view.seen[f.id].chunk.text)
            for f in shown
            if f.id in view.seen
        ]
        if len(snippets) != len(shown):
            return decision
        messages = _passage_messages(view.question, snippets, japanese, self.passage_chars)
        record = AskRecord(
            "passages",
            view.turn,
            _dump(messages),
            schema,
            [f.id for f in shown],
            [f.id for f in final[:top]],
        )
        value = await self._ask(record, messages, schema)
        if value is None:
            return _noted(decision, record)
        picks = value.get("passages") if isinstance(value, dict) else None
        if not isinstance(picks, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n in numbers for n in picks
        ):
            record.fallback = f"the reply's passages are not numbers shown: {picks!r}"
            return _noted(decision, record)
        chosen = list(dict.fromkeys(shown[n - 1].id for n in picks))
        record.picked = chosen
        reordered = promote(final, chosen, top=top, most=self.promote)
        return _noted(decision.model_copy(update={"final": reordered}), record)

    # ------------------------------------------------------------------ asking

    async def _ask(
        self, record: AskRecord, messages: list[Message], schema: dict[str, Any]
    ) -> Any | None:
        """The model's reply as JSON, or None with the reason in `record.fallback`."""
        self.records.append(record)
        del self.records[:-MAX_RECORDS]
        started = time.perf_counter()
        try:
            reply = await asyncio.wait_for(self.ask(messages, schema), self.timeout)
        except TimeoutError:
            record.fallback = f"no reply within {self.timeout:g} s"
            return None
        except Exception as exc:
            # Whatever failed (the server, its client, the network), the planner's own
            # choice stands: a model's help is never a reason for an episode to fail.
            record.fallback = f"the ask failed: {type(exc).__name__}: {str(exc)[:200]}"
            return None
        finally:
            record.seconds = round(time.perf_counter() - started, 3)
        record.reply = reply.content
        if reply.cut_off:
            record.fallback = "the reply was cut off by the token limit"
            return None
        try:
            return json.loads(reply.content)
        except ValueError:
            record.fallback = f"the reply is not JSON: {reply.content[:120]!r}"
            return None


def promote(
    final: list[FinalDocument], chosen: list[str], *, top: int, most: int, margin: int = 2
) -> list[FinalDocument]:
    """`final` with up to `most` of `chosen` that sit below the first `top` moved into the
    top (`margin` places above its end), in the places of the lowest top ones not chosen,
    which follow the top. Nothing else changes order; the scores keep falling with the
    rank (the harness reads them so)."""
    head, tail = final[:top], final[top:]
    chosen_set = set(chosen)
    rising = [f for f in tail if f.id in chosen_set][:most]
    falling = [f for f in reversed(head) if f.id not in chosen_set][: len(rising)]
    rising = rising[: len(falling)]
    if not rising:
        return final
    gone = {f.id for f in falling}
    moved = {f.id for f in rising}
    kept = [f for f in head if f.id not in gone]
    # A few places above the end of the top: the harness may still put the plain
    # search's leaders ahead (HarnessConfig.plain_keep), which would push a pick placed
    # last straight back out.
    at = max(0, len(kept) - margin)
    order = (
        kept[:at]
        + rising
        + kept[at:]
        + list(reversed(falling))
        + [f for f in tail if f.id not in moved]
    )
    scores = [f.score for f in final]
    out: list[FinalDocument] = []
    for f, score in zip(order, scores, strict=True):
        note = " The model judged it needed for the question." if f.id in moved else ""
        out.append(f.model_copy(update={"score": score, "justification": f.justification + note}))
    return out


# ---------------------------------------------------------------------- prompts


def _clip(text: str, chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + " …"


def _hop_messages(
    question: str, snippets: list[_Snippet], options: list[str], japanese: bool, chars: int
) -> list[Message]:
    passages = "\n".join(f"[{s.title}] {_clip(s.text, chars)}" for s in snippets)
    names = "\n".join(f"- {o}" for o in options)
    if japanese:
        system = "検索を手伝ってください。JSON だけで答えてください。"
        user = (
            f"質問: {question}\n\nこれまでに読んだ文章:\n{passages}\n\n"
            "質問に答えるには、これらの文章に出てくる名前をもう一つ検索する必要があります。"
            f"次に検索すべき名前はどれですか（どれでもなければ「{NONE_OPTION}」）:\n{names}"
        )
    else:
        system = "You help a search engine answer a question in steps. Reply with JSON only."
        user = (
            f"Question: {question}\n\nPassages read so far:\n{passages}\n\n"
            "To answer the question, one more search is needed, for a name these passages "
            "give (the answer of the question's first step). Which name should be searched "
            f'next ("{NONE_OPTION}" if none fits)?\n{names}'
        )
    return [Message(role="system", content=system), Message(role="user", content=user)]


def _passage_messages(
    question: str, snippets: list[_Snippet], japanese: bool, chars: int
) -> list[Message]:
    passages = "\n".join(
        f"{n}. [{s.title}] {_clip(s.text, chars)}" for n, s in enumerate(snippets, start=1)
    )
    if japanese:
        system = "検索を手伝ってください。JSON だけで答えてください。"
        user = (
            f"質問: {question}\n\n文章:\n{passages}\n\n"
            "質問に答えるのに必要な文章はどれですか（質問の各段階に一つ、番号で最大 4 つ）。"
        )
    else:
        system = "You help a search engine answer a question in steps. Reply with JSON only."
        user = (
            f"Question: {question}\n\nPassages:\n{passages}\n\n"
            "Which passages are needed to answer the question (one for each step of it)? "
            "Give their numbers, at most 4."
        )
    return [Message(role="system", content=system), Message(role="user", content=user)]


def _dump(messages: list[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def _tallied(view: PolicyView, decision: Decision) -> Decision:
    """The final decision with the episode's asks counted in its words (the trace's note
    of the last turn): read back from the transcript, where each turn's words say what
    its ask came to, so the count is the episode's whatever the policy asked before."""
    said = [m.content for m in view.messages if m.role == "assistant"] + [decision.content]
    asks = sum(text.count("[model (") for text in said)
    if not asks:
        return decision
    failed = sum(text.count("no usable reply") for text in said)
    tally = f"[model: {asks} asks, {failed} without a usable reply]"
    return decision.model_copy(update={"content": f"{decision.content} {tally}"})


def _noted(decision: Decision, record: AskRecord) -> Decision:
    """The decision with the ask's outcome in its words (the transcript's assistant turn,
    and the trace's note when the turn is the last)."""
    if record.fallback is not None:
        note = (
            f"model ({record.kind}): no usable reply ({record.fallback}); "
            "the planner's choice stands"
        )
    elif record.kind == "hop":
        note = (
            f"model (hop): picked {record.picked[0]!r} for the next hop"
            if record.picked
            else "model (hop): none of the names fits"
        )
    else:
        note = f"model (passages): picked {len(record.picked)} passages"
    content = f"{decision.content} [{note}]" if decision.content else f"[{note}]"
    return decision.model_copy(update={"content": content})
