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

from sift.analysis import has_cjk
from sift.graphs.policies._plan_text import QuestionPlan, content_terms
from sift.graphs.policies._planner_config import TextLimits

__all__ = [
    "candidate_spans_ja",
    "cjk_words",
    "is_mostly_cjk",
    "noun_runs",
    "plan_question_ja",
]

_KANJI = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005\u3006\u30f6"
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_LATIN = "A-Za-z0-9\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"
_NOUN = f"[{_KANJI}{_KATAKANA}{_LATIN}]"
# Connectors inside a name: ・ (グスタフ・マーラー), ＝, -, &, ', ., and one space between
# Latin letters or digits ("Steve Jobs").
_NOUN_RUN = re.compile(
    rf"{_NOUN}+(?:(?:[・＝=\-－&'’.]|(?<=[A-Za-z0-9]) (?=[A-Za-z0-9])){_NOUN}+)*"
)
_HAS_KATAKANA_OR_LATIN = re.compile(f"[{_KATAKANA}A-Za-z\uff21-\uff3a\uff41-\uff5a]")
_QUOTED = re.compile(r"『([^』]{1,60})』|「([^」]{1,60})」|[\"“]([^\"”]{1,60})[\"”]")
_DATE_LIKE = re.compile(r"[0-9０-９年月日時分秒世紀代頃期度回歳人％%.,〜~]+")
_NUMBER = re.compile(r"(?<![0-9０-９])[0-9０-９]{3,4}(?![0-9０-９])")
_CJK_RUN = re.compile(rf"[{_KANJI}\u3041-\u309f{_KATAKANA}\uac00-\ud7af\u1100-\u11ff]+")
# One script at a time: bigrams never cross from kanji to kana (as in sift.analysis).
_SCRIPT_RUN = re.compile(
    rf"(?P<kanji>[{_KANJI}]+)|(?P<kana>[\u3041-\u309f]+)|[{_KATAKANA}]+"
    r"|[\uac00-\ud7af\u1100-\u11ff]+"
)

# Question words and nouns too general to search for alone.
_QUESTION_HEADS = ("何", "誰", "幾", "如何")
_GENERIC = frozenset(
    """名前 名称 理由 場合 方法 時期 目的 意味 種類 特徴 現在 近年 当時 以降 以前 以上 以下
    原則 一般 最初 最後 一方 他方 全体 部分 自体 対象 内容 関係 結果 影響 程度 数 人 時
    年 月 日 点 方 物 事 者 際 中 後 前 上 下 間 的""".split()  # noqa: SIM905
)

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


def is_mostly_cjk(text: str) -> bool:
    """Text whose letters are mostly CJK: a Japanese passage, not an English one that
    quotes a name in Chinese (those keep the English span rules unchanged)."""
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    if not cjk:
        return False
    latin = sum(1 for c in text if c.isascii() and c.isalpha())
    # A CJK character carries about as much as three or four Latin letters.
    return cjk * 4 >= latin


def cjk_words(words: list[str], *, content: bool = False) -> list[str]:
    """Words as the planner's word pattern finds them, with every word that holds CJK
    characters cut: each run of one script into overlapping bigrams (a run of one
    character kept), the other parts left as words. With `content` (coverage terms),
    hiragana runs are left out, as they hold the particles and verb endings, Japanese's
    function words, and each kanji is a term too, as in sift.analysis (a kanji is often a
    word: 兄弟 is found in 兄と弟; measured in benchmarks/results/planner_japanese.md)."""
    out: list[str] = []
    for word in words:
        if not has_cjk(word):
            out.append(word)
            continue
        cursor = 0
        for match in _SCRIPT_RUN.finditer(word):
            if match.start() > cursor:
                out.append(word[cursor : match.start()])
            cursor = match.end()
            if content and match.group("kana"):
                continue
            run = match.group()
            out += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
            if content and len(run) > 1 and match.group("kanji"):
                out += run
        if cursor < len(word):
            out.append(word[cursor:])
    return out


def noun_runs(text: str) -> list[tuple[str, int]]:
    """Runs of kanji, katakana and Latin letters (see the module doc), with offsets."""
    return [(m.group(), m.start()) for m in _NOUN_RUN.finditer(text)]


def _is_name(run: str) -> bool:
    bare = run.strip(" ・-－.'’")
    if len(bare) < 2 or bare in _GENERIC:
        return False
    if bare.startswith(_QUESTION_HEADS):
        return False
    return _DATE_LIKE.fullmatch(bare) is None


def _names(text: str) -> list[tuple[str, int]]:
    return [(run, pos) for run, pos in noun_runs(text) if _is_name(run)]


def _quoted(text: str) -> list[tuple[str, int]]:
    out = []
    for match in _QUOTED.finditer(text):
        index = next(i for i in (1, 2, 3) if match.group(i) is not None)
        inner = match.group(index).strip()
        if inner:
            out.append((inner, match.start(index)))
    return out


def candidate_spans_ja(text: str) -> list[tuple[str, int]]:
    """Name-like spans of a Japanese passage and their offsets, in text order: quoted
    strings and noun runs that are names (see `noun_runs`), each once per position."""
    spans = {pos: span for span, pos in _names(text)}
    for span, pos in _quoted(text):
        spans[pos] = span
    return [(spans[pos], pos) for pos in sorted(spans)]


def _options(question: str) -> list[str]:
    """The two options of a comparison, or none."""
    choice = _CHOICE.search(question)
    if choice:
        head = question[: choice.start()]
        cut = head.rfind("と")
        while cut > 0:
            left, right = _names(head[:cut]), _names(head[cut + 1 :])
            if left and right:
                return [left[-1][0], right[-1][0]]
            cut = head.rfind("と", 0, cut)
        return []
    either = _EITHER.match(question.strip())
    if either:
        left, right = _names(either.group("a")), _names(either.group("b"))
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
    names = [run for run, _ in _names(question)]
    # Foreign names and products (katakana, Latin) before kanji compounds; longer
    # compounds before shorter ones; otherwise in question order.
    ranked = sorted(
        enumerate(names),
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
