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

from sift.graphs.policies._plan_ja_words import noun_runs
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
from sift.graphs.policies._planner_config import TextLimits, Weights
from sift.text import find_mention, has_cjk, name_without_suffix
from sift.types import SeenChunk

__all__ = ["ChunkScore", "Weights", "bridge_spans", "proximity", "score_chunks"]


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
def _chunk_terms(title: str, text: str, limits: TextLimits) -> frozenset[str]:
    return frozenset(content_terms(f"{title} {text}", limits))


@lru_cache(maxsize=16384)
def _entity_terms(entity: str, limits: TextLimits) -> frozenset[str]:
    return frozenset(content_terms(entity, limits))


@lru_cache(maxsize=65536)
def _name_terms(name: str) -> frozenset[str]:
    # Function words count here: "The King and I" is not a page about "King".
    return frozenset(t for t in terms(name) if t not in {"the", "a", "an"})


@lru_cache(maxsize=65536)
def _title_matches(title_n: str, entity_n: str, jaccard: float) -> bool:
    """The page is about the entity: same words up to stemming, or nearly (Jaccard of
    at least `jaccard`, 2/3 by default: "Taylor Eric Kemp" ~ "Taylor Kemp", but
    "Virginia" !~ "McLean, Virginia")."""
    if not title_n or not entity_n:
        return False
    if title_n == entity_n:
        return True
    a, b = _name_terms(title_n), _name_terms(entity_n)
    if not a or not b:
        return False
    return len(a & b) / len(a | b) >= jaccard


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
    idf = _question_idf(plan, seen, weights.text_limits)
    entities_n = [(e, norm_title(e)) for e in plan.entities]
    # A question without spaces: its own search's rank is the strongest single signal.
    cjk = has_cjk(plan.question)
    question_rank = weights.question_rank if cjk else weights.question_rank_latin
    named = {} if cjk or not weights.question_titles else _question_titles(plan.question, seen)
    scores = {
        cid: _own_score(cid, sc, plan, idf, entities_n, question_rank, weights, named)
        for cid, sc in items
    }
    anchors = _anchors(plan, seen, scores, weights)
    _add_links(plan, seen, scores, anchors, weights)
    _add_mentions(plan, seen, scores, anchors, idf.bags, weights)
    ranked = sorted(scores.values(), key=lambda s: (-s.score, s.chunk_id))
    return _spread_documents(ranked, seen, weights.same_doc_step)


@dataclass
class _Idf:
    """The question's content terms weighted by their IDF over what the episode surfaced,
    and each surfaced chunk's bag of content terms."""

    terms: list[str]
    idf: dict[str, float]
    total: float
    bags: dict[str, frozenset[str]]


def _question_idf(plan: QuestionPlan, seen: dict[str, SeenChunk], limits: TextLimits) -> _Idf:
    q_terms = content_terms(plan.question, limits)
    n = len(seen)
    df: dict[str, int] = {t: 0 for t in q_terms}
    bags: dict[str, frozenset[str]] = {}
    for cid, sc in seen.items():
        bag = _chunk_terms(sc.chunk.title, sc.chunk.text, limits)
        bags[cid] = bag
        for t in q_terms:
            if t in bag:
                df[t] += 1
    # BM25's smoothed IDF over what the episode surfaced (its 0.5 is part of the formula).
    idf = {t: math.log(1.0 + (n + 1) / (df[t] + 0.5)) for t in q_terms}
    return _Idf(q_terms, idf, sum(idf.values()) or 1.0, bags)


