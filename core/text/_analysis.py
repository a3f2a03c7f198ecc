"""Text analysis: text into the terms a lexical index stores and a query looks up.

One analyzer serves documents and queries alike, so a query term always meets the same
term in the index. It needs no dictionary and no extra dependency:

- The text is normalised with NFKC (full-width Ｌａｔｉｎ and ０１２, half-width ｶﾀｶﾅ and
  compatibility forms become their ordinary characters) and lower-cased.
- It is cut into runs of one script (`script_runs`): Han, Hiragana, Katakana, Hangul, the
  Southeast Asian scripts written without spaces, and words of the alphabetic scripts
  (Latin, Cyrillic, Greek, ...; digits join the word they touch).
- Runs of the scripts written without spaces between words (Chinese, Japanese, Korean,
  Thai, ...) become overlapping character bigrams, and every Han character is a term of
  its own as well (a kanji is often a word); a run of a single character is kept as that
  character. Bigrams never cross a change of script: 「東京都に」 gives 東京, 京都, 東, 京,
  都 and に, not 都に (bigrams across kanji and kana measured worse on JSQuAD:
  benchmarks/results/analysis.md).
- Words of an alphabetic script are stemmed when a Snowball stemmer is configured for
  their script (English for Latin by default, as tantivy's `en_stem` did); words longer
  than `max_word_chars` (hashes, base64, URLs run together) are dropped.

The analyzer never produces query syntax: a term is a plain string of letters and digits
(no spaces, no operators), so a store builds its engine query from the terms as term
objects, never by handing user text to a query parser.

A store records `Analyzer.spec` beside its index; a different spec means the index was
built with another analysis and must be rebuilt (`Analyzer.from_spec` restores it).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any, ClassVar, Literal, NamedTuple

import Stemmer
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sift.errors import CorpusError
from sift.text._scripts import (
    HAN,
    HANGUL,
    HIRAGANA,
    KATAKANA,
    MARKS,
    NGRAM,
    SEA,
    Script,
    cjk_pattern,
    has_cjk,
    name_without_suffix,
    script_of,
)

__all__ = [
    "WORD_WEIGHT_IN_CJK",
    "Analyzer",
    "AnalyzerSettings",
    "CjkMode",
    "Script",
    "ScriptRun",
    "default_analyzer",
    "find_mention",
    "has_cjk",
    "has_searchable_word",
    "name_without_suffix",
    "overlap_terms",
    "script_of",
    "script_runs",
]

# How runs of the scripts written without spaces become terms (benchmarks/results/
# analysis.md measures each): "bigram" overlapping pairs of characters, "bigram+han" the
# same plus every Han character alone (the default: a kanji is a morpheme of its own),
# "unigram+bigram" every character alone as well. Bigrams never cross a change of script;
# a run of one character is kept as that character.
CjkMode = Literal["bigram", "bigram+han", "unigram+bigram"]

# A query's alphabetic words and numbers weigh this much in a query holding CJK.
WORD_WEIGHT_IN_CJK = 2.0


@cache
def _token_pattern() -> re.Pattern[str]:
    """After NFKC and lower-casing: runs of one script written without spaces, then words
    (letters, digits and combining marks of every other script; underscore separates).
    Compiled on first use: its large character classes take a while to compile."""
    return re.compile(
        rf"(?P<han>[{HAN}]+)|(?P<hiragana>[{HIRAGANA}]+)|(?P<katakana>[{KATAKANA}]+)"
        rf"|(?P<hangul>[{HANGUL}]+)|(?P<sea>[{SEA}]+)"
        rf"|(?P<word>(?:[^\W_{NGRAM}]|[{MARKS}])+)"
    )


_WORD = re.compile(r"\w+", re.UNICODE)
_ASCII_WORD = re.compile(r"[a-z0-9]+")


class ScriptRun(NamedTuple):
    """A maximal run of characters of one script: `text[start:end]`."""

    script: Script
    start: int
    end: int
    text: str


def script_runs(text: str) -> list[ScriptRun]:
    """`text` cut into maximal runs of one script, with offsets into `text` itself (no
    normalisation, so `run.text == text[run.start:run.end]`). A combining mark belongs to
    the run it follows."""
    runs: list[ScriptRun] = []
    start = 0
    current: Script | None = None
    for i, char in enumerate(text):
        script = script_of(char)
        if script == "mark" and current is not None:
            continue
        if script != current:
            if current is not None:
                runs.append(ScriptRun(current, start, i, text[start:i]))
            current, start = script, i
    if current is not None:
        runs.append(ScriptRun(current, start, len(text), text[start:]))
    return runs


def find_mention(name: str, text: str) -> int | None:
    """Where `name` is written in `text` as a word of its own (first place), or None.

    An edge of `name` in an alphabetic script or a digit must not touch a letter, digit
    or underscore ("kemp" is not in "kempton", "5" not in "15"); an edge in a script
    written without spaces needs no boundary (東京 is in 東京都に, 小笠原諸島 in
    …北海道と小笠原諸島である). Case is the caller's: compare lower-cased texts.
    """
    if not name:
        return None
    check_left, check_right = not has_cjk(name[0]), not has_cjk(name[-1])
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        if (not check_left or start == 0 or not _glued(text[start - 1])) and (
            not check_right or end == len(text) or not _glued(text[end])
        ):
            return start
        start = text.find(name, start + 1)
    return None


def _glued(char: str) -> bool:
    """A neighbour that makes an alphabetic name part of a longer word: a letter, digit or
    underscore, except a CJK character (Japanese writes names with no space around)."""
    return (char.isalnum() or char == "_") and not has_cjk(char)


def _ngrams(run: str, unigrams: bool) -> list[str]:
    if len(run) == 1:
        return [run]
    grams = [run[i : i + 2] for i in range(len(run) - 1)]
    return grams + list(run) if unigrams else grams


class Analyzer(BaseModel):
    """Text into terms, the same way for documents and queries.

    `terms` gives every term in order with repeats (a document's bag for BM25, a query's
    weighted terms); `query_terms` the distinct ones. `spec` names the analysis exactly:
    a store records it and rebuilds its index when the spec it finds differs.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: ClassVar[str] = "sift-multilingual"
    # Bump when the same configuration would give different terms.
    version: ClassVar[int] = 1

    cjk: CjkMode = "bigram+han"
    # Snowball stemmer language per alphabetic script (PyStemmer's algorithm names):
    # {"latin": "english"} by default; e.g. {"latin": "french", "cyrillic": "russian"}.
    stemmers: dict[str, str] = Field(default_factory=lambda: {"latin": "english"})
    # Longer words are noise (hashes, base64, URLs run together): tantivy dropped them too.
    max_word_chars: int = Field(default=40, ge=1)

    @field_validator("stemmers")
    @classmethod
    def _known_stemmers(cls, value: dict[str, str]) -> dict[str, str]:
        available = set(Stemmer.algorithms())
        for script, language in value.items():
            if script not in _STEMMABLE:
                raise ValueError(
                    f"stemmers: {script!r} is not an alphabetic script; use one of "
                    f"{sorted(_STEMMABLE)}"
                )
            if language not in available:
                raise ValueError(
                    f"stemmers: no Snowball stemmer {language!r} for {script}; available: "
                    f"{', '.join(sorted(available))}"
                )
        return dict(sorted(value.items()))

    @property
    def spec(self) -> str:
        """The exact analysis as a stable string, for a store to record and compare."""
        body = {"name": self.name, "version": self.version, **self.model_dump()}
        return json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"))

    @classmethod
    def from_spec(cls, spec: str) -> Analyzer:
        """The analyzer a recorded `spec` describes; a clear error when this version of
        sift cannot reproduce it (the store's index must then be rebuilt)."""
        try:
            body: dict[str, Any] = json.loads(spec)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not an analyzer spec: {spec!r} ({exc})") from None
        if not isinstance(body, dict):
            raise ValueError(f"not an analyzer spec: {spec!r}")
        name, version = body.pop("name", None), body.pop("version", None)
        if name != cls.name or version != cls.version:
            raise ValueError(
                f"the index was built by analyzer {name!r} version {version!r}; this sift "
                f"has {cls.name!r} version {cls.version}: rebuild the index"
            )
        return cls.model_validate(body)

    def terms(self, text: str, *, stem: bool = True) -> list[str]:
        """Every term of `text`, in order, with repeats (`stem=False`: before stemming,
        one per word as written, lower-cased)."""
        if text.isascii():
            # The common case, without NFKC or script checks: the same terms, faster.
            ascii_words = [
                w for w in _ASCII_WORD.findall(text.lower()) if len(w) <= self.max_word_chars
            ]
            latin = self.stemmers.get("latin") if stem else None
            return _stemmer(latin).stemWords(ascii_words) if latin else ascii_words
        out: list[str] = []
        every = self.cjk == "unigram+bigram"
        han = every or self.cjk == "bigram+han"
        words: list[tuple[int, str]] = []
        for match in _token_pattern().finditer(_normalise(text)):
            kind = match.lastgroup
            piece = match.group()
            if kind == "word":
                if len(piece) <= self.max_word_chars:
                    words.append((len(out), piece))
                    out.append(piece)
            else:
                out += _ngrams(piece, every or (han and kind == "han"))
        if words and self.stemmers and stem:
            self._stem(out, words)
        return out

    def query_terms(self, text: str) -> list[str]:
        """The distinct terms of `text`, in order of first appearance."""
        return list(dict.fromkeys(self.terms(text)))

    def weighted_query_terms(self, text: str, limit: int | None = None) -> list[tuple[str, float]]:
        """The distinct terms of a query with their weights (a store boosts each term's
        query by it): how often the term occurs, and in a query holding CJK a word of
        an alphabetic script or a number counts `WORD_WEIGHT_IN_CJK` times, since a
        CJK word gives several terms (its bigrams and kanji) where such a word gives one
        («1955年頃の日本共産党», «NHKの討論番組»: benchmarks/results/analysis.md).
        A query without CJK weighs a term by the number of distinct words giving it, as
        the query parser the stores used before did (and the English dev-set figures
        were measured with): "the" twice counts once, "state" and "States" twice.
        Counting every repeat lost 0.015 all-gold@10 of single-shot BM25 on MuSiQue.

        With `limit`, only the `limit` heaviest terms are kept (earlier ones first among
        equal weights), in query order: a store bounds the query it builds."""
        cjk = has_cjk(text)
        # English: each distinct word once, stemmed; CJK: every term, repeats included.
        found = (
            self.terms(text)
            if cjk
            else self._stems(list(dict.fromkeys(self.terms(text, stem=False))))
        )
        counts: dict[str, float] = {}
        for term in found:
            counts[term] = counts.get(term, 0.0) + 1.0
        weighted = [
            (term, weight * (WORD_WEIGHT_IN_CJK if cjk and not has_cjk(term) else 1.0))
            for term, weight in counts.items()
        ]
        if limit is not None and len(weighted) > limit:
            keep = sorted(range(len(weighted)), key=lambda i: -weighted[i][1])[:limit]
            weighted = [weighted[i] for i in sorted(keep)]
        return weighted

    def _stems(self, words: list[str]) -> list[str]:
        """`words` (unstemmed terms) stemmed as `terms` stems them."""
        stemmed = list(words)
        if self.stemmers:
            self._stem(stemmed, list(enumerate(words)))
        return stemmed

    def _stem(self, out: list[str], words: list[tuple[int, str]]) -> None:
        by_language: dict[str, list[tuple[int, str]]] = {}
        for position, word in words:
            language = self.stemmers.get(_word_script(word))
            if language is not None:
                by_language.setdefault(language, []).append((position, word))
        for language, group in by_language.items():
            stems = _stemmer(language).stemWords([w for _, w in group])
            for (position, _), stem in zip(group, stems, strict=True):
                out[position] = stem


