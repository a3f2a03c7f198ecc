"""Splitting documents into chunks of about `max_tokens` estimated tokens.

Paragraphs (blank-line separated) are kept whole when they fit; a longer paragraph is
cut at sentence ends, and only a single sentence longer than the limit is cut between
words (or, for one enormous "word", between characters). Consecutive pieces are packed
greedily into chunks up to the limit.

A paragraph holding CJK text also ends sentences at 。！？． (with the closing brackets
and quotes after them: 」』）) and at every line break, since Japanese and Chinese put no
space after a sentence. A run of CJK text longer than the limit with no sentence end in
it is cut where the script changes (kanji to kana, Japanese to Latin) near the end of the
largest piece that fits, or else between characters. Paragraphs without CJK are cut
exactly as before.

Boundaries: a document whose layout is known (its pages, slides and headings, see
`sift.integrations.stores.locations`) is cut at every page and section start first
(`chunk_spans_within`), so that no chunk spans two pages or two headings and every
citation names the exact page and section; each part is then chunked as above.

Offsets: every chunk's `text` is exactly `doc.text[start:end]`. Each piece is trimmed of
surrounding whitespace, so a chunk starts at its first non-space character and ends after
its last one; whitespace between pieces packed together stays as it was in the document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from itertools import pairwise

from sift.text import charged_as_cjk, estimate_tokens, estimate_tokens_many, has_cjk, script_runs
from sift.types import Chunk, Document, make_chunk_id

__all__ = ["Span", "chunk_document", "chunk_spans", "chunk_spans_many", "chunk_spans_within"]

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
# A sentence ends at . ! ? (and closing quotes or brackets) followed by whitespace.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s+")
# In a paragraph with CJK text: also 。！？． with the brackets that close after them (no
# space follows in Japanese), and every line break.
_CJK_SENTENCE_END = re.compile(
    r"[。！？．][」』）】〕〉》\"'”’)\]]*\s*|[.!?][\"'”’)\]]*\s+|\s*\n\s*"
)
_WORD = re.compile(r"\S+")
# CJK punctuation and full-width forms: a paragraph of them follows the CJK rules too.
_CJK_FORMS = re.compile("[\u3000-\u303f\uff00-\uffef]")
Estimate = Callable[[str], int]
# (start, end, estimated tokens) of one chunk of a text.
Span = tuple[int, int, int]


def _is_cjk(text: str) -> bool:
    return has_cjk(text) or _CJK_FORMS.search(text) is not None


def chunk_document(doc: Document, max_tokens: int = 512) -> list[Chunk]:
    """The document's chunks in order, with ids `<doc_id>_<index>` from 0."""
    meta = dict(doc.metadata)
    text = doc.text
    return [
        Chunk(
            chunk_id=make_chunk_id(doc.id, index),
            doc_id=doc.id,
            index=index,
            title=doc.title,
            text=text[start:end],
            start=start,
            end=end,
            metadata=meta,
        )
        for index, (start, end, _) in enumerate(chunk_spans(text, max_tokens))
    ]


def chunk_spans(text: str, max_tokens: int = 512) -> list[Span]:
    """(start, end, estimated tokens) of each chunk of `text`, in order."""
    return chunk_spans_many([text], max_tokens)[0]


def chunk_spans_within(text: str, boundaries: Sequence[int], max_tokens: int = 512) -> list[Span]:
    """`chunk_spans` of each part of `text` between consecutive `boundaries` (offsets
    where a page or a section begins), in order: no span crosses a boundary. A part with
    nothing but whitespace has no chunk; a short part is a chunk of its own."""
    _check_max_tokens(max_tokens)
    cuts = sorted({b for b in boundaries if 0 < b < len(text)})
    if not cuts:
        return chunk_spans(text, max_tokens)
    edges = [0, *cuts, len(text)]
    parts = [text[a:b] for a, b in pairwise(edges)]
    out: list[Span] = []
    for offset, spans in zip(edges, chunk_spans_many(parts, max_tokens), strict=False):
        out += [(offset + s, offset + e, tokens) for s, e, tokens in spans]
    return out