def _question_titles(question: str, seen: dict[str, SeenChunk]) -> dict[str, bool]:
    """The surfaced pages' titles the question writes, by normalised title: True for a
    name of its own there (two words or more, not inside a longer such title), False for
    a title written only inside one ("glory" in "... the director of Jump for Glory?").
    Titles of one word written elsewhere are left out (the parsed entities judge them).

    The question's parser reads names from capitals, so "Jump for Glory" comes out as
    "Jump" and "Glory", and "Glory (1989 film)" took the title match; the titles of
    what the episode found say where the question's names begin and end."""
    low = norm_title(question)
    where: dict[str, tuple[int, int]] = {}
    for sc in seen.values():
        title_n = norm_title(sc.chunk.title)
        if title_n and title_n not in where and (at := find_mention(title_n, low)) is not None:
            where[title_n] = (at, at + len(title_n))
    names = [span for title_n, span in where.items() if " " in title_n]

    def inside(span: tuple[int, int]) -> bool:
        return any(a <= span[0] and span[1] <= b and (a, b) != span for a, b in names)

    out: dict[str, bool] = {}
    for title_n, span in where.items():
        if " " in title_n:
            out[title_n] = not inside(span)
        elif inside(span):  # a one-word span is never one of `names` itself
            out[title_n] = False
    return out


def _own_score(
    cid: str,
    sc: SeenChunk,
    plan: QuestionPlan,
    idf: _Idf,
    entities_n: list[tuple[str, str]],
    question_rank: float,
    weights: Weights,
    named: dict[str, bool] | None = None,
) -> ChunkScore:
    """A chunk's score from itself and how it was found: its title names a question
    entity, its coverage of the question, the entities it holds, its rank and the search
    that ranked it, how many searches found it, its length."""
    limits = weights.text_limits
    chunk = sc.chunk
    title_n = norm_title(chunk.title)
    bag = idf.bags[cid]
    cs = ChunkScore(chunk_id=cid, score=0.0)
    whole = (named or {}).get(title_n)
    if whole:
        cs.title_entity = chunk.title
    elif whole is None:
        for entity, entity_n in entities_n:
            if _title_matches(title_n, entity_n, weights.title_match_jaccard):
                cs.title_entity = entity
                break
    covered = sum(idf.idf[t] for t in idf.terms if t in bag)
    cs.coverage = covered / idf.total
    ent_hits = sum(
        1 for e, _ in entities_n if _entity_terms(e, limits) and _entity_terms(e, limits) <= bag
    )
    first = sc.found_by[0] if sc.found_by else None
    searched = first is not None and first.tool == "search_corpus"
    rank_part = 1.0 / (1.0 + sc.first_rank) if searched else weights.other_tool_rank_part
    by_question = searched and first is not None and first.argument == plan.question
    if first is not None:
        cs.found_by = f"{first.tool}({first.argument!r}) turn {first.turn}"
    tokens = max(sc.tokens, weights.length_floor_tokens)
    cs.score = (
        weights.title * (1.0 if cs.title_entity else 0.0)
        + weights.entity * min(ent_hits, weights.entity_hits_cap) / weights.entity_hits_cap
        + weights.coverage * cs.coverage
        + weights.rank * rank_part
        + question_rank * (rank_part if by_question else 0.0)
        + weights.multi * min(len({f.argument for f in sc.found_by}) - 1, weights.multi_cap)
        - weights.length * math.log2(tokens / weights.length_reference_tokens)
    )
    return cs


@dataclass
class _Anchor:
    """A document about a question entity (or covering the question), as its best chunk,
    its surfaced text lower-cased, its normalised title, and where the question's
    relation cues stand in that text."""

    best: ChunkScore
    low: str
    title_n: str
    cue_pos: list[int]


@dataclass
class _Anchors:
    anchors: list[_Anchor]
    # Bridge spans written in the first anchors, with the strength of their anchor.
    mentions: list[tuple[str, float]]
    docs: set[str]
    # The best score of all, before any link: anchors' strengths are relative to it.
    top: float


