"""AssistedPlanner (issue 45, item 3): the heuristic planner asking a model only short
constrained questions, with no model present: a scripted ask records every question put
to it (messages and schema) and answers from a fixed table, or fails.

Asserted: the model is offered only what the planner computed (an enum of bridge names
not yet searched; passage numbers of the planner's own list); a hop pick is searched
first, beside every call the planner made at that turn; a passage pick below the top 10
enters it and displaces only the planner's lowest unpicked ones; any failure (an error,
a timeout, a cut-off or unreadable reply, a pick outside the options) leaves the
planner's result exactly and is counted; a Japanese question is asked in Japanese.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sift.graphs import asearch
from sift.graphs.policies import AssistedPlanner, HeuristicPlanner
from sift.graphs.policies.assisted import NONE_OPTION, promote
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.llm import ConstrainedReply
from sift.types import Document, FinalDocument, Message, SearchResult

# A two-hop question: the film's page names its director (the bridge), whose page names
# the spouse; fillers that share the question's words keep the final list past 10.
DOCS = [
    Document(
        id="film",
        title="Northern Harbour",
        text="Northern Harbour is a 1994 drama film directed by Ingrid Solberg and starring "
        "Karl Moen and Liv Aune. The film was shot in Bergen by Fjord Pictures.",
    ),
    Document(
        id="director",
        title="Ingrid Solberg",
        text="Ingrid Solberg is a Norwegian film director. Solberg is married to the "
        "composer Halvard Strand, who scored several of her films.",
    ),
    Document(
        id="actor",
        title="Karl Moen",
        text="Karl Moen is a Norwegian actor. Moen is married to the painter Sigrid Lund.",
    ),
    Document(
        id="studio",
        title="Fjord Pictures",
        text="Fjord Pictures is a film studio in Bergen founded by Olav Brekke in 1980.",
    ),
    *(
        Document(
            id=f"filler{i}",
            title=f"Harbour drama {i}",
            text=f"Harbour drama {i} is a film about a northern harbour town, its spouse "
            f"and director characters and a fishing family number {i}.",
        )
        for i in range(16)
    ),
]
QUESTION = "Who is the spouse of the director of Northern Harbour?"

JA_DOCS = [
    Document(
        id="ja_film",
        title="北の港",
        text="北の港は1994年の日本のドラマ映画である。監督は山田花子、主演は佐藤一郎。",
    ),
    Document(
        id="ja_director",
        title="山田花子",
        text="山田花子は日本の映画監督である。夫は作曲家の鈴木次郎である。",
    ),
    Document(
        id="ja_actor",
        title="佐藤一郎",
        text="佐藤一郎は日本の俳優である。妻は画家の田中和子である。",
    ),
    *(
        Document(
            id=f"ja_filler{i}",
            title=f"港のドラマ{i}",
            text=f"港のドラマ{i}は北の港町を舞台にした映画で、監督と夫の物語である。第{i}作。",
        )
        for i in range(16)
    ),
]
JA_QUESTION = "北の港の監督の夫は誰ですか？"

Answer = Callable[[list[Message], dict[str, Any]], "ConstrainedReply | BaseException"]


class ScriptedAsk:
    """Records every question (messages, schema) and answers with `answer`'s reply, or
    raises what it returns."""

    def __init__(self, answer: Answer, *, delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.asked: list[tuple[list[Message], dict[str, Any]]] = []

    async def __call__(self, messages: list[Message], schema: dict[str, Any]) -> ConstrainedReply:
        self.asked.append((messages, schema))
        if self.delay:
            await asyncio.sleep(self.delay)
        reply = self.answer(messages, schema)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def of_kind(self, key: str) -> list[tuple[list[Message], dict[str, Any]]]:
        return [(m, s) for m, s in self.asked if key in s["properties"]]


def table(hop: str | None = None, passages: list[int] | None = None) -> Answer:
    """Fixed answers: the named option for a hop (when offered, else "none"), the given
    passage numbers (those shown)."""

    def answer(messages: list[Message], schema: dict[str, Any]) -> ConstrainedReply:
        props = schema["properties"]
        if "name" in props:
            enum = props["name"]["enum"]
            return ConstrainedReply(
                content=json.dumps({"name": hop if hop in enum else NONE_OPTION})
            )
        shown = props["passages"]["items"]["enum"]
        return ConstrainedReply(
            content=json.dumps({"passages": [n for n in passages or [] if n in shown]})
        )

    return answer


def _store(path: Path, docs: list[Document]) -> SqliteCorpus:
    corpus = SqliteCorpus(path, embedder="hash")
    corpus.upsert(docs)
    return corpus


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SqliteCorpus:
    return _store(tmp_path_factory.mktemp("assisted") / "en.sqlite", DOCS)


@pytest.fixture(scope="module")
def ja_store(tmp_path_factory: pytest.TempPathFactory) -> SqliteCorpus:
    return _store(tmp_path_factory.mktemp("assisted") / "ja.sqlite", JA_DOCS)


def searched(result: SearchResult) -> list[list[str]]:
    """Each turn's queries, in order."""
    return [
        [str(c.arguments.get("query")) for c in t.calls if c.tool == "search_corpus"]
        for t in result.trace
    ]