_STEMMABLE = frozenset(
    {"latin", "cyrillic", "greek", "armenian", "arabic", "indic", "hebrew", "georgian"}
)


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def has_searchable_word(text: str) -> bool:
    """Whether `text` holds a searchable word: a run the analyzer makes a term of (a
    letter or digit of any script, a kana or kanji), after NFKC. The one definition every
    face refuses a question by: punctuation, symbols and space alone (`?!?...`, `。、！？`)
    give no term, so a search of them could only return passages unrelated to anything
    asked. A word too long to be indexed (`max_word_chars`) still counts: grep and the
    dense search can find it."""
    return _token_pattern().search(_normalise(text)) is not None


def _word_script(word: str) -> Script:
    if word.isascii():
        return "latin"
    for char in word:
        script = script_of(char)
        if script not in ("digit", "mark"):
            return script
    return "digit"


@cache
def _stemmer(language: str) -> Stemmer.Stemmer:
    # No cache (PyStemmer's default keeps 10,000 words): a corpus's words overflow it,
    # and its upkeep made a new word cost 2.1 us against 0.5 without it (41k HotpotQA
    # words), while a repeated word costs no more uncached (a passage: 70 us against
    # 75-78 with the cache).
    return Stemmer.Stemmer(language, 0)


class AnalyzerSettings(BaseSettings):
    """The analyzer of new stores, from the environment (`SIFT_ANALYZER_<FIELD>`), so a
    command-line user can configure it: `SIFT_ANALYZER_STEMMERS="latin=french"` (script
    = Snowball language, comma-separated; "none" for no stemming) and
    `SIFT_ANALYZER_CJK=bigram`. A store keeps the analyzer it was made with."""

    model_config = SettingsConfigDict(env_prefix="SIFT_ANALYZER_", extra="ignore")

    stemmers: str | None = None
    cjk: CjkMode | None = None

    def analyzer(self) -> Analyzer:
        options: dict[str, Any] = {}
        if self.cjk is not None:
            options["cjk"] = self.cjk
        if self.stemmers is not None:
            options["stemmers"] = _parse_stemmers(self.stemmers)
        return Analyzer(**options)