def _anchors(
    plan: QuestionPlan, seen: dict[str, SeenChunk], scores: dict[str, ChunkScore], weights: Weights
) -> _Anchors:
    """The anchors, best first: an anchor is a document, the text of all its surfaced
    chunks in order."""
    ordered = sorted(scores.values(), key=lambda s: (-s.score, s.chunk_id))
    top = ordered[0].score if ordered else 1.0
    pieces: dict[str, list[SeenChunk]] = {}
    for sc in seen.values():
        pieces.setdefault(sc.chunk.doc_id, []).append(sc)
    found = _Anchors([], [], set(), top)
    for a in ordered:
        doc_id = seen[a.chunk_id].chunk.doc_id
        if doc_id in found.docs or not (a.title_entity or a.coverage >= weights.anchor_coverage):
            continue
        found.docs.add(doc_id)
        parts = sorted(pieces[doc_id], key=lambda p: p.chunk.index)
        raw = " ".join(p.chunk.text for p in parts)
        low = raw.lower()
        anchor_title = norm_title(seen[a.chunk_id].chunk.title)
        cue_pos = _cue_positions(plan, low, weights.text_limits)
        found.anchors.append(_Anchor(a, low, anchor_title, cue_pos))
        if weights.mention and len(found.anchors) <= weights.mention_anchors:
            title = seen[a.chunk_id].chunk.title
            spans = bridge_spans(plan, title, raw, limit=weights.mention_spans, weights=weights)
            strength = a.score / top
            found.mentions += [(span.lower(), strength * sc_) for span, sc_ in spans]
        if len(found.docs) >= weights.max_anchor_docs:
            break
    return found


def _add_links(
    plan: QuestionPlan,
    seen: dict[str, SeenChunk],
    scores: dict[str, ChunkScore],
    found: _Anchors,
    weights: Weights,
) -> None:
    """Second hop: a page whose title is written in an anchor's text, near the words of
    the question, is the page the anchor points to."""
    cjk = has_cjk(plan.question)
    entity_keys = {e.lower() for e in plan.entities}
    shortest = weights.link_min_title_chars
    for cid, cs in scores.items():
        title_n = norm_title(seen[cid].chunk.title)
        if len(title_n) < shortest or title_n in entity_keys:
            continue
        # "Arthurdale, West Virginia" is written "Arthurdale" in running text.
        head = norm_title(seen[cid].chunk.title.split(",")[0])
        names = [title_n] if len(head) < shortest or head == title_n else [title_n, head]
        # "George Nicholls Jr." is written "George Nicholls, Jr." or "George Nicholls".
        short = norm_title(name_without_suffix(seen[cid].chunk.title.split("(")[0]))
        if len(short) >= shortest and short not in names:
            names.append(short)
        best = 0.0
        for anchor in found.anchors:
            a = anchor.best
            if seen[a.chunk_id].chunk.doc_id == seen[cid].chunk.doc_id:
                continue  # a page does not link to itself
            if cjk and anchor.title_n == title_n:
                # Nor, in Japanese, to the other paragraphs of its own article: JSQuAD's
                # articles are a score of paragraphs of one title, each written with the
                # title, and the bonus would lift all of them alike. (In MuSiQue, whose
                # articles have a few paragraphs, that link finds the next hop: skipping
                # it there cost 0.007 all-gold@10.)
                continue
            at = next(
                (p for name in names if (p := find_mention(name, anchor.low)) is not None), None
            )
            if at is not None:
                strength = (a.score / found.top) * proximity(anchor.cue_pos, at, weights)
                if strength > best:
                    best, cs.linked_from = strength, a.chunk_id
        cs.score += weights.link * best


def _add_mentions(
    plan: QuestionPlan,
    seen: dict[str, SeenChunk],
    scores: dict[str, ChunkScore],
    found: _Anchors,
    bags: dict[str, frozenset[str]],
    weights: Weights,
) -> None:
    """A page that names an anchor's bridge and covers the rest of the question answers
    the next hop even when its title is not the bridge ("National debt of the United
    States" for "China" and "debt")."""
    if not (found.mentions and plan.residual):
        return
    residual = set(plan.residual)
    for cid, cs in scores.items():
        chunk = seen[cid].chunk
        if chunk.doc_id in found.docs:
            continue
        text = f"{chunk.title} {chunk.text}".lower()
        hit = max((w for span, w in found.mentions if span in text), default=0.0)
        if hit:
            share = len(residual & bags[cid]) / len(residual)
            cs.score += weights.mention * hit * share


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


def _cue_positions(plan: QuestionPlan, low_text: str, limits: TextLimits) -> list[int]:
    return _cue_positions_cached(plan.question, low_text, limits)