def ids(result: SearchResult) -> list[str]:
    return [e.chunk_id for e in result.evidence]


async def test_hop_pick_is_searched_first_beside_the_planners_calls(store: SqliteCorpus) -> None:
    plain = await asearch(QUESTION, store, policy=HeuristicPlanner())
    ask = ScriptedAsk(table(hop="Halvard Strand"))
    # The pick must be one the planner offers: find what it offers first.
    probe = ScriptedAsk(table())
    await asearch(QUESTION, store, policy=AssistedPlanner(probe, asks=("hop",)))
    hops = probe.of_kind("name")
    assert hops, "the planner made a hop round with names to choose from"
    options = [o for o in hops[0][1]["properties"]["name"]["enum"] if o != NONE_OPTION]
    # Offered only names the passages read gave, and the question in the prompt.
    assert "Ingrid Solberg" in options
    assert QUESTION in hops[0][0][-1].content
    assert all(o in hops[0][0][-1].content for o in options)
    assert len(hops[0][0][-1].content) < 3000
    pick = next(o for o in reversed(options) if o != options[0])
    ask = ScriptedAsk(table(hop=pick))
    policy = AssistedPlanner(ask, asks=("hop",))
    result = await asearch(QUESTION, store, policy=policy)
    turn = next(i for i, qs in enumerate(searched(result)) if pick in qs)
    # The first hop turn: the same view as the planner's, so its calls are the planner's
    # own with the pick's searches first.
    assert searched(result)[turn][0] == pick
    assert set(searched(plain)[turn]) <= set(searched(result)[turn])
    assert policy.records[0].picked == [pick]
    assert policy.fallbacks == 0
    # The trace's last note counts the episode's asks.
    asks = len(policy.records)
    assert f"[model: {asks} asks, 0 without a usable reply]" in (result.trace[-1].note or "")


async def test_none_of_these_leaves_the_planners_calls(store: SqliteCorpus) -> None:
    plain = await asearch(QUESTION, store, policy=HeuristicPlanner())
    ask = ScriptedAsk(table(hop=NONE_OPTION))
    policy = AssistedPlanner(ask, asks=("hop",))
    result = await asearch(QUESTION, store, policy=policy)
    assert ask.of_kind("name")
    assert searched(result) == searched(plain)
    assert ids(result) == ids(plain)
    assert policy.fallbacks == 0