def _parse_stemmers(value: str) -> dict[str, str]:
    if value.strip().lower() in ("", "none"):
        return {}
    out: dict[str, str] = {}
    for item in value.split(","):
        script, sep, language = item.partition("=")
        if not sep or not script.strip() or not language.strip():
            raise ValueError(
                f"stemmers: {item.strip()!r} is not SCRIPT=LANGUAGE "
                "(e.g. latin=french,cyrillic=russian, or none)"
            )
        out[script.strip().lower()] = language.strip().lower()
    return out


@lru_cache(maxsize=1)
def default_analyzer() -> Analyzer:
    """The analyzer a store uses unless configured otherwise: the defaults of `Analyzer`,
    or what `SIFT_ANALYZER_*` says (`AnalyzerSettings`)."""
    try:
        return AnalyzerSettings().analyzer()
    except ValueError as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        reason = reason.removeprefix("Value error, ")
        raise CorpusError(f"the analyzer of new stores (SIFT_ANALYZER_*): {reason}") from None


def overlap_terms(text: str) -> list[str]:
    """Lower-cased word tokens for term-overlap scoring (rerankers, planners).

    Words are what `\\w+` finds, lower-cased and not stemmed, exactly as before for text
    without CJK; a word holding characters of a script written without spaces is cut into
    script runs, and those runs into character bigrams, so a Japanese sentence is many
    terms rather than one.
    """
    low = text.lower()
    if cjk_pattern().search(low) is None:
        return _WORD.findall(low)
    out: list[str] = []
    for word in _WORD.findall(low):
        if cjk_pattern().search(word) is None:
            out.append(word)
            continue
        out += _split_word(unicodedata.normalize("NFKC", word))
    return out


def _split_word(word: str) -> Iterator[str]:
    for match in _token_pattern().finditer(word):
        piece = match.group()
        if match.lastgroup == "word":
            yield piece
        else:
            yield from _ngrams(piece, False)
