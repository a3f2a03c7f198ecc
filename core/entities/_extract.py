"""Entity mentions of a text, found without a model (`sift.entities`).

What a passage names, as normalised keys that two passages (or a question and a passage)
share when they name the same thing:

- its title ("Jack Russell (priest)" is the key ``jack russell``; "Arthurdale, West
  Virginia" also ``arthurdale``, the name running text uses; "George Nicholls Jr." also
  ``george nicholls``, since "George Nicholls, Jr." reads as that span and a comma);
- capitalised spans with the connectors names use ("Battle of Manila", "Lope Díaz II de
  Haro"); a lone capitalised word that opens a sentence is taken for a plain word, and
  function words alone ("The", "In") never are names;
- quoted strings ("...", “...”) and Japanese 『』「」 names;
- dates and numbers: full dates ("12 March 1950", "March 12, 1950") as ``1950-03-12``,
  years and other numbers of `number_min_digits` to `number_max_digits` digits;
- in text of the scripts written without spaces (cut into runs by `sift.text`):
  katakana runs (with ・ and ＝ inside: グスタフ・マーラー), kanji compounds, and runs of
  kanji and katakana together (東京スカイツリー), at least `cjk_min_chars` long, minus
  generic nouns and dates.

Keys are NFKC-normalised, lower-cased and without accents (Japanese voicing marks
stay), a leading article is dropped ("The Beatles" is ``beatles``) so a title and its
mention in running text meet.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from sift.text import has_cjk, name_without_suffix

__all__ = ["EntityLimits", "entity_key", "mention_keys", "question_keys"]


@dataclass(frozen=True)
class EntityLimits:
    """How text is read for entities. The defaults are here, once; `EntityGraphConfig`
    takes them as its own and reads the environment (`EntityGraphConfig.limits()`)."""

    # Capitalised spans at least this long, of at most this many words.
    min_span_chars: int = 3
    max_span_words: int = 8
    quote_min_chars: int = 2
    quote_max_chars: int = 80
    # Numbers of this many digits are entities (4 and 4: years).
    number_min_digits: int = 4
    number_max_digits: int = 4
    # Japanese names: runs of kanji and katakana of this many characters.
    cjk_min_chars: int = 2
    cjk_max_chars: int = 16
    # A passage contributes at most this many entities (the first ones).
    max_mentions: int = 200


_WORD = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*", re.UNICODE)
_PAREN = re.compile(r"\s*[(（][^)）]*[)）]\s*")
_SPACES = re.compile(r"\s+")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
_QUOTED = re.compile(r"[\"“”]([^\"“”\n]+)[\"“”]|『([^』\n]+)』|「([^」\n]+)」")
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november "  # noqa: SIM905
        "december".split()
    )
}
_MONTH = "(" + "|".join(m.capitalize() for m in _MONTHS) + ")"
_MONTH_AT = re.compile(_MONTH)
# Around a month name: "12 " before it (the day not glued to a word), ", 1950" or
# " 12, 1950" after it.
_DAY_BEFORE = re.compile(r"(?<!\w)(\d{1,2}) \Z")
_YEAR_AFTER = re.compile(r",? (\d{3,4})\b")
_DAY_YEAR_AFTER = re.compile(r" (\d{1,2}),? (\d{3,4})\b")
_DATE_JA = re.compile(r"(\d{3,4})年(\d{1,2})月(\d{1,2})日")

# Words that are capitalised at a sentence start or in a question and name nothing alone.
_FUNCTION = frozenset(
    """a about after all also an and any are as at be because been before being both but by
    can could did do does during each either for from had has have he her here his how i if
    in into is it its many may more most much my neither no not of on once one only or other
    our out over she since so some such than that the their them then there these they this
    those though through to under until up was we were what when where whether which while
    who whom whose why will with would yet you your""".split()  # noqa: SIM905
)
# Lower-case words that may sit inside a name ("Battle of Manila", "Ludwig van Beethoven").
_CONNECTORS = frozenset(
    """of the de da di del della der den van von la le du des y and & 's""".split()  # noqa: SIM905
)
_SENTENCE_END = frozenset(".?!:;")
# A span of one word that is one of these names nothing.
_NOT_ALONE = _FUNCTION | frozenset(_MONTHS)

