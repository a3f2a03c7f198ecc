"""Text analysis for the heuristic planner: terms, entity spans, question decomposition.

Everything here is a pure function of strings, so the planner stays deterministic and
needs no model. The entity finder is deliberately simple (capitalised spans with the
connectors that names use, quoted strings, the alternatives of an "A or B" comparison):
it is what a search sub-agent needs to plan distinct sub-queries, not a full NER.
"""

from __future__ import annotations

import re
from functools import lru_cache

from sift.graphs.policies._plan_ja import plan_question_ja
from sift.graphs.policies._plan_ja_words import candidate_spans_ja, is_mostly_cjk
from sift.graphs.policies._plan_words import (
    STOPWORDS,
    QuestionPlan,
    content_terms,
    terms,
    word_pattern,
)
from sift.graphs.policies._planner_config import TextLimits, default_text_limits
from sift.text import has_cjk

__all__ = [
    "QuestionPlan",
    "candidate_spans",
    "content_terms",
    "norm_title",
    "plan_question",
    "terms",
]

# Question words that open a clause but never belong to an entity.
_WH = frozenset(
    """what which who whom whose when where why how is are was were do does did has have
    had can could will would in on at the a an of for from by and or if as to""".split(),  # noqa: SIM905
)

# Lower-case words that may sit inside a name ("Battle of Manila", "Lope Díaz II de Haro").
_CONNECTORS = frozenset(
    """of the de da di del della der den van von la le du des y and & 's""".split(),  # noqa: SIM905
)

_PAREN = re.compile(r"\s*\([^)]*\)\s*")


@lru_cache(maxsize=16)
def _quoted(low: int, high: int) -> re.Pattern[str]:
    return re.compile(rf"[\"“”]([^\"“”]{{{low},{high}}})[\"“”]")


@lru_cache(maxsize=16)
def _number(low: int, high: int) -> re.Pattern[str]:
    return re.compile(rf"\b\d{{{low},{high}}}\b")


# Relation nouns of compositional questions and the words that state them in a passage.
RELATION_CUES: dict[str, tuple[str, ...]] = {
    "father": ("father", "son", "daughter", "child", "sire"),
    "mother": ("mother", "son", "daughter", "child", "born to"),
    "paternal": ("father", "son", "daughter"),
    "maternal": ("mother", "son", "daughter"),
    "grandfather": ("father", "son", "daughter"),
    "grandmother": ("mother", "son", "daughter"),
    "husband": ("married", "husband", "wife", "spouse"),
    "wife": ("married", "wife", "husband", "spouse"),
    "spouse": ("married", "wife", "husband", "spouse"),
    "married": ("married", "wife", "husband", "spouse"),
    "director": ("directed", "director", "film"),
    "directed": ("directed", "director"),
    "producer": ("produced", "producer"),
    "composer": ("composed", "composer", "music"),
    "performer": ("performed", "singer", "band", "album", "recorded", "by"),
    "singer": ("singer", "sung", "performed", "recorded"),
    "author": ("written", "author", "novel", "wrote", "by"),
    "writer": ("written", "writer", "wrote", "by"),
    "founder": ("founded", "founder", "established"),
    "born": ("born", "birth"),
    "birthplace": ("born", "birth"),
    "birth": ("born", "birth"),
    "died": ("died", "death"),
    "death": ("died", "death"),
    "country": ("country", "in", "of"),
    "city": ("city", "in"),
    "state": ("state", "in"),
    "county": ("county", "in"),
    "located": ("located", "in", "situated"),
    "member": ("member", "party", "band"),
    "team": ("team", "played", "plays", "club"),
    "label": ("label", "records", "released"),
    "manufacturer": ("manufactured", "produced", "made", "company"),
    "owner": ("owned", "owner", "bought"),
    "headquarters": ("headquartered", "headquarters", "based"),
}


@lru_cache(maxsize=65536)
def norm_title(title: str) -> str:
    """A title as it would be written in running text: no parenthetical, lower case."""
    return " ".join(word_pattern.findall(_PAREN.sub(" ", title).lower()))


def _is_cap(word: str) -> bool:
    return word[:1].isupper() or word[:1].isdigit()


