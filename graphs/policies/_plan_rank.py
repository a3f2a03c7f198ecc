"""Scoring of surfaced chunks for the heuristic planner, and bridge-entity extraction.

A chunk's value is judged from what a reader of the question would look at: does its
title name an entity of the question (the page *about* it), how much of the question's
content it covers (IDF over what the episode has surfaced), how well the search that
found it ranked it and for which sub-query, and whether it is linked from an anchor page
(its title is written in the text of a page about a question entity: the second hop).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

from sift.graphs.policies._plan_text import (
    RELATION_CUES,
    STOPWORDS,
    QuestionPlan,
    candidate_spans,
    content_terms,
    norm_title,
    plan_question,
    terms,
)
from sift.types import SeenChunk

__all__ = ["ChunkScore", "Weights", "bridge_spans", "score_chunks"]


@dataclass(frozen=True)
class Weights:
    """The knobs of the ranking (`HeuristicPlannerConfig.weights()` builds them from the
    planner's configuration; `fork` perturbs them for rollouts)."""

    title: float
    entity: float
    coverage: float
    rank: float
    link: float
    multi: float
    # Per doubling of a chunk's tokens: at equal relevance the shorter chunk is better
    # evidence (coverage alone favours long chunks, which mention more words by chance).
    length: float
    mention: float
    # How many anchor documents are searched for links, the coverage that makes a chunk
    # an anchor, and the step down of each further chunk of one document in the ranking.
    max_anchor_docs: int
    anchor_coverage: float
    same_doc_step: float


@dataclass
class ChunkScore:
    chunk_id: str
    score: float
    title_entity: str | None = None
    coverage: float = 0.0
    linked_from: str | None = None
    found_by: str = ""
    reasons: list[str] = field(default_factory=list)


@lru_cache(maxsize=65536)
def _chunk_terms(title: str, text: str) -> frozenset[str]:
    return frozenset(content_terms(f"{title} {text}"))


@lru_cache(maxsize=16384)
def _entity_terms(entity: str) -> frozenset[str]:
    return frozenset(content_terms(entity))


@lru_cache(maxsize=65536)
def _name_terms(name: str) -> frozenset[str]:
    # Function words count here: "The King and I" is not a page about "King".
    return frozenset(t for t in terms(name) if t not in {"the", "a", "an"})


@lru_cache(maxsize=65536)
def _title_matches(title_n: str, entity_n: str) -> bool:
    """The page is about the entity: same words up to stemming, or nearly (Jaccard >= 2/3:
    "Taylor Eric Kemp" ~ "Taylor Kemp", but "Virginia" !~ "McLean, Virginia")."""
    if not title_n or not entity_n:
        return False
    if title_n == entity_n:
        return True
    a, b = _name_terms(title_n), _name_terms(entity_n)
    if not a or not b:
        return False
    return len(a & b) / len(a | b) >= 2 / 3


def _role_of(argument: str, plan: QuestionPlan) -> str:
    if argument == plan.question:
        return "question"
    if argument in plan.entities:
        return "entity"
    return "hop"


def score_chunks(
    plan: QuestionPlan,
    seen: dict[str, SeenChunk],
    weights: Weights,
    *,
    include_pruned: bool = False,
) -> list[ChunkScore]:
    """Every surfaced chunk scored against the question, best first (ties by id)."""
    items = [(cid, sc) for cid, sc in seen.items() if include_pruned or not sc.pruned]
    if not items:
        return []
    q_terms = content_terms(plan.question)
    n = len(seen)
    df: dict[str, int] = {t: 0 for t in q_terms}
    bags: dict[str, frozenset[str]] = {}
    for cid, sc in seen.items():
        bag = _chunk_terms(sc.chunk.title, sc.chunk.text)
        bags[cid] = bag
        for t in q_terms:
            if t in bag:
                df[t] += 1
    idf = {t: math.log(1.0 + (n + 1) / (df[t] + 0.5)) for t in q_terms}
    total_idf = sum(idf.values()) or 1.0
    entities_n = [(e, norm_title(e)) for e in plan.entities]

    scores: dict[str, ChunkScore] = {}
    for cid, sc in items:
        chunk = sc.chunk
        title_n = norm_title(chunk.title)
        bag = bags[cid]
        cs = ChunkScore(chunk_id=cid, score=0.0)
        for entity, entity_n in entities_n:
            if _title_matches(title_n, entity_n):
                cs.title_entity = entity
                break
        covered = sum(idf[t] for t in q_terms if t in bag)
        cs.coverage = covered / total_idf
        ent_hits = sum(1 for e, _ in entities_n if _entity_terms(e) and _entity_terms(e) <= bag)
        first = sc.found_by[0] if sc.found_by else None
        rank_part = 1.0 / (1.0 + sc.first_rank) if first and first.tool == "search_corpus" else 0.3
        if first is not None:
            cs.found_by = f"{first.tool}({first.argument!r}) turn {first.turn}"
        cs.score = (
            weights.title * (1.0 if cs.title_entity else 0.0)
            + weights.entity * min(ent_hits, 3) / 3.0
            + weights.coverage * cs.coverage
            + weights.rank * rank_part
            + weights.multi * min(len({f.argument for f in sc.found_by}) - 1, 2)
            - weights.length * math.log2(max(sc.tokens, 16) / 128)
        )
        scores[cid] = cs

    # Second hop: a page whose title is written in an anchor's text, near the words of
    # the question, is the page the anchor points to.
    # An anchor is a document: the text of all its surfaced chunks, in order.
    ordered = sorted(scores.values(), key=lambda s: (-s.score, s.chunk_id))
    top = ordered[0].score if ordered else 1.0
    pieces: dict[str, list[SeenChunk]] = {}
    for sc in seen.values():
        pieces.setdefault(sc.chunk.doc_id, []).append(sc)
    anchor_info = []
    mentions: list[tuple[str, float]] = []
    anchor_docs: set[str] = set()
    for a in ordered:
        doc_id = seen[a.chunk_id].chunk.doc_id
        if doc_id in anchor_docs or not (a.title_entity or a.coverage >= weights.anchor_coverage):
            continue
        anchor_docs.add(doc_id)
        parts = sorted(pieces[doc_id], key=lambda p: p.chunk.index)
        raw = " ".join(p.chunk.text for p in parts)
        low = raw.lower()
        anchor_info.append((a, low, _cue_positions(plan, low)))
        if weights.mention and len(anchor_info) <= 2:
            spans = bridge_spans(plan, seen[a.chunk_id].chunk.title, raw, limit=3)
            strength = a.score / top
            mentions += [(span.lower(), strength * sc_) for span, sc_ in spans]
        if len(anchor_docs) >= weights.max_anchor_docs:
            break
    entity_keys = {e.lower() for e in plan.entities}
    for cid, cs in scores.items():
        title_n = norm_title(seen[cid].chunk.title)
        if len(title_n) < 4 or title_n in entity_keys:
            continue
        # "Arthurdale, West Virginia" is written "Arthurdale" in running text.
        head = norm_title(seen[cid].chunk.title.split(",")[0])
        names = [title_n] if len(head) < 4 or head == title_n else [title_n, head]
        best = 0.0
        for a, low, cue_pos in anchor_info:
            if a.chunk_id == cid or seen[a.chunk_id].chunk.doc_id == seen[cid].chunk.doc_id:
                continue
            m = None
            for name in names:
                # Substring first: the word-boundary regex only runs on real candidates.
                if name in low:
                    m = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", low)
                    if m:
                        break
            if m:
                strength = (a.score / top) * proximity(cue_pos, m.start())
                if strength > best:
                    best, cs.linked_from = strength, a.chunk_id
        cs.score += weights.link * best
    # A page that names an anchor's bridge and covers the rest of the question answers
    # the next hop even when its title is not the bridge ("National debt of the United
    # States" for "China" and "debt").
    if mentions and plan.residual:
        residual = set(plan.residual)
        for cid, cs in scores.items():
            chunk = seen[cid].chunk
            if chunk.doc_id in anchor_docs:
                continue
            text = f"{chunk.title} {chunk.text}".lower()
            hit = max((w for span, w in mentions if span in text), default=0.0)
            if hit:
                share = len(residual & bags[cid]) / len(residual)
                cs.score += weights.mention * hit * share
    ranked = sorted(scores.values(), key=lambda s: (-s.score, s.chunk_id))
    return _spread_documents(ranked, seen, weights.same_doc_step)


def _spread_documents(
    ranked: list[ChunkScore], seen: dict[str, SeenChunk], step: float
) -> list[ChunkScore]:
    """Later chunks of an already ranked document step down a little, so that one long
    page does not crowd out the other hops' pages."""
    per_doc: dict[str, int] = {}
    for s in ranked:
        doc_id = seen[s.chunk_id].chunk.doc_id
        n = per_doc.get(doc_id, 0)
        per_doc[doc_id] = n + 1
        s.score -= step * n
    return sorted(ranked, key=lambda s: (-s.score, s.chunk_id))


def _cue_positions(plan: QuestionPlan, low_text: str) -> list[int]:
    return _cue_positions_cached(plan.question, low_text)


@lru_cache(maxsize=4096)
def _cue_pattern(question: str) -> re.Pattern[str] | None:
    plan = _plan_of(question)
    cue_words: set[str] = set()
    for rel in plan.relations:
        cue_words.update(RELATION_CUES[rel])
    entity_words = {w for e in plan.entities for w in re.findall(r"[a-z]+", e.lower())}
    for word in re.findall(r"[a-z]+", plan.question.lower()):
        if word not in STOPWORDS and len(word) > 3 and word not in entity_words:
            cue_words.add(word[:5])
    # Mentions of the question's own entities also point at the relevant sentence.
    cue_words.update(e.lower() for e in plan.entities if len(e) > 3)
    if not cue_words:
        return None
    alternatives = "|".join(re.escape(c) for c in sorted(cue_words, key=lambda c: (-len(c), c)))
    return re.compile(rf"\b(?={alternatives})")


@lru_cache(maxsize=8192)
def _cue_positions_cached(question: str, low_text: str) -> list[int]:
    pattern = _cue_pattern(question)
    return [] if pattern is None else [m.start() for m in pattern.finditer(low_text)]


@lru_cache(maxsize=4096)
def _plan_of(question: str) -> QuestionPlan:
    return plan_question(question)


def proximity(cue_pos: list[int], pos: int) -> float:
    """How close a mention is to the question's cues in a text (1 = on top of one)."""
    dist = min((abs(pos - p) for p in cue_pos), default=400)
    return 1.0 / (1.0 + dist / 40.0) + 0.3 / (1.0 + pos / 200.0)


def bridge_spans(
    plan: QuestionPlan, title: str, text: str, *, limit: int
) -> list[tuple[str, float]]:
    """Names in an anchor's text that the question's relation most likely points to.

    Spans near a cue of the question's relation words ("father" -> "son of") or near the
    question's other words rank first; earlier spans win ties (a page states its key
    facts first). Spans that merely repeat the question or the page's own title are skipped.
    """
    cue_pos = _cue_positions(plan, text.lower())
    own = norm_title(title)
    q_low = plan.question.lower()
    ranked: list[tuple[float, int, str]] = []
    seen_spans: set[str] = set()
    for span, pos in candidate_spans(text):
        key = span.lower()
        if key in seen_spans or len(key) < 3 or key in q_low or key in own or own in key:
            continue
        if key in STOPWORDS or not any(c.isalpha() for c in key):
            continue
        seen_spans.add(key)
        score = proximity(cue_pos, pos) + 0.1 * min(span.count(" "), 3)
        if " " not in span and (pos == 0 or text[:pos].rstrip()[-1:] in {".", "!", "?", ";"}):
            # A lone capitalised word opening a sentence is as often a plain word
            # ("Filming took place ...") as a name.
            score *= 0.5
        ranked.append((-score, pos, span))
    ranked.sort()
    return [(span, -neg) for neg, _, span in ranked[:limit]]
