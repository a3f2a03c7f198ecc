"""How deep an episode goes, and what the final list keeps of the first plain search.

The planner's first round is the plain search of the question (and a grep of each name it
types). What that search found decides the rest (DESIGN "Depth follows the question"):

- `coverage`: whether one of its best chunks already covers the question (every key word,
  every name typed found): then the episode stops there, for about the cost of one search;
- `keep_question_order`: the final list fuses the planner's ranking with the order of that
  search, so a chunk the plain search ranked high is not dropped for one the planner
  merely liked better;
- `names_first`: a chunk that writes a name the question types comes before those that
  do not;
- `not_found_flags`: when nothing surfaced matches the question's key words, or a name it
  types occurs nowhere, the result says so instead of passing the nearest text off as an
  answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from sift.fusion import rrf_scores
from sift.graphs.policies._plan_rank import ChunkScore, _question_idf
from sift.graphs.policies._plan_text import QuestionPlan
from sift.graphs.policies._planner_config import TextLimits
from sift.types import NOT_FOUND, PolicyView, SeenChunk

__all__ = [
    "Coverage",
    "coverage",
    "found_share",
    "keep_question_order",
    "names_first",
    "not_found_flags",
    "question_order",
    "round_robin",
    "search_order",
    "writes_name",
]


def writes_name(chunk: SeenChunk, name: str) -> bool:
    """The chunk writes the name, letter case aside (users type `fontconfig_file`)."""
    low = name.lower()
    return low in chunk.chunk.text.lower() or low in chunk.chunk.title.lower()


def question_order(view: PolicyView) -> list[str]:
    """The chunks the question's own search surfaced, in that search's order."""
    if view.question_hits:
        return [c for c in view.question_hits if c in view.seen]
    hits = [
        (sc.first_rank, cid)
        for cid, sc in view.seen.items()
        if sc.found_by
        and sc.found_by[0].tool == "search_corpus"
        and sc.found_by[0].argument == view.question
    ]
    return [cid for _, cid in sorted(hits)]


def search_order(view: PolicyView, query: str) -> list[str]:
    """The chunks one search surfaced, in that search's order."""
    hits = view.search_hits.get(query.strip())
    if hits is not None:
        return [c for c in hits if c in view.seen]
    found = [
        (sc.first_rank, cid)
        for cid, sc in view.seen.items()
        if any(f.tool == "search_corpus" and f.argument == query for f in sc.found_by)
    ]
    return [cid for _, cid in sorted(found)]


def round_robin(orders: list[list[str]]) -> list[str]:
    """The first of each order, then the second of each, and so on; once each."""
    out: list[str] = []
    taken: set[str] = set()
    for depth in range(max((len(o) for o in orders), default=0)):
        for order in orders:
            if depth < len(order) and order[depth] not in taken:
                taken.add(order[depth])
                out.append(order[depth])
    return out


@dataclass(frozen=True)
class Coverage:
    """What the first search found of the question."""

    # One of the search's best chunks covers the question, every name typed was found.
    complete: bool
    # The best share of the question's content words one of those chunks covers.
    best_share: float
    # The chunk that covers most.
    chunk_id: str | None
    # Names the question types that no surfaced chunk writes.
    missing_names: tuple[str, ...]


def coverage(
    plan: QuestionPlan,
    view: PolicyView,
    ranked: list[ChunkScore],
    names: tuple[str, ...],
    *,
    top: int,
    share: float,
) -> Coverage:
    """Whether the question's own search covers it: one of its `top` best chunks holds at
    least `share` of the question's content words (IDF-weighted over what was surfaced),
    and every name the question types is written in some surfaced chunk."""
    by_id = {s.chunk_id: s for s in ranked}
    best: ChunkScore | None = None
    for cid in question_order(view)[:top]:
        scored = by_id.get(cid)
        if scored is not None and (best is None or scored.coverage > best.coverage):
            best = scored
    missing = tuple(
        name
        for name in names
        if not any(writes_name(sc, name) for sc in view.seen.values() if not sc.pruned)
    )
    best_share = best.coverage if best is not None else 0.0
    shaped = not plan.comparison and not plan.relations
    complete = shaped and best is not None and not missing and best_share >= share - 1e-9
    return Coverage(complete, best_share, best.chunk_id if best else None, missing)


def keep_question_order(
    order: list[str], view: PolicyView, *, weight: float, fusion_k: int
) -> list[str]:
    """The planner's order fused with the question search's order (weighted reciprocal
    rank; ties keep the planner's order)."""
    searched = [c for c in question_order(view) if c in order]
    if not searched or weight <= 0:
        return order
    scores = rrf_scores(((1.0, order), (weight, searched)), fusion_k)
    position = {cid: i for i, cid in enumerate(order)}
    return sorted(order, key=lambda c: (-scores.get(c, 0.0), position[c]))


def names_first(order: list[str], view: PolicyView, names: tuple[str, ...]) -> list[str]:
    """The chunks that write a name the question types, then the rest, each group in
    `order`'s order."""
    if not names:
        return order
    holding = [c for c in order if any(writes_name(view.seen[c], n) for n in names)]
    if not holding:
        return order
    held = set(holding)
    return holding + [c for c in order if c not in held]


def found_share(plan: QuestionPlan, view: PolicyView, limits: TextLimits) -> float:
    """The share of the question's content words (IDF-weighted over what was surfaced)
    that some surfaced chunk holds. A word the corpus holds is one its searches bring
    back (a rare word weighs most in BM25), so a low share means the corpus lacks what
    the question is about."""
    idf = _question_idf(plan, view.seen, limits)
    if not idf.terms:
        return 1.0
    held: set[str] = set()
    for cid, bag in idf.bags.items():
        if not view.seen[cid].pruned:
            held |= bag
    return sum(idf.idf[t] for t in idf.terms if t in held) / idf.total


def not_found_flags(
    plan: QuestionPlan,
    names: tuple[str, ...],
    view: PolicyView,
    limits: TextLimits,
    *,
    share: float,
) -> list[str]:
    """`not_found:<name>` for each name the question types that no surfaced chunk writes
    (the episode grepped it over the whole corpus); `not_found` when what was surfaced
    holds less than `share` of the question's content words."""
    live = [sc for sc in view.seen.values() if not sc.pruned]
    flags = [f"{NOT_FOUND}:{n}" for n in names if not any(writes_name(sc, n) for sc in live)]
    if not flags and found_share(plan, view, limits) < share:
        flags.append(NOT_FOUND)
    return flags