@lru_cache(maxsize=4096)
def _cue_pattern(question: str, limits: TextLimits) -> re.Pattern[str] | None:
    plan = _plan_of(question, limits)
    cue_words: set[str] = set()
    if has_cjk(question):
        # Japanese: the question's noun runs (names and the words around them), found
        # anywhere (no word boundaries to look for).
        cues = [run for run, _ in noun_runs(question)] + list(plan.entities)
        cue_words = {c.lower() for c in cues if len(c) >= limits.cjk_name_min_chars}
        if not cue_words:
            return None
        alternatives = "|".join(re.escape(c) for c in sorted(cue_words, key=lambda c: (-len(c), c)))
        return re.compile(rf"(?={alternatives})")
    for rel in plan.relations:
        cue_words.update(RELATION_CUES[rel])
    entity_words = {w for e in plan.entities for w in re.findall(r"[a-z]+", e.lower())}
    for word in re.findall(r"[a-z]+", plan.question.lower()):
        if (
            word not in STOPWORDS
            and len(word) >= limits.cue_word_min_chars
            and word not in entity_words
        ):
            cue_words.add(word[: limits.cue_prefix_chars])
    # Mentions of the question's own entities also point at the relevant sentence.
    cue_words.update(e.lower() for e in plan.entities if len(e) >= limits.cue_entity_min_chars)
    if not cue_words:
        return None
    alternatives = "|".join(re.escape(c) for c in sorted(cue_words, key=lambda c: (-len(c), c)))
    return re.compile(rf"\b(?={alternatives})")


@lru_cache(maxsize=8192)
def _cue_positions_cached(question: str, low_text: str, limits: TextLimits) -> list[int]:
    pattern = _cue_pattern(question, limits)
    return [] if pattern is None else [m.start() for m in pattern.finditer(low_text)]


@lru_cache(maxsize=4096)
def _plan_of(question: str, limits: TextLimits) -> QuestionPlan:
    return plan_question(question, limits)


@lru_cache(maxsize=1)
def _default_weights() -> Weights:
    from sift.graphs.policies._planner_config import HeuristicPlannerConfig

    return HeuristicPlannerConfig().weights()


def proximity(cue_pos: list[int], pos: int, weights: Weights | None = None) -> float:
    """How close a mention is to the question's cues in a text (1 = on top of one)."""
    w = weights or _default_weights()
    dist = min((abs(pos - p) for p in cue_pos), default=w.proximity_default_distance)
    return 1.0 / (1.0 + dist / w.proximity_distance_scale) + w.proximity_position_weight / (
        1.0 + pos / w.proximity_position_scale
    )


def bridge_spans(
    plan: QuestionPlan,
    title: str,
    text: str,
    *,
    limit: int,
    weights: Weights | None = None,
) -> list[tuple[str, float]]:
    """Names in an anchor's text that the question's relation most likely points to.

    Spans near a cue of the question's relation words ("father" -> "son of") or near the
    question's other words rank first; earlier spans win ties (a page states its key
    facts first). Spans that merely repeat the question or the page's own title are skipped.
    """
    w = weights or _default_weights()
    cue_pos = _cue_positions(plan, text.lower(), w.text_limits)
    own = norm_title(title)
    q_low = plan.question.lower()
    ranked: list[tuple[float, int, str]] = []
    seen_spans: set[str] = set()
    for span, pos in candidate_spans(text):
        key = span.lower()
        shortest = w.text_limits.cjk_name_min_chars if has_cjk(key) else w.span_min_chars
        if key in seen_spans or len(key) < shortest or key in q_low or key in own or own in key:
            continue
        if key in STOPWORDS or not any(c.isalpha() for c in key):
            continue
        seen_spans.add(key)
        words = min(span.count(" "), w.span_word_bonus_cap)
        score = proximity(cue_pos, pos, w) + w.span_word_bonus * words
        if " " not in span and (pos == 0 or text[:pos].rstrip()[-1:] in {".", "!", "?", ";"}):
            # A lone capitalised word opening a sentence is as often a plain word
            # ("Filming took place ...") as a name.
            score *= w.sentence_start_factor
        ranked.append((-score, pos, span))
    ranked.sort()
    return [(span, -neg) for neg, _, span in ranked[:limit]]