def chunk_spans_many(texts: Sequence[str], max_tokens: int = 512) -> list[list[Span]]:
    """`chunk_spans` of each text. The pieces of each level are estimated together for
    the whole batch (`estimate_tokens_many`): the texts, trimmed, then the paragraphs of
    those that do not fit one chunk, then the sentences of the paragraphs that do not
    fit, then the chunks packed from them (numpy's setup a call cost more than the
    counting when each long text had its own calls)."""
    _check_max_tokens(max_tokens)
    out: list[list[Span]] = [[] for _ in texts]
    wholes: list[tuple[int, int, int]] = []
    for row, text in enumerate(texts):
        whole = _trim(text, 0, len(text))
        if whole is not None:
            wholes.append((row, *whole))
    # A text charged as CJK gets the same number with cjk_context or without (it holds
    # the CJK itself), and trimming white space changes neither that nor the count.
    estimates = estimate_tokens_many([texts[row][s:e] for row, s, e in wholes])
    long: list[tuple[int, int, int, int]] = []
    for (row, start, end), tokens in zip(wholes, estimates, strict=True):
        if tokens <= max_tokens:
            out[row] = [(start, end, tokens)]  # the common case: a passage that fits
        else:
            long.append((row, start, end, tokens))
    if long:
        _cut(texts, long, max_tokens, out)
    return out


def _cut(
    texts: Sequence[str], long: list[tuple[int, int, int, int]], limit: int, out: list[list[Span]]
) -> None:
    """Fills out[row] with the chunks of each text of `long` (row, start, end and
    estimate of the trimmed text), which does not fit one chunk."""
    # Every piece of a CJK document is charged as such (Latin words and numbers cost more
    # there), so that the pieces' estimates add up to their chunk's.
    cjk = {row: charged_as_cjk(texts[row]) for row, _, _, _ in long}
    paragraphs: list[tuple[int, int, int]] = []
    known: list[int | None] = []
    for row, start, end, tokens in long:
        parts = _split(texts[row], start, end, _PARAGRAPH_BREAK)
        paragraphs += [(row, *part) for part in parts]
        # One paragraph is the whole text, already estimated.
        known += [tokens] if parts == [(start, end)] else [None] * len(parts)
    counts = _estimates(texts, cjk, paragraphs, known)
    # The sentences of every paragraph that does not fit.
    sentences: list[tuple[int, int, int]] = []
    split: dict[int, tuple[int, int]] = {}
    for at, (row, start, end) in enumerate(paragraphs):
        if counts[at] > limit:
            ends = _CJK_SENTENCE_END if _is_cjk(texts[row][start:end]) else _SENTENCE_END
            parts = _split(texts[row], start, end, ends)
            split[at] = (len(sentences), len(sentences) + len(parts))
            sentences += [(row, *part) for part in parts]
    sentence_counts = _estimates(texts, cjk, sentences, [None] * len(sentences))
    # Each text's pieces of at most `limit` tokens, in document order.
    pieces: dict[int, list[tuple[int, int, int]]] = {row: [] for row in cjk}
    for at, (row, start, end) in enumerate(paragraphs):
        if at not in split:
            pieces[row].append((start, end, counts[at]))
            continue
        first, last = split[at]
        for (_, s_start, s_end), tokens in zip(
            sentences[first:last], sentence_counts[first:last], strict=True
        ):
            if tokens <= limit:
                pieces[row].append((s_start, s_end, tokens))
            else:
                pieces[row] += _hard_split(texts[row], s_start, s_end, limit, cjk[row])
    packed = [(row, s, e) for row, own in pieces.items() for s, e in _pack(texts[row], own, limit)]
    for (row, start, end), tokens in zip(
        packed, _estimates(texts, cjk, packed, [None] * len(packed)), strict=True
    ):
        # Estimates add up across the pieces; should one ever not, the chunk is cut again.
        if tokens <= limit:
            out[row].append((start, end, tokens))
        else:
            out[row] += _windows(texts[row], start, end, limit, _estimate(cjk[row]))


def _estimates(
    texts: Sequence[str],
    cjk: dict[int, bool],
    spans: list[tuple[int, int, int]],
    known: list[int | None],
) -> list[int]:
    """The estimate of each span (row, start, end) of `texts`, `known` where given, the
    others counted together, under the CJK rules where the row's text is charged so."""
    out = [0 if tokens is None else tokens for tokens in known]
    for context in (False, True):
        todo = [
            at for at, tokens in enumerate(known) if tokens is None and cjk[spans[at][0]] is context
        ]
        counts = estimate_tokens_many(
            [texts[spans[at][0]][spans[at][1] : spans[at][2]] for at in todo], cjk_context=context
        )
        for at, tokens in zip(todo, counts, strict=True):
            out[at] = tokens
    return out