# Japanese: generic nouns, and what reads as a date or a count.
_GENERIC_JA = frozenset(
    """名前 名称 理由 場合 方法 時期 目的 意味 種類 特徴 現在 近年 当時 以降 以前 以上 以下
    原則 一般 最初 最後 一方 他方 全体 部分 自体 対象 内容 関係 結果 影響 程度 時代 世紀
    年代 地域 日本 一部 多く 可能 必要 存在 使用 利用 発表 開始 中心 後半 前半 主""".split()  # noqa: SIM905
)
_DATE_LIKE_JA = re.compile(r"[0-9〇一二三四五六七八九十百千万億年月日時分秒世紀代頃期度回歳人]+")


_ACCENTS = re.compile("[\u0300-\u036f]+")


@lru_cache(maxsize=65536)
def entity_key(name: str) -> str:
    """The key of a name: NFKC, lower case, no accents on Latin, Greek or Cyrillic
    letters ("Tekezé" is ``tekeze``, as a question types it; Japanese voicing marks
    stay), no parenthetical, single spaces, no leading article. Empty when nothing is
    left."""
    text = unicodedata.normalize("NFKC", name)
    if not text.isascii():
        decomposed = unicodedata.normalize("NFD", text)
        stripped = _ACCENTS.sub("", decomposed)
        if stripped != decomposed:
            text = unicodedata.normalize("NFC", stripped)
    # A subtitle's colon is not written in running text or a question ("Batman: Under
    # the Red Hood" is asked about as "Batman Under the Red Hood").
    text = _PAREN.sub(" ", text).replace(": ", " ").lower()
    text = _SPACES.sub(" ", text).strip(" \t,.;:!?'\"“”‘’")
    return _ARTICLE.sub("", text)


def _upper_class() -> str:
    """The upper-case letters of the Latin, Greek and Cyrillic blocks, as a class body."""
    blocks = ((0x41, 0x24F), (0x370, 0x52F), (0x1E00, 0x1FFF))
    return "".join(
        re.escape(chr(c))
        for first, last in blocks
        for c in range(first, last + 1)
        if chr(c).isupper()
    )


# A capitalised word (letters, digits and inner ' . - after a capital: "O'Brien", "J.R.R.",
# "Jean-Luc", an initial "J."), then more of them joined by spaces, "-" or "&", with the
# connectors names use between two of them. One regular expression: the scan runs in C.
_CAP_WORD = rf"[{_upper_class()}](?:(?:[^\W_]|['’.\-](?=[^\W_]))+|\.?)"
# The first word checks what stands before its capital only once it has one: a pattern
# that opens with its capitals lets the regex engine skip to the next capital, where a
# lookbehind first made it try every position (half of extracting a passage's entities).
_FIRST_WORD = _CAP_WORD.replace("]", "](?<![^\\W_].)", 1)
# Not "and": "Tom and Jerry" is a name, but far more often two ("Paris and London").
_CONNECTOR = "(?:of|the|de|da|di|del|della|der|den|van|von|la|le|du|des|y)"
_SPAN = re.compile(
    rf"{_FIRST_WORD}(?:(?:[ \t]*[-&][ \t]*|[ \t]+)(?:{_CONNECTOR}[ \t]+)*{_CAP_WORD})*"
)
_SPAN_WORDS = re.compile(r"[^\s&-]+")


