"""The heuristic planner: decomposition, bridge hops, determinism, pruning, stopping, and a
real episode through the graph over a real SqliteCorpus (hash embedder)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sift.graphs.policies._plan_rank import bridge_spans, score_chunks
from sift.graphs.policies._plan_text import candidate_spans, plan_question
from sift.graphs.policies.heuristic import HeuristicPlanner, HeuristicPlannerConfig, escape_pattern
from sift.types import Chunk, FoundBy, Message, PolicyView, SeenChunk, ToolCall

# A small multi-hop world: a film page names its director, whose page names the city of
# birth; look-alike films and directors are the distractors. The film's page is long, so
# the store splits it and the director sits in a later chunk (a partial hit to read).
FILM_TEXT = "\n\n".join(
    [
        "The Quiet Harbor is a 1950 drama film about a lighthouse keeper and his daughter.",
        "The story follows one long winter of storms on a remote northern island.",
        "Filming took place over two summers in the fishing port of Valmora.",
        "The cast mixed local sailors with only three professional actors.",
        "The score was written for a small string ensemble and a single accordion.",
        "Critics praised the black and white photography of the winter sea.",
        "The picture was directed by Elena Marsh, who also wrote the screenplay.",
        "It was restored in 2004 and shown again at several festivals.",
        "A novel based on the film appeared in 1953 with photographs from the set.",
        "The lighthouse used in the film still stands and is open to visitors.",
        "Several scenes were cut by the censors and are now lost.",
        "The daughter was played by a twelve year old girl from the island.",
        "A sequel was planned but never made because of the cost of location work.",
        "The film won a prize for its sound recording of wind and sea.",
    ]
)
_PEOPLE = [
    "Arvid Holm",
    "Brita Sand",
    "Carl Ek",
    "Dora Vik",
    "Emil Rask",
    "Frida Lund",
    "Gustav Berg",
    "Hanna Ström",
    "Ivar Dahl",
    "Jonna Falk",
    "Karl Nyberg",
    "Lena Kvist",
]
_FILLERS = [
    (
        f"film-{i}",
        f"Film number {i}",
        f"Film number {i} is a {1940 + i} drama film directed by {name}, set in a harbor town.",
    )
    for i, name in enumerate(_PEOPLE)
] + [
    (f"person-{i}", name, f"{name} was a film director born in a small town in {1900 + i}.")
    for i, name in enumerate(_PEOPLE)
]
DOCS = [
    ("quiet-harbor", "The Quiet Harbor", FILM_TEXT),
    (
        "elena-marsh",
        "Elena Marsh",
        "Elena Marsh (1911-1987) was a film director and screenwriter. She was born in "
        "Tallinn and worked in Stockholm for most of her career.",
    ),
    (
        "tallinn",
        "Tallinn",
        "Tallinn is the capital and largest city of Estonia, on the Gulf of Finland.",
    ),
    (
        "night-train",
        "Night Train to Lisbon (1951 film)",
        "Night Train to Lisbon is a 1951 thriller film directed by Oskar Lind.",
    ),
    ("oskar-lind", "Oskar Lind", "Oskar Lind was a Swedish film director born in Uppsala in 1902."),
    (
        "loud-harbor",
        "The Loud Harbor",
        "The Loud Harbor is a 1962 comedy film set in a noisy shipyard.",
    ),
    (
        "harbor-seal",
        "Harbor seal",
        "The harbor seal is a true seal found along temperate coastlines.",
    ),
    ("valmora", "Valmora", "Valmora is a fishing port known for its lighthouse."),
    ("stockholm", "Stockholm", "Stockholm is the capital of Sweden and home to film studios."),
    ("uppsala", "Uppsala", "Uppsala is a university city north of Stockholm."),
    *_FILLERS,
]
QUESTION = 'Where was the director of the film "The Quiet Harbor" born?'


# --------------------------------------------------------------------------- decomposition


def test_comparison_question_splits_into_its_options() -> None:
    plan = plan_question("Which film came out first, The Quiet Harbor or Night Train to Lisbon?")
    assert plan.shape == "comparison"
    assert plan.alternatives == ["Quiet Harbor", "Night Train to Lisbon"]
    assert plan.entities[:2] == ["Quiet Harbor", "Night Train to Lisbon"]


def test_both_question_splits_a_joined_span_into_two_people() -> None:
    plan = plan_question("Were Gregory La Cava and Mike Judge both actors?")
    assert plan.comparison
    assert "Gregory La Cava" in plan.entities and "Mike Judge" in plan.entities


def test_compositional_question_keeps_relations_and_entity() -> None:
    plan = plan_question("Where was the father of Lope Díaz Ii De Haro born?")
    assert plan.shape == "compositional"
    assert plan.entities == ["Lope Díaz Ii De Haro"]
    assert {"father", "born"} <= set(plan.relations)
    assert plan.residual == ["father", "born"]


def test_bridge_question_with_quotes_and_possessive() -> None:
    plan = plan_question("When is Susanne Porsche's husband's birthday, per \"Auto Bild\"?")
    assert plan.quoted == ["Auto Bild"]
    assert "Susanne Porsche" in plan.entities
    assert "husband" in plan.relations


def test_spans_keep_initials_connectors_and_colon_titles() -> None:
    spans = [
        s
        for s, _ in candidate_spans(
            "Which novelist, J. G. Farrell, wrote about Superman IV: The Quest of Peace and "
            "the Battle of Manila?",
            skip_first=True,
        )
    ]
    assert "J. G. Farrell" in spans
    assert "Superman IV: The Quest of Peace" in spans
    assert "Battle of Manila" in spans


def test_bridge_spans_pick_the_name_next_to_the_relation() -> None:
    plan = plan_question(QUESTION)
    text = (
        "The Quiet Harbor is a film shot in Valmora with sailors from Norway. It was "
        "directed by Elena Marsh."
    )
    spans = bridge_spans(plan, "The Quiet Harbor", text, limit=2)
    assert spans[0][0] == "Elena Marsh"
    assert all(name != "The Quiet Harbor" for name, _ in spans)


def test_escape_pattern_makes_metacharacters_literal() -> None:
    assert escape_pattern("A.B (c)?") == r"A\.B \(c\)\?"


# --------------------------------------------------------------------------- pure views


def _seen(
    doc_id: str,
    title: str,
    text: str,
    *,
    query: str,
    turn: int,
    rank: int,
    tokens: int = 50,
    index: int = 0,
) -> tuple[str, SeenChunk]:
    chunk = Chunk(chunk_id=f"{doc_id}_{index}", doc_id=doc_id, index=index, title=title, text=text)
    found = [FoundBy(tool="search_corpus", argument=query, turn=turn)]
    return chunk.chunk_id, SeenChunk(chunk=chunk, tokens=tokens, found_by=found, first_rank=rank)


def _view(
    seen: dict[str, SeenChunk],
    *,
    turn: int,
    calls: list[list[ToolCall]],
    tokens_used: int = 0,
    threshold: int = 16384,
    max_turns: int = 8,
) -> PolicyView:
    messages = [Message(role="user", content=QUESTION)]
    for batch in calls:
        messages.append(Message(role="assistant", tool_calls=batch))
        messages += [Message(role="tool", tool_name=c.name, content="...") for c in batch]
    return PolicyView(
        question=QUESTION,
        turn=turn,
        max_turns=max_turns,
        messages=messages,
        seen=seen,
        tokens_used=tokens_used,
        threshold=threshold,
        rejection=threshold * 3 // 2,
        budget=threshold * 2,
        top_k=30,
    )


def _after_first_round() -> tuple[dict[str, SeenChunk], list[ToolCall]]:
    first = HeuristicPlanner().step(_view({}, turn=1, calls=[])).tool_calls
    seen = dict(
        [
            _seen(
                "quiet-harbor",
                "The Quiet Harbor",
                "The Quiet Harbor is a 1950 drama film directed by Elena Marsh.",
                query=QUESTION,
                turn=1,
                rank=0,
            ),
            _seen(
                "loud-harbor",
                "The Loud Harbor",
                "The Loud Harbor is a 1962 comedy film.",
                query=QUESTION,
                turn=1,
                rank=1,
            ),
            _seen(
                "harbor-seal",
                "Harbor seal",
                "The harbor seal is a true seal.",
                query="Quiet Harbor",
                turn=1,
                rank=0,
            ),
        ]
    )
    return seen, first


def test_first_round_searches_question_and_entities_and_greps_quotes() -> None:
    # A chain of relations ("the director of ... born"): several places from the start.
    decision = HeuristicPlanner().step(_view({}, turn=1, calls=[]))
    calls = [(c.name, next(iter(c.arguments.values()))) for c in decision.tool_calls]
    assert calls[0] == ("search_corpus", QUESTION)
    assert ("search_corpus", "The Quiet Harbor") in calls
    assert ("grep_corpus", "(?i)The Quiet Harbor") in calls
    assert decision.final is None


def test_a_one_place_question_starts_with_the_plain_search_alone() -> None:
    question = 'What is the plot of "The Quiet Harbor"?'
    view = _view({}, turn=1, calls=[]).model_copy(update={"question": question})
    decision = HeuristicPlanner().step(view)
    calls = [(c.name, next(iter(c.arguments.values()))) for c in decision.tool_calls]
    # The plain search of the question, with the greps: depth only if it is not enough.
    assert calls == [("search_corpus", question), ("grep_corpus", "(?i)The Quiet Harbor")]


def test_second_round_hops_to_the_bridge_entity() -> None:
    seen, first = _after_first_round()
    eager = HeuristicPlanner(HeuristicPlannerConfig(first_round_entities=True))
    decision = eager.step(_view(seen, turn=2, calls=[first]))
    queries = [c.arguments.get("query") for c in decision.tool_calls]
    assert "Elena Marsh" in queries
    # Never a call that was already made.
    assert not {(c.name, str(c.arguments)) for c in decision.tool_calls} & {
        (c.name, str(c.arguments)) for c in first
    }


def test_same_view_gives_the_same_decision() -> None:
    seen, first = _after_first_round()
    view = _view(seen, turn=2, calls=[first])
    a = HeuristicPlanner().step(view)
    b = HeuristicPlanner().step(view)
    c = asyncio.run(HeuristicPlanner().decide(view))
    assert a.model_dump() == b.model_dump() == c.model_dump()


def test_forks_are_deterministic_variants() -> None:
    base = HeuristicPlanner()
    one, again = base.fork(3), base.fork(3)
    assert one.weights == again.weights
    assert one.weights != base.weights
    view = _view({}, turn=1, calls=[])
    assert one.step(view).model_dump() == again.step(view).model_dump()


def test_stops_when_the_last_round_added_nothing() -> None:
    seen, first = _after_first_round()
    hop = [ToolCall(name="search_corpus", arguments={"query": "Elena Marsh"})]
    # Turn 2's hop surfaced nothing new: at turn 3 the planner concludes.
    decision = HeuristicPlanner().step(_view(seen, turn=3, calls=[first, hop]))
    assert decision.tool_calls == []
    assert decision.final is not None
    assert decision.final[0].id == "quiet-harbor_0"
    assert {f.id for f in decision.final} <= set(seen)
    assert "Found by search_corpus" in decision.final[0].justification


def test_stops_at_max_turns() -> None:
    seen, first = _after_first_round()
    decision = HeuristicPlanner().step(_view(seen, turn=2, calls=[first], max_turns=2))
    assert decision.final is not None and not decision.tool_calls


def test_last_turn_concludes_even_when_the_context_is_full() -> None:
    seen, first = _after_first_round()
    used = sum(s.tokens for s in seen.values())
    decision = HeuristicPlanner().step(
        _view(seen, turn=2, calls=[first], max_turns=2, tokens_used=used, threshold=used)
    )
    assert decision.final is not None and not decision.tool_calls


def test_prunes_lowest_value_chunks_near_the_threshold_and_keeps_the_best() -> None:
    seen, first = _after_first_round()
    for i in range(20):
        cid, sc = _seen(
            f"filler-{i}",
            f"Filler {i}",
            f"Unrelated text number {i}.",
            query="Quiet Harbor",
            turn=1,
            rank=i + 1,
            tokens=100,
        )
        seen[cid] = sc
    used = sum(s.tokens for s in seen.values())
    planner = HeuristicPlanner(HeuristicPlannerConfig(keep_top=3, prune_to=0.5))
    decision = planner.step(
        _view(seen, turn=2, calls=[first], tokens_used=used, threshold=used + 10)
    )
    assert [c.name for c in decision.tool_calls] == ["prune_chunks"]
    pruned = set(decision.tool_calls[0].arguments["chunk_ids"])
    assert "quiet-harbor_0" not in pruned
    assert all(cid.startswith("filler-") for cid in pruned)
    assert sum(seen[c].tokens for c in pruned) >= used - int(0.5 * (used + 10))


def test_ranking_puts_entity_page_and_linked_page_first() -> None:
    seen, _ = _after_first_round()
    cid, sc = _seen(
        "elena-marsh",
        "Elena Marsh",
        "Elena Marsh was born in Tallinn.",
        query="Elena Marsh",
        turn=2,
        rank=0,
    )
    seen[cid] = sc
    ranked = score_chunks(plan_question(QUESTION), seen, HeuristicPlannerConfig().weights())
    assert [s.chunk_id for s in ranked[:2]] == ["quiet-harbor_0", "elena-marsh_0"]
    assert ranked[1].linked_from == "quiet-harbor_0"


def test_a_page_titled_with_jr_is_linked_from_text_that_writes_a_comma_before_it() -> None:
    seen, _ = _after_first_round()
    cid, sc = _seen(
        "quiet-harbor",
        "The Quiet Harbor",
        "The Quiet Harbor is a 1950 drama film directed by Elena Marsh, Jr.",
        query=QUESTION,
        turn=1,
        rank=0,
    )
    seen[cid] = sc
    for doc_id, title in (("elena-marsh-jr", "Elena Marsh Jr."), ("ed-marsh", "Ed Marsh")):
        cid, sc = _seen(doc_id, title, f"{title} was born in Tallinn.", query="x", turn=2, rank=5)
        seen[cid] = sc
    ranked = score_chunks(plan_question(QUESTION), seen, HeuristicPlannerConfig().weights())
    linked = {s.chunk_id: s.linked_from for s in ranked}
    assert linked["elena-marsh-jr_0"] == "quiet-harbor_0"
    assert linked["ed-marsh_0"] is None


def test_a_title_the_question_writes_whole_is_its_entity_and_a_part_of_it_is_not() -> None:
    question = "Who is the spouse of the director of Jump for Glory?"
    pages = [
        ("glory-1989", "Glory (1989 film)", "Glory is a 1989 American war film.", 0),
        ("jump", "Jump for Glory", "Jump for Glory is a 1937 film directed by Raoul Walsh.", 3),
    ]
    seen = dict(
        _seen(doc_id, title, text, query=question, turn=1, rank=rank)
        for doc_id, title, text, rank in pages
    )
    plan = plan_question(question)
    assert plan.entities == ["Jump", "Glory"]  # what the capitals alone give
    ranked = score_chunks(plan, seen, HeuristicPlannerConfig().weights())
    entity = {s.chunk_id: s.title_entity for s in ranked}
    assert entity == {"jump_0": "Jump for Glory", "glory-1989_0": None}
    assert ranked[0].chunk_id == "jump_0"
    # Without it, the page titled by a part of the name takes the match.
    before = score_chunks(plan, seen, HeuristicPlannerConfig(question_titles=False).weights())
    assert {s.chunk_id: s.title_entity for s in before}["glory-1989_0"] == "Glory"


# --------------------------------------------------------------------------- real episode


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    corpus = SqliteCorpus(
        Path(tmp_path_factory.mktemp("planner")) / "s", embedder="hash", chunk_tokens=40
    )
    report = corpus.upsert(Document(id=i, title=t, text=x) for i, t, x in DOCS)
    assert not report.failed
    yield corpus
    corpus.close()


def test_episode_through_the_graph_uses_every_tool_and_finds_both_hops(store) -> None:
    from sift.graphs import HarnessConfig, asearch

    assert len(store.read("quiet-harbor")) > 5, "the film page must span several chunks"
    # Small searches surface the film page only in part: a hit worth reading whole.
    config = HarnessConfig(search_max_chunks=3)
    result = asyncio.run(asearch(QUESTION, store, policy=HeuristicPlanner(), config=config))
    tools = {call.tool for turn in result.trace for call in turn.calls}
    assert {"search_corpus", "grep_corpus", "read_document"} <= tools
    hop_queries = [
        call.arguments.get("query")
        for turn in result.trace[1:]
        for call in turn.calls
        if call.tool == "search_corpus"
    ]
    assert "Elena Marsh" in hop_queries
    docs = list(dict.fromkeys(e.doc_id for e in result.evidence))
    assert docs[:2] == ["quiet-harbor", "elena-marsh"]
    surfaced = {cid for turn in result.trace for call in turn.calls for cid in call.added}
    # The planner's picks were surfaced; the rest of the list is the harness's plain
    # search of the question (HarnessConfig.keep_plain_search), and says so.
    plain = [e for e in result.evidence if e.chunk_id not in surfaced]
    assert all(e.justification.startswith("One plain search of the question") for e in plain)
    assert all(e.justification for e in result.evidence)
    assert result.stopped_because == "final"


def test_episode_under_a_small_budget_prunes(store) -> None:
    from sift.graphs import HarnessConfig, asearch

    config = HarnessConfig(threshold_tokens=1800, rejection_tokens=2400, budget_tokens=3000)
    result = asyncio.run(asearch(QUESTION, store, policy=HeuristicPlanner(), config=config))
    pruned_by_policy = [
        call for turn in result.trace for call in turn.calls if call.tool == "prune_chunks"
    ]
    assert pruned_by_policy and pruned_by_policy[0].pruned
    assert result.usage.peak_context_tokens <= 3000
    assert result.evidence
