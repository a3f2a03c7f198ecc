"""Japanese (and other CJK) text for the heuristic planner: the same plan, other cues.

Japanese writes no spaces and has no capital letters, so names are found another way:

- a *noun run* is a stretch of kanji, katakana and Latin letters or digits (with the
  connectors names use: ・ ＝ - & and a space between Latin words); hiragana, where the
  particles and verb endings are (は が を に で と の へ から まで より も や ...), and
  punctuation end it. 「日本で梅雨がないのは北海道とどこか」 gives 日本, 梅雨, 北海道;
  「iPodを製作している企業」 gives iPod, 製作, 企業;
- quoted names come first (『』「」 and "..."), then the options of a comparison
  (「AとB、どちらが…」, 「AとBのどちらですか」, 「AかBか」), then runs holding katakana or
  Latin letters (foreign names, products), then kanji compounds, longest first;
- question words (何, 誰, いつ...), dates and generic nouns (理由, 場合, 現在...) are not
  names; years go to `numbers`.

In a passage (bridge names for the next hop) the same noun runs are the candidate spans.
Terms for coverage are the words `_plan_text` finds, with runs of CJK characters cut into
bigrams (a sentence would otherwise be one term).
"""

from __future__ import annotations

import re
import unicodedata

from sift.graphs.policies._plan_ja_words import (
    _HAS_KATAKANA_OR_LATIN,
    _KANJI,
    _quoted,
    candidate_spans_ja,
    cjk_words,
    is_mostly_cjk,
    names,
    noun_runs,
)
from sift.graphs.policies._plan_words import QuestionPlan, content_terms
from sift.graphs.policies._planner_config import TextLimits

__all__ = [
    "candidate_spans_ja",
    "cjk_words",
    "is_mostly_cjk",
    "noun_runs",
    "plan_question_ja",
]

_NUMBER = re.compile(r"(?<![0-9０-９])[0-9０-９]{3,4}(?![0-9０-９])")

# Comparison: the options before どちら/どっち/いずれ, or 「AかBか」 at the end.
_CHOICE = re.compile(r"どちら|どっち|いずれ")
_EITHER = re.compile(r"^(?P<a>.+)か(?P<b>[^か]+)か[。？?！!\s]*$")
_SAME = re.compile(r"同じ|共通|両方|ともに|共に")

# Relation words of compositional questions, as the English keys of RELATION_CUES.
_RELATIONS = {
    "父": "father",
    "母": "mother",
    "夫": "husband",
    "妻": "wife",
    "配偶者": "spouse",
    "監督": "director",
    "プロデューサー": "producer",
    "作曲": "composer",
    "歌手": "singer",
    "著者": "author",
    "作者": "author",
    "創業者": "founder",
    "創設者": "founder",
    "設立者": "founder",
    "生まれ": "born",
    "出身": "birthplace",
    "死去": "died",
    "所属": "member",
    "本社": "headquarters",
    "製造": "manufacturer",
    "所有": "owner",
}


# 「AのB」 states the relation B of A: 著者の父 (the author's father), 映画の監督; a relation
# word glued to a further kanji is another word (母型 is not 母).
_RELATION = re.compile(
    "の(" + "|".join(sorted(_RELATIONS, key=len, reverse=True)) + f")(?![{_KANJI}])"
)


def _options(question: str) -> list[str]:
    """The two options of a comparison, or none."""
    choice = _CHOICE.search(question)
    if choice:
        head = question[: choice.start()]
        cut = head.rfind("と")
        while cut > 0:
            left, right = names(head[:cut]), names(head[cut + 1 :])
            if left and right:
                return [left[-1][0], right[-1][0]]
            cut = head.rfind("と", 0, cut)
        return []
    either = _EITHER.match(question.strip())
    if either:
        left, right = names(either.group("a")), names(either.group("b"))
        if left and right:
            return [left[-1][0], right[0][0]]
    return []


def plan_question_ja(question: str, limits: TextLimits) -> QuestionPlan:
    """`plan_question` for a question in Japanese (or another CJK language)."""
    plan = QuestionPlan(question=question)
    plan.quoted = [q for q, _ in _quoted(question)]
    plan.numbers = [unicodedata.normalize("NFKC", n) for n in _NUMBER.findall(question)]
    plan.alternatives = _options(question)
    plan.comparison = bool(plan.alternatives) or bool(
        _CHOICE.search(question) or _SAME.search(question)
    )
    runs = [run for run, _ in names(question)]
    # Foreign names and products (katakana, Latin) before kanji compounds; longer
    # compounds before shorter ones; otherwise in question order.
    ranked = sorted(
        enumerate(runs),
        key=lambda item: (not _HAS_KATAKANA_OR_LATIN.search(item[1]), -len(item[1]), item[0]),
    )
    seen: set[str] = set()
    ordered: list[str] = []
    for name in [*plan.quoted, *plan.alternatives, *(n for _, n in ranked)]:
        key = unicodedata.normalize("NFKC", name).lower()
        if key not in seen:
            seen.add(key)
            ordered.append(name)
    plan.entities = ordered
    plan.relations = list(
        dict.fromkeys(_RELATIONS[m.group(1)] for m in _RELATION.finditer(question) if m.group(1))
    )
    entity_terms = {t for e in ordered for t in content_terms(e, limits)}
    plan.residual = [t for t in content_terms(question, limits) if t not in entity_terms]
    entity_keys = {e for e in ordered}
    rest = [run for run, _ in noun_runs(question) if run not in entity_keys and len(run) > 1]
    plan.residual_text = " ".join(dict.fromkeys(rest))
    return plan
