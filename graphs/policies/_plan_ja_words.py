"""Japanese (and other CJK) words for the heuristic planner: the scripts, noun runs,
the names and quoted strings among them, and CJK runs cut into bigrams (see `_plan_ja`
for how the planner reads a Japanese question with them)."""

from __future__ import annotations

import re

from sift.text import has_cjk

__all__ = ["candidate_spans_ja", "cjk_words", "is_mostly_cjk", "names", "noun_runs"]

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
_CJK_RUN = re.compile(rf"[{_KANJI}\u3041-\u309f{_KATAKANA}\uac00-\ud7af\u1100-\u11ff]+")
# One script at a time: bigrams never cross from kanji to kana (as in sift.text).
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
    function words, and each kanji is a term too, as in sift.text (a kanji is often a
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


def names(text: str) -> list[tuple[str, int]]:
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
    spans = {pos: span for span, pos in names(text)}
    for span, pos in _quoted(text):
        spans[pos] = span
    return [(spans[pos], pos) for pos in sorted(spans)]