async def test_passage_pick_enters_the_top_10(store: SqliteCorpus) -> None:
    plain = await asearch(QUESTION, store, policy=HeuristicPlanner())
    assert len(plain.evidence) > 12
    ask = ScriptedAsk(table(passages=[12]))
    policy = AssistedPlanner(ask, asks=("passages",))
    result = await asearch(QUESTION, store, policy=policy)
    ((messages, schema),) = ask.asked
    shown = policy.records[0].options
    # The planner's own list, by number; the reply can hold nothing else.
    assert schema["properties"]["passages"]["items"]["enum"] == list(range(1, len(shown) + 1))
    assert all(f"{n}. [" in messages[-1].content for n in range(1, len(shown) + 1))
    picked = shown[11]
    assert policy.records[0].picked == [picked]
    assert picked in ids(result)[:10]
    assert picked not in ids(plain)[:10]
    # One place changed hands: the planner's other top-10 chunks are all still there.
    assert len(set(ids(plain)[:10]) - set(ids(result)[:10])) == 1


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (lambda m, s: ConnectionError("connection refused"), "the ask failed: ConnectionError"),
        (lambda m, s: ConstrainedReply(content='{"name": '), "not JSON"),
        (lambda m, s: ConstrainedReply(content='{"name": "Oslo"', cut_off=True), "cut off"),
        (lambda m, s: ConstrainedReply(content='{"name": "Oslo", "passages": [99]}'), "not"),
    ],
    ids=["server down", "unreadable", "cut off", "outside the options"],
)
async def test_a_failed_ask_leaves_the_planners_result(
    store: SqliteCorpus, answer: Answer, reason: str
) -> None:
    plain = await asearch(QUESTION, store, policy=HeuristicPlanner())
    ask = ScriptedAsk(answer)
    policy = AssistedPlanner(ask, asks=("hop", "passages"))
    result = await asearch(QUESTION, store, policy=policy)
    assert result.stopped_because == plain.stopped_because
    assert ids(result) == ids(plain)
    assert searched(result) == searched(plain)
    assert len(ask.asked) == len(policy.records) >= 2
    assert policy.fallbacks == len(policy.records)
    assert all(reason in (r.fallback or "") for r in policy.records)
    n = len(policy.records)
    assert f"[model: {n} asks, {n} without a usable reply]" in (result.trace[-1].note or "")


async def test_a_slow_model_times_out_to_the_planners_choice(store: SqliteCorpus) -> None:
    plain = await asearch(QUESTION, store, policy=HeuristicPlanner())
    ask = ScriptedAsk(table(hop="Halvard Strand", passages=[12]), delay=0.5)
    policy = AssistedPlanner(ask, asks=("hop", "passages"), timeout=0.05)
    result = await asearch(QUESTION, store, policy=policy)
    assert ids(result) == ids(plain)
    assert policy.fallbacks == len(policy.records) >= 2
    assert all("no reply within" in (r.fallback or "") for r in policy.records)


async def test_japanese_question_asked_in_japanese(ja_store: SqliteCorpus) -> None:
    probe = ScriptedAsk(table())
    await asearch(JA_QUESTION, ja_store, policy=AssistedPlanner(probe, asks=("hop", "passages")))
    hops = probe.of_kind("name")
    assert hops
    prompt = hops[0][0][-1].content
    assert prompt.startswith(f"質問: {JA_QUESTION}")
    assert "次に検索すべき名前" in prompt
    options = [o for o in hops[0][1]["properties"]["name"]["enum"] if o != NONE_OPTION]
    # The names the director's page gives (the husband among them).
    assert "鈴木次郎" in options
    pick = "鈴木次郎"
    ask = ScriptedAsk(table(hop=pick))
    policy = AssistedPlanner(ask, asks=("hop", "passages"))
    result = await asearch(JA_QUESTION, ja_store, policy=policy)
    assert any(qs and qs[0] == pick for qs in searched(result))
    assert policy.records[0].picked == [pick]
    passages = ask.of_kind("passages")
    if passages:
        assert "質問に答えるのに必要な文章" in passages[0][0][-1].content


def test_promote_moves_only_picks_below_the_top() -> None:
    final = [FinalDocument(id=f"c{i}", score=30.0 - i) for i in range(15)]
    out = promote(final, ["c3", "c12", "c14", "c13"], top=10, most=2)
    order = [f.id for f in out]
    # c12 and c13 (the planner's order) enter; c9 and c8 (lowest unpicked) leave; c3,
    # picked but already in, stays where it was.
    assert set(order[:10]) == {f"c{i}" for i in range(8)} | {"c12", "c13"}
    assert order[3] == "c3"
    assert order[10:12] == ["c8", "c9"]
    assert [f.score for f in out] == [f.score for f in final]
    assert "judged it needed" in out[order.index("c12")].justification
    # Nothing below the top chosen: unchanged.
    assert promote(final, ["c1", "c2"], top=10, most=2) == final
