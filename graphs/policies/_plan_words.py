"""Words for the heuristic planner, in every language: terms, content terms and the
plan a question is decomposed into (`QuestionPlan`). `_plan_text` finds the English
cues, `_plan_ja` the Japanese ones; both build on these (and neither on the other's
module: the words were what made them import each other)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import Stemmer

from sift.graphs.policies._plan_ja_words import cjk_words
from sift.graphs.policies._planner_config import TextLimits, default_text_limits
from sift.text import has_cjk

__all__ = ["STOPWORDS", "QuestionPlan", "content_terms", "terms", "word_pattern"]

_STEMMER = Stemmer.Stemmer("english")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during
    each few for from further had has have having he her here hers herself him himself
    his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom whose why
    will with would you your yours known called named one many much""".split(),  # noqa: SIM905
)

_WORD = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*", re.UNICODE)
# The word pattern, for the modules that find spans with it.
word_pattern = _WORD


def terms(text: str) -> list[str]:
    """Lower-case stemmed word tokens, stopwords kept (for exact phrase work)."""
    return _STEMMER.stemWords(_words(text))


def content_terms(text: str, limits: TextLimits | None = None) -> list[str]:
    """Stemmed content words, stopwords dropped, in order, without repeats."""
    shortest = (limits or default_text_limits()).content_word_min_chars
    # A single letter says nothing; a single kanji (from _plan_ja) does.
    words = [
        w
        for w in _words(text, content=True)
        if (len(w) >= shortest or has_cjk(w)) and w not in STOPWORDS
    ]
    return list(dict.fromkeys(_STEMMER.stemWords(words)))


def _words(text: str, *, content: bool = False) -> list[str]:
    words = _WORD.findall(text.lower())
    # --- CJK dispatch (issue 10): no spaces, so CJK runs become bigrams ---
    if has_cjk(text):
        return cjk_words(words, content=content)
    return words


@dataclass
class QuestionPlan:
    """The decomposition of one question into the pieces the planner searches for."""

    question: str
    entities: list[str] = field(default_factory=list)
    alternatives: list[str] = field(default_factory=list)
    quoted: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    residual: list[str] = field(default_factory=list)
    # The question's own words outside its entities, as text to append to a hop query.
    residual_text: str = ""
    comparison: bool = False

    @property
    def shape(self) -> str:
        if self.comparison:
            return "comparison"
        if self.relations:
            return "compositional"
        return "bridge"
