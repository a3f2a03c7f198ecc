"""How the embedded store analyses text with a `sift.text.Analyzer` in tantivy.

The terms the BM25 index holds are exactly `Analyzer.terms(text)`; what differs is who
computes them. Ingest must keep pace with the embedder, so text that tantivy's own
analyzer (simple tokenizer, long-word filter, lower case, Snowball stemmer: native code)
turns into the same terms is handed to tantivy as text; everything else (any CJK, marks,
letters of scripts other than Latin, rare characters) is analysed in Python; of its
terms, those tantivy's analyzer gives back unchanged join the text, the rest are handed
over pre-tokenized. The choice is made per text:

- ASCII text: native. tantivy's simple tokenizer splits at every non-alphanumeric
  character, as the analyzer's `[a-z0-9]+` does, and its Snowball stemmers give the
  same stems as PyStemmer's (checked on the 80k words of the English dev corpora, for
  every language both have: tests/integrations/stores/test_sqlite_analysis.py).
- Other text, once normalised as the analyzer does (NFKC, lower case): native when
  every non-ASCII character in it is *safe*: a character of Latin script or a
  non-letter that both sides treat alike (word character or separator, no case change
  left). The safe set is measured once per process by asking tantivy itself (one
  tokenizer run over the Basic Multilingual Plane, ~0.1 s), so a tantivy with another
  Unicode version cannot make the two disagree.
- A word is dropped when longer than `max_word_chars` characters; tantivy counts bytes,
  so a text holding a non-ASCII word whose bytes pass the limit goes to Python too.

An index written when a C part handed tantivy every text as its terms joined by spaces
holds these same terms: it is read and extended as it is.

Queries are analysed in Python (they are short) and become tantivy term queries, one per
distinct term and field, boosted by the analyzer's query weights: no query parser ever
sees user text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache

import tantivy

from sift.integrations.stores._checks import MAX_QUERY_TERMS
from sift.text import Analyzer, has_cjk, script_of

__all__ = ["TOKENIZER", "TantivyAnalysis"]

# The name the schema's text fields are analysed under; the analyzer behind it is
# registered on every open (tantivy does not persist custom tokenizers).
TOKENIZER = "sift"
_PYTHON_WORD = re.compile(r"[^\W_]")
_NON_ASCII_LETTER = re.compile(r"[^\W\x00-\x7f]")
_WORD_REST = re.compile(r"[^\W_]*")
_SPACE = re.compile(r"\s")
# Characters from here on (CJK, Hangul, Yi, private use, compatibility forms...) are
# all analysed in Python; probing only the ones below keeps the probe cheap.
_PROBE_LIMIT = 0x3000
# Terms whose round trip through tantivy's analyzer is remembered, at most: about 20 MB
# (JSQuAD's 2,304 passages have 28.6k); past it a text's terms not remembered are
# asked again, in one call a text.
_MAX_STABLE = 200_000


class TantivyAnalysis:
    """An `Analyzer` realised for one tantivy index: what each text field is given, and
    the query for a question."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        latin = analyzer.stemmers.get("latin")
        self._native = _native_analyzer(analyzer.max_word_chars, latin)
        # None (a Latin stemmer tantivy lacks): every text is analysed in Python.
        self._whitespace = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()
        # The Python terms tantivy's analyzer gives back as themselves, and those it
        # does not (see _parts); past _MAX_STABLE, new terms are asked again each text.
        self._stable: set[str] = set()
        self._unstable: set[str] = set()

    def register(self, index: tantivy.Index) -> None:
        """Registers the text fields' analyzer on an opened index."""
        index.register_tokenizer(TOKENIZER, self._native or self._whitespace)

    def fill(self, docs: Sequence[tantivy.Document], field: str, values: Sequence[str]) -> None:
        """Adds values[i] to `field` of docs[i], as `add` does one at a time; a value
        repeated (a document's title on each of its chunks) is analysed once."""
        done: dict[str, tuple[str, str | None]] = {}
        for doc, value in zip(docs, values, strict=True):
            parts = done.get(value)
            if parts is None:
                parts = done[value] = self._parts(value)
            self._put(doc, field, parts)

    def add(self, doc: tantivy.Document, field: str, text: str) -> None:
        """Adds `text` to `field` of `doc`: the part tantivy analyses as the analyzer
        does as text, the rest as the analyzer's terms (pre-tokenized). A field's values
        add up (term counts and length), and the index keeps no positions, so the split
        changes nothing BM25 sees."""
        self._put(doc, field, self._parts(text))

    def _parts(self, text: str) -> tuple[str, str | None]:
        """(text for tantivy to analyse, the other terms joined by spaces or None).

        The terms computed in Python that tantivy's analyzer gives back unchanged (one
        token, the term itself: a CJK bigram, a katakana word) join the text for
        tantivy, which tokenizes it on its own threads; only the rest is handed over
        pre-tokenized, a PreTokenizedString built token by token through Python objects
        (for Japanese that cost more than the rest of the store's ingest analysis)."""
        native, pieces = self._split(text)
        if not pieces:
            return native, None
        terms = self.analyzer.terms(pieces)
        if self._native is None:
            return native, " ".join(terms)
        # Set operations, not a step per term: a Japanese passage has hundreds of terms,
        # and nearly every one has been asked about before.
        distinct = set(terms)
        unstable = self._unstable & distinct
        new = list(distinct.difference(self._stable, self._unstable))
        # One call for the text's new terms, then one a term only when some came back
        # other than themselves. Equal lists mean every term came back as itself: no
        # term holds white space (two cannot merge), and a term tantivy drops or splits
        # cannot reappear whole as one of its tokens.
        if new and self._native.analyze(" ".join(new)) != new:
            unstable.update(t for t in new if self._native.analyze(t) != [t])
        if len(self._stable) + len(self._unstable) < _MAX_STABLE:
            self._unstable.update(unstable)
            self._stable.update(t for t in new if t not in unstable)
        if unstable:
            kept = [t for t in terms if t not in unstable]
            rest = [t for t in terms if t in unstable]
        else:
            kept, rest = terms, []
        if kept:
            native = " ".join([native, *kept] if native else kept)
        return native, " ".join(rest) if rest else None

    def _put(self, doc: tantivy.Document, field: str, parts: tuple[str, str | None]) -> None:
        native, terms = parts
        if native:
            doc.add_text(field, native)
        if terms is not None:
            doc.add_pre_tokenized_text(field, self._whitespace.pre_tokenize(terms))

    def terms(self, text: str) -> list[str]:
        """The terms the index holds for `text`, computed as `fill` indexes them (for
        tests and diagnostics: as a multiset they equal `Analyzer.terms(text)`)."""
        native, terms = self._parts(text)
        out = list(self._native.analyze(native)) if native and self._native else []
        return out + (terms.split() if terms else [])

    def _split(self, text: str) -> tuple[str, str]:
        """(text for tantivy's analyzer, text for the analyzer in Python). Terms never
        cross whitespace, so the whitespace-separated pieces holding an unsafe character
        can go to Python while the rest stays native."""
        if self._native is None:
            return "", text
        if text.isascii():
            return text, ""
        norm = unicodedata.normalize("NFKC", text).lower()
        unsafe = _unsafe_pattern().search(norm)
        if unsafe is None:
            return (norm, "") if self._lengths_agree(norm) else ("", norm)
        spans: list[tuple[int, int]] = []
        found: re.Match[str] | None = unsafe
        while found is not None:
            at = found.start()
            start = at
            while start > 0 and not norm[start - 1].isspace():
                start -= 1
            space = _SPACE.search(norm, at)
            end = space.start() if space else len(norm)
            spans.append((start, end))
            # The next piece holding an unsafe character: one search a piece, not one
            # step per character (a Japanese text is mostly unsafe characters).
            found = _unsafe_pattern().search(norm, max(end, at + 1))
        native = " ".join(norm[a:b] for a, b in _gaps(spans, len(norm)))
        if not self._lengths_agree(native):
            return "", norm
        return native, " ".join(norm[a:b] for a, b in spans)

    def _lengths_agree(self, norm: str) -> bool:
        """tantivy drops a word of more than max_word_chars *bytes*, the analyzer one of
        more characters: False when `norm` holds a non-ASCII word between the two. Only
        the words around non-ASCII letters are looked at (a regex over every word costs
        more than the rest of the analysis)."""
        limit = self.analyzer.max_word_chars
        extra = len(norm.encode()) - len(norm)
        # A word of c characters passes the byte limit only with more than limit - c
        # extra bytes, and no word is longer than the longest whitespace piece.
        if extra == 0 or max(map(len, norm.split()), default=0) <= limit - extra:
            return True
        done = 0
        for match in _NON_ASCII_LETTER.finditer(norm):
            at = match.start()
            if at < done:
                continue
            start = at
            while start > 0 and norm[start - 1].isalnum():
                start -= 1
            done = _WORD_REST.match(norm, at).end()  # type: ignore[union-attr]
            word = norm[start:done]
            if len(word) <= limit < len(word.encode()):
                return False
        return True

    def query(
        self, schema: tantivy.Schema, text: str, fields: Sequence[str]
    ) -> tantivy.Query | None:
        """Term queries for the distinct terms of `text` over `fields`, each boosted by
        its weight (the heaviest `MAX_QUERY_TERMS` kept); None when `text` has no term."""
        weighted = self.analyzer.weighted_query_terms(text, limit=MAX_QUERY_TERMS)
        clauses = []
        for term, weight in weighted:
            for name in fields:
                query = tantivy.Query.term_query(schema, name, term, index_option="freq")
                if weight != 1.0:
                    query = tantivy.Query.boost_query(query, weight)
                clauses.append((tantivy.Occur.Should, query))
        return tantivy.Query.boolean_query(clauses) if clauses else None