def candidate_spans(
    text: str, *, skip_first: bool = False, prose: bool = False
) -> list[tuple[str, int]]:
    """Name-like spans of capitalised words (with inner connectors) and their offsets.

    Sentence-initial question words are dropped; a span never starts or ends with a
    connector. Numbers join a span only when next to a capitalised word ("1974 Texas
    Tech", "Apollo 11"). In `prose` (a passage, not a question) a lone capitalised word
    opening a sentence is taken for an ordinary word ("Filming took place ...").
    """
    # --- CJK dispatch (issue 10): Japanese text has no capitals; names are noun runs ---
    if has_cjk(text) and is_mostly_cjk(text):
        return candidate_spans_ja(text)
    words = list(word_pattern.finditer(text))
    spans: list[tuple[str, int]] = []
    i = 0
    while i < len(words):
        w = words[i].group()
        at_sentence_start = i == 0 or text[words[i - 1].end() : words[i].start()].strip()[-1:] in {
            ".",
            "?",
            "!",
            ":",
            ";",
        }
        if not _is_cap(w) or (w.lower() in _WH and (at_sentence_start or skip_first)):
            i += 1
            continue
        j = i + 1
        end = i
        while j < len(words):
            gap = text[words[j - 1].end() : words[j].start()]
            initial = len(words[j - 1].group()) == 1 and gap.strip() == "."
            if gap.strip() not in {"", "-", "&", "'", ",", ":"} and not initial:
                break
            if "," in gap or re.search(r"['’]s$", words[j - 1].group()):
                # A comma or a possessive ends a name ("Nickelback's 2008 album").
                break
            if gap.strip() == "-" and not gap.isspace() and " " in gap:
                break
            nxt = words[j].group()
            if _is_cap(nxt):
                end = j
                j += 1
            elif (
                nxt.lower() in _CONNECTORS and j + 1 < len(words) and _is_cap(words[j + 1].group())
            ):
                j += 1
            else:
                break
        first, last = words[i], words[end]
        span = re.sub(r"['’]s$", "", text[first.start() : last.end()])
        if prose and at_sentence_start and end == i:
            i = end + 1
            continue
        if not (span.isdigit() and end == i):
            spans.append((span, first.start()))
        i = end + 1
    return spans


_COMPARISON_CUES = re.compile(
    r"\b(which|who|what)\b.*\b(first|earlier|later|last|older|younger|oldest|youngest|"
    r"longer|shorter|taller|higher|larger|bigger|smaller|more|less|fewer|further|closer|"
    r"same|both|either|also|common)\b|\bboth\b|\bsame\b|\bor\b",
    re.IGNORECASE,
)


def _split_alternatives(question: str) -> list[str]:
    """The options of "..., A or B?" / "A or B" / "between A and B" / "both A and B"."""
    body = question.strip().rstrip("?.! ")
    m = re.search(r"\bbetween (.+?) and (.+)$", body)
    if m:
        return [m.group(1), m.group(2)]
    if " or " in body:
        head, _, tail = body.rpartition(" or ")
        # The first option starts after the last comma/colon of the head.
        cut = max(head.rfind(","), head.rfind(":"))
        first = head[cut + 1 :] if cut >= 0 else head
        return [first, tail.split(",")[0]]
    return []


def _clean_option(option: str) -> str:
    words = option.strip().split()
    while words and words[0].lower() in _WH | {"film", "movie", "song", "album", "the"}:
        words = words[1:]
    return " ".join(words).strip(" ,;:\"'“”")


def plan_question(question: str, limits: TextLimits | None = None) -> QuestionPlan:
    """Splits a question into entities, comparison options, quoted strings and relations."""
    limits = limits or default_text_limits()
    # --- CJK dispatch (issue 10): Japanese questions are decomposed by _plan_ja ---
    if has_cjk(question):
        return plan_question_ja(question, limits)
    plan = QuestionPlan(question=question)
    quoted = _quoted(limits.quote_min_chars, limits.quote_max_chars)
    plan.quoted = [q.strip() for q in quoted.findall(question) if q.strip()]
    plan.numbers = _number(limits.number_min_digits, limits.number_max_digits).findall(question)
    comparison = bool(_COMPARISON_CUES.search(question))
    options = [_clean_option(o) for o in _split_alternatives(question)] if comparison else []
    options = [o for o in options if o and len(o) <= limits.option_max_chars and _has_cap(o)]
    plan.comparison = len(options) >= 2 or bool(
        re.search(r"\bboth\b|\bsame\b|\bin common\b", question, re.IGNORECASE)
    )
    plan.alternatives = options if len(options) >= 2 else []
    seen: set[str] = set()
    ordered: list[str] = []

    def add(span: str) -> None:
        key = span.lower()
        if span and key not in seen and key not in _WH:
            seen.add(key)
            ordered.append(span)

    for q in plan.quoted:
        add(q)
    for option in plan.alternatives:
        add(option)
    for span, _ in candidate_spans(question, skip_first=True):
        # "Gregory La Cava and Mike Judge" is two people, not one name.
        parts = re.split(r"\s+(?:and|&)\s+", span) if plan.comparison else [span]
        for part in parts:
            if part.lower() not in _WH and not any(part == o for o in ordered):
                add(part)
    plan.entities = ordered
    low = question.lower()
    plan.relations = [r for r in RELATION_CUES if re.search(rf"\b{r}", low)]
    entity_terms = {t for e in ordered for t in content_terms(e, limits)}
    plan.residual = [t for t in content_terms(question, limits) if t not in entity_terms]
    entity_words = {w.lower() for e in ordered for w in word_pattern.findall(e)}
    words = [
        w
        for w in word_pattern.findall(question)
        if w.lower() not in STOPWORDS
        and w.lower() not in entity_words
        and len(w) >= limits.residual_word_min_chars
    ]
    plan.residual_text = " ".join(dict.fromkeys(words))
    return plan


def _has_cap(text: str) -> bool:
    return any(_is_cap(w) for w in word_pattern.findall(text))