def _capitalised_spans(
    text: str, limits: EntityLimits, prose: bool, known: frozenset[str] = frozenset()
) -> list[str]:
    """Capitalised spans, in order. In `prose`, a lone capitalised word opening a
    sentence counts only when the text writes it capitalised elsewhere too, or it is one
    of the `known` keys (the passage's title): "Signmark was born ..." on Signmark's page,
    but not "Filming took place ..."."""
    found: list[tuple[str, bool]] = []
    later: set[str] = set()
    max_words = limits.max_span_words
    for m in _SPAN.finditer(text):
        at = m.start()
        # Whether the span opens a sentence: what stands before it, spaces aside. Most
        # spans follow a letter and one space, decided by two characters.
        if at > 1 and text[at - 1] == " " and text[at - 2].isalnum():
            at_start = False
        else:
            before = text[max(0, at - 3) : at].rstrip()
            at_start = not before or before[-1] in _SENTENCE_END
        surface = m.group().rstrip(".")  # a sentence's full stop is not part of a name
        if " " not in surface and "\t" not in surface and "-" not in surface and "&" not in surface:
            # One word (half the spans): nothing to skip or cut.
            if prose and not at_start:
                later.add(surface)
            if surface.endswith(("'s", "’s")):
                surface = surface[:-2]
            found.append((surface, at_start))
            continue
        # Split on whitespace as _SPAN_WORDS does, without a regex unless "-" or "&" joins.
        if "-" in surface or "&" in surface:
            words = _SPAN_WORDS.findall(surface)
        else:
            words = surface.split()
        # A span never starts with a function word ("In Paris" is Paris).
        skip = 0
        while skip < len(words) - 1 and words[skip].lower() in _FUNCTION:
            skip += 1
        if skip:
            cut = surface.find(words[skip], len(" ".join(words[:skip])))
            surface, at_start = surface[cut:], False
            words = words[skip:]
        if len(words) > max_words:
            surface = surface[: surface.find(words[max_words - 1]) + len(words[max_words - 1])]
            words = words[:max_words]
        if surface.endswith(("'s", "’s")):
            surface = surface[:-2]
        if prose:
            later.update(words[1:] if at_start else words)
        found.append((surface, at_start and len(words) == 1))
    spans: list[str] = []
    for surface, lone_opening in found:
        if " " not in surface and surface.lower() in _NOT_ALONE:
            continue
        if prose and lone_opening and surface not in later and entity_key(surface) not in known:
            continue
        spans.append(surface)
    return spans


def _dates(text: str) -> list[str]:
    """The dates a text writes in full, as keys: Japanese ones, then day-first, then
    month-first ones, each in order."""
    found: list[str] = []
    if "年" in text:
        for m in _DATE_JA.finditer(text):
            year, month, day = m.group(1), int(m.group(2)), int(m.group(3))
            found.append(f"{year}-{month:02d}-{day:02d}")
    # "12 March 1950" and "March 12, 1950" read from each month name outward: the regex
    # engine finds the names fast (they open with capitals), where the two whole-date
    # patterns tried every position (a seventh of extracting an English passage).
    day_first: list[str] = []
    month_first: list[str] = []
    for m in _MONTH_AT.finditer(text):
        at, end = m.span()
        number = _MONTHS[m.group().lower()]
        before = _DAY_BEFORE.search(text, max(0, at - 4), at)
        after = _YEAR_AFTER.match(text, end) if before else None
        if before and after:
            day_first.append(f"{after.group(1)}-{number:02d}-{int(before.group(1)):02d}")
        after = _DAY_YEAR_AFTER.match(text, end)
        if after and not (at and _is_word(text[at - 1])):
            month_first.append(f"{after.group(2)}-{number:02d}-{int(after.group(1)):02d}")
    return found + day_first + month_first


def _is_word(char: str) -> bool:
    """Whether regular expressions' \\w matches `char`."""
    return char.isalnum() or char == "_"


@lru_cache(maxsize=8)
def _number_pattern(low: int, high: int) -> re.Pattern[str]:
    # A whole run of `low` to `high` digits, not glued to Latin letters, digits or
    # separators ("1,200" and "3.5" are not two numbers; "B-52" is an identifier, not the
    # number 52); CJK may touch it (2012年). One regular expression: the scan runs in C,
    # where a Python check of every run of digits cost a tenth of the extraction. It opens
    # with a digit and looks behind that digit, so the engine skips to the next digit
    # instead of trying the lookbehind at every position.
    return re.compile(
        rf"\d(?<![A-Za-z_.,\-\d]\d)\d{{{low - 1},{high - 1}}}(?!\d)(?![A-Za-z_])(?![.,]\d)"
    )