def _native_analyzer(max_word_chars: int, latin_stemmer: str | None) -> tantivy.TextAnalyzer | None:
    """tantivy's analyzer giving `Analyzer.terms` on safe text, None when tantivy has no
    Snowball stemmer of that name."""
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        # A token is kept while shorter than the limit: max_word_chars itself stays.
        .filter(tantivy.Filter.remove_long(max_word_chars + 1))
        .filter(tantivy.Filter.lowercase())
    )
    try:
        if latin_stemmer is not None:
            builder = builder.filter(tantivy.Filter.stemmer(latin_stemmer))
        native = builder.build()
        native.analyze("probe")  # "Unsupported language: ..." may surface only here
    except ValueError:
        return None
    return native


@cache
def _unsafe_pattern() -> re.Pattern[str]:
    """Any character that tantivy's simple tokenizer and lower-caser would treat unlike
    `sift.text` (or that the analyzer gives special treatment: CJK, marks, letters of
    scripts without a stemmer here), found by probing tantivy once."""
    probe = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(
        tantivy.Filter.lowercase()
    )
    chars = [chr(i) for i in range(0x80, _PROBE_LIMIT)]
    tokens = probe.build().pre_tokenize(" ".join(chars)).tokens
    # Character i of `chars` sits at offset 2 * i of the probe text.
    native_word = {t.char_offset_from // 2: t.text for t in tokens}
    unsafe: list[int] = []
    for i, char in enumerate(chars):
        python_word = _PYTHON_WORD.match(char) is not None
        token = native_word.get(i)
        if (
            python_word != (token is not None)
            or (token is not None and token != char)
            or (python_word and not _latin_or_digit(char))
            or unicodedata.category(char).startswith("M")
            or has_cjk(char)
        ):
            unsafe.append(ord(char))
    return re.compile(f"[{_ranges(unsafe)}{re.escape(chr(_PROBE_LIMIT))}-\\U0010ffff]")


def _latin_or_digit(char: str) -> bool:
    """A word character the native path may see: one the analyzer counts as Latin (its
    words get the Latin stemmer, as tantivy's do) or as a digit."""
    return script_of(char) in ("latin", "digit")


def _gaps(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The stretches of [0, length) between sorted, disjoint `spans`."""
    out: list[tuple[int, int]] = []
    cursor = 0
    for start, end in spans:
        if start > cursor:
            out.append((cursor, start))
        cursor = end
    if cursor < length:
        out.append((cursor, length))
    return out


def _ranges(codes: list[int]) -> str:
    parts: list[str] = []
    start = prev = codes[0] if codes else 0
    for code in [*codes[1:], -1]:
        if code == prev + 1:
            prev = code
            continue
        first, last = re.escape(chr(start)), re.escape(chr(prev))
        parts.append(first if start == prev else f"{first}-{last}")
        start = prev = code
    return "".join(parts) if codes else ""
