"""Which language a text is in: a guess from its script and, for Latin script, from its
function words. No model and no dependency: it tags every document `sift index` reads
(metadata `lang`, for `--filter lang=ja`) and the samples `sift stats` counts, so both
say the same.

- Any kana: `ja`. Otherwise the script with most letters: hangul `ko`, Han `zh`,
  Cyrillic `ru`; none of these and no Latin letter: `other`.
- Latin letters: the language whose common short words (articles, prepositions,
  pronouns) occur most among the text's words, of `en`, `de`, `fr`, `es`, `it`, `pt`,
  `nl`, when they are at least a tenth of its words and no other language has as many;
  else `latin` (a list of names, code, another language: the script alone cannot tell).

Only the first 2,000 characters are read: a document's opening says its language.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["SAMPLE_CHARS", "guess_language"]

# How much of a text the guess reads.
SAMPLE_CHARS = 2_000

# Frequent words that are rare in the other languages listed (a word shared by two, such
# as `de` or `la`, counts for both and decides nothing alone). One-letter words English
# also writes (`a`) are left out.
_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the of and to in is that it was for on are with as at by this be from or "
        "which an were not have has had but his her they their its been there when who "
        "will would can also these about into than then them what all more only other",
        "de": "der die das und ist nicht ein eine einer zu den mit von sich des auf für im "
        "dem auch es wird werden sind als wie bei oder aus nach",
        "fr": "le la les et de des est un une du que qui dans pour pas sur au par ce avec "
        "sont aux cette ont il elle ne se plus",
        "es": "el la los las y de que en un una es por con para del se no al como su más "
        "pero sus lo fue este esta",
        "it": "il la di che e un una per non del della sono con gli le si da nel dei delle "
        "alla è anche come più questo",
        "pt": "o os as de que e do da em um uma para com não dos das no na se é por mais "
        "ao como foi",
        "nl": "de het een en van is dat op te in niet zijn met voor die er aan ook wordt "
        "als bij of door naar",
    }.items()
}
_LATIN_WORD = re.compile(r"[a-zà-öø-ÿ]+")
# A guess from function words needs them to be at least this share of the words.
_MIN_SHARE = 0.1


def _latin_language(sample: str) -> str:
    words = _LATIN_WORD.findall(sample.lower())
    if not words:
        return "latin"
    counts: Counter[str] = Counter()
    for word in words:
        for lang, common in _FUNCTION_WORDS.items():
            if word in common:
                counts[lang] += 1
    ranked = counts.most_common(2)
    if not ranked:
        return "latin"
    best, hits = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    if hits >= max(1.0, _MIN_SHARE * len(words)) and hits > runner_up:
        return best
    return "latin"


def guess_language(text: str) -> str:
    """A language tag for `text` (see the module's docstring): `ja`, `ko`, `zh`, `ru`,
    `en`, `de`, `fr`, `es`, `it`, `pt`, `nl`, `latin` or `other`."""
    sample = text[:SAMPLE_CHARS]
    kana = hangul = han = cyrillic = latin = 0
    for c in sample:
        code = ord(c)
        if 0x3040 <= code <= 0x30FF or 0xFF66 <= code <= 0xFF9F:
            kana += 1
        elif 0xAC00 <= code <= 0xD7AF:
            hangul += 1
        elif 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
            han += 1
        elif 0x0400 <= code <= 0x04FF:
            cyrillic += 1
        elif c.isalpha() and code < 0x0250:
            latin += 1
    if kana:
        return "ja"
    counts = {"ko": hangul, "zh": han, "ru": cyrillic, "latin": latin}
    best = max(counts, key=lambda k: counts[k])
    if not counts[best]:
        return "other"
    return _latin_language(sample) if best == "latin" else best