def _numbers(text: str, low: int, high: int) -> list[str]:
    """Numbers of `low` to `high` digits (`_number_pattern`)."""
    return _number_pattern(low, high).findall(text)


_KANJI = "\u3005\u3006\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
_KANJI_KANA = _KANJI + _KATAKANA
_ONE_SCRIPT = re.compile(rf"[{_KANJI}]+|[{_KATAKANA}]+(?:[・＝=][{_KATAKANA}]+)*")
_CJK_NAME = re.compile(rf"[{_KANJI_KANA}]+(?:[・＝=][{_KANJI_KANA}]+)*")


def _cjk_names(text: str, limits: EntityLimits) -> list[str]:
    """Runs of kanji and katakana (joined by ・ and ＝) that are names, in order (of a
    text `has_cjk` said holds some)."""
    out: list[str] = []
    for m in _CJK_NAME.finditer(text):
        # A run mixing katakana and kanji (フィンランド出身) also names its parts of one
        # script (フィンランド), which another text writes alone.
        parts = [m.group()]
        pieces = _ONE_SCRIPT.findall(m.group())
        if len(pieces) > 1:
            parts += pieces
        for name in parts:
            if (
                limits.cjk_min_chars <= len(name) <= limits.cjk_max_chars
                and name not in _GENERIC_JA
                and _DATE_LIKE_JA.fullmatch(name) is None
            ):
                out.append(name)
    return out


def _found(
    text: str, limits: EntityLimits, *, prose: bool, title: str = ""
) -> tuple[list[str], int]:
    """The keys a text names, each once (first place), its title's first, and how many
    are its title's. Keys only: a frozen dataclass per mention (kind, offset, surface)
    cost a fifth of the extraction, and nothing read them."""
    titles: list[str] = []
    if title:
        titles.append(entity_key(title))
        head = title.split(",")[0]
        if head != title:
            titles.append(entity_key(head))
        # "George Nicholls Jr." is also "George Nicholls": the text's "George Nicholls,
        # Jr." is read as that span and a comma.
        bare = _PAREN.sub(" ", title).strip()
        short = name_without_suffix(bare)
        if short != bare:
            titles.append(entity_key(short))
    found = [key for key in titles if key]
    # Most passages quote nothing: four substring tests cost less than the pattern's scan.
    if '"' in text or "“" in text or "『" in text or "「" in text or "”" in text:
        for m in _QUOTED.finditer(text):
            index = m.lastindex or 0  # the one group of the three that matched
            inner = m.group(index).strip()
            if limits.quote_min_chars <= len(inner) <= limits.quote_max_chars:
                found.append(entity_key(inner))
    for span in _capitalised_spans(text, limits, prose, frozenset(found)):
        if len(span) >= limits.min_span_chars:
            found.append(entity_key(span))
    found += _dates(text)
    cjk = has_cjk(text)
    plain = unicodedata.normalize("NFKC", text) if cjk else text
    found += _numbers(plain, limits.number_min_digits, limits.number_max_digits)
    if cjk:
        found += [entity_key(name) for name in _cjk_names(text, limits)]
    # Each key once, in order, up to the limit (dict keys keep their order).
    keys = list(dict.fromkeys(key for key in found if key))[: limits.max_mentions]
    # The title's keys come first: as many as are distinct, within the limit.
    return keys, min(len({key for key in titles if key}), len(keys))


def _default_limits() -> EntityLimits:
    # The defaults, not the environment's values (the caller passes those).
    return EntityLimits()


def mention_keys(
    title: str, text: str, limits: EntityLimits | None = None
) -> tuple[list[str], int]:
    """The entity keys a passage names, each once (first place), its title's first, and
    how many of them are its title's."""
    return _found(text, limits or _default_limits(), prose=True, title=title)


def question_keys(question: str, limits: EntityLimits | None = None) -> list[str]:
    """The entity keys a question names: as in a passage, except that a lone capitalised
    word opening it counts too ("Signmark is from ...") unless it is a function word."""
    return _found(question, limits or _default_limits(), prose=False)[0]