def _estimate(cjk: bool) -> Estimate:
    return partial(estimate_tokens, cjk_context=True) if cjk else estimate_tokens


def _check_max_tokens(max_tokens: object) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 8:
        raise ValueError(f"max_tokens must be an integer of at least 8, got {max_tokens!r}")


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _split(text: str, start: int, end: int, sep: re.Pattern[str]) -> list[tuple[int, int]]:
    """Trimmed, non-empty spans of text[start:end] between matches of `sep` (a sentence
    separator keeps its punctuation on the left side)."""
    out: list[tuple[int, int]] = []
    cursor = start
    for match in sep.finditer(text, start, end):
        # the separator's non-space part (a sentence's . ! ? and closing quotes) stays left
        cut = match.start() + len(match.group(0).rstrip())
        span = _trim(text, cursor, cut)
        if span:
            out.append(span)
        cursor = match.end()
    span = _trim(text, cursor, end)
    if span:
        out.append(span)
    return out


def _hard_split(
    text: str, start: int, end: int, limit: int, cjk: bool
) -> list[tuple[int, int, int]]:
    """An over-long sentence cut between words; an over-long word between characters
    (a window of `limit` characters never holds more than `limit` estimated tokens unless
    it holds CJK, whose characters may cost more: those windows are sized by estimate).
    `cjk`: the text is charged as CJK."""
    est = _estimate(cjk)
    spans = [match.span() for match in _WORD.finditer(text, start, end)]
    counts = estimate_tokens_many([text[s:e] for s, e in spans], cjk_context=cjk)
    words: list[tuple[int, int, int]] = []
    for (w_start, w_end), tokens in zip(spans, counts, strict=True):
        if tokens <= limit:
            words.append((w_start, w_end, tokens))
            continue
        windows = [
            (c_start, c_end, est(text[c_start:c_end]))
            for c_start in range(w_start, w_end, limit)
            for c_end in [min(c_start + limit, w_end)]
        ]
        if any(tokens > limit for _, _, tokens in windows):
            windows = _windows(text, w_start, w_end, limit, est)
        words += windows
    packed = _pack(text, words, limit)
    counts = estimate_tokens_many([text[s:e] for s, e in packed], cjk_context=cjk)
    return [(s, e, tokens) for (s, e), tokens in zip(packed, counts, strict=True)]


def _windows(
    text: str, start: int, end: int, limit: int, est: Estimate
) -> list[tuple[int, int, int]]:
    """text[start:end] cut into the largest windows that fit, each ending where the
    script changes in its second half if it can, else between characters; whitespace at
    a window's edges is left out.

    An estimate never falls as a text grows by a character, so the longest fitting
    window is found by bisection.
    """
    out: list[tuple[int, int, int]] = []
    while True:
        span = _trim(text, start, end)
        if span is None:
            return out
        start = span[0]
        lo, hi = start + 1, end
        while lo < hi:  # the largest stop with est(text[start:stop]) <= limit
            mid = (lo + hi + 1) // 2
            if est(text[start:mid]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        stop = lo
        if stop < end:
            cuts = [r.start for r in script_runs(text[start:stop])[1:]]
            half = (stop - start) // 2
            good = [c for c in cuts if c >= half]
            if good:
                stop = start + good[-1]
        window = _trim(text, start, stop)
        if window is not None:
            out.append((window[0], window[1], est(text[window[0] : window[1]])))
        start = stop


def _pack(text: str, pieces: list[tuple[int, int, int]], limit: int) -> list[tuple[int, int]]:
    """Greedy packing of consecutive pieces into spans of at most `limit` tokens.

    Token estimates add up across whitespace (no estimated token spans a space), plus one
    token per run of newlines between pieces, so the sum bounds the span's estimate.
    """
    spans: list[tuple[int, int]] = []
    cur_start = cur_end = -1
    cur_tokens = 0
    for start, end, tokens in pieces:
        if cur_start < 0:
            cur_start, cur_end, cur_tokens = start, end, tokens
            continue
        gap = text[cur_end:start]
        joined = cur_tokens + tokens + gap.count("\n") + (1 if gap == "" else 0)
        if joined <= limit:
            cur_end, cur_tokens = end, joined
        else:
            spans.append((cur_start, cur_end))
            cur_start, cur_end, cur_tokens = start, end, tokens
    if cur_start >= 0:
        spans.append((cur_start, cur_end))
    return spans
