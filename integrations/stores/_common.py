"""Helpers every store shares: content hashes, input validation, safe regexes, the
literal fragments that pre-filter grep, document preparation, and hybrid fusion.

The embedded SQLite store and the Weaviate store both use these, so that the two agree
on what counts as a changed document, which patterns are refused, and how fused scores
are computed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import re._parser as sre_parse
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import re2

from sift.errors import DocumentError, InvalidPatternError, InvalidQueryError
from sift.integrations.chunking import chunk_spans
from sift.types import Chunk, Document, DocumentFailure

if TYPE_CHECKING:
    from sift.protocols import Embedder

__all__ = [
    "ALPHA_BY_EMBEDDER",
    "DEFAULT_ALPHA",
    "DEFAULT_FUSION",
    "DEFAULT_MAX_PATTERN_CHARS",
    "DEFAULT_MAX_QUERY_CHARS",
    "FUSIONS",
    "MAX_K",
    "PreparedDocument",
    "check_k",
    "compile_pattern",
    "content_hash",
    "default_alpha",
    "fuse",
    "fusion_names",
    "literal_fragments",
    "prepare_documents",
    "relative_score_fusion",
    "rrf_fusion",
    "validate_query",
]

DEFAULT_MAX_QUERY_CHARS = 2_000
DEFAULT_MAX_PATTERN_CHARS = 500
MAX_K = 1_000
# Fusion defaults are configuration, not constants of nature: they are tuned on the
# benchmark dev sets (benchmarks/) and every store takes them as constructor options.
DEFAULT_FUSION = "relative_score"
DEFAULT_ALPHA = 0.5
# Hybrid weight of the dense scores per embedder, tuned on the shared dev sets
# (benchmarks/results/dense_quality.md): with the static model only a light dense weight is
# never worse than BM25 alone on any set; with MiniLM 0.4 is the best weight that stays above
# BM25 on both sets it was measured on (HotpotQA, MuSiQue).
# Embedders not measured there (Ollama models, hash) keep DEFAULT_ALPHA, Weaviate's default.
ALPHA_BY_EMBEDDER = {"static": 0.1, "minilm": 0.4}


def default_alpha(embedder_name: str) -> float:
    """The hybrid alpha a store uses for `embedder_name` when none is given."""
    return ALPHA_BY_EMBEDDER.get(embedder_name, DEFAULT_ALPHA)


# RE2 programs are bounded in memory; a pattern whose automaton would exceed this is
# refused at compile time rather than slowing every grep down.
_RE2_MAX_MEM = 32 << 20


# --------------------------------------------------------------------------- documents


def content_hash(doc: Document) -> str:
    """A stable digest of everything stored for a document (id, title, text, metadata).

    Two documents with the same hash store identically, so an upsert may skip them.
    """
    payload = json.dumps(
        [doc.id, doc.title, doc.text, doc.metadata],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def coerce_document(item: Document | dict[str, Any], position: int) -> Document:
    """A validated Document, or DocumentError naming the document and what is wrong."""
    if isinstance(item, Document):
        doc = item
    else:
        try:
            doc = Document.model_validate(item)
        except Exception as exc:
            ident = item.get("id") if isinstance(item, dict) else None
            where = f"document {ident!r}" if ident else f"document #{position}"
            raise DocumentError(f"{where} is invalid: {_first_line(exc)}") from None
    if not doc.text.strip():
        raise DocumentError(f"document {doc.id!r} has no text; give it a non-empty `text`")
    return doc


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return " ".join(line.strip() for line in text[:3]) if text else type(exc).__name__


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    """A document ready to store: its hash, its chunks and one vector per chunk."""

    doc: Document
    hash: str
    chunks: list[Chunk]
    vectors: np.ndarray
    # Estimated tokens of each chunk (sift.tokens), computed once while chunking.
    tokens: tuple[int, ...] = ()


def prepare_documents(
    docs: Sequence[Document],
    embedder: Embedder,
    *,
    chunk_tokens: int = 512,
) -> tuple[list[PreparedDocument], list[DocumentFailure]]:
    """Chunks and embeds documents in one embedder call; a document whose chunking or
    embedding fails is reported and the others are still prepared."""
    chunked: list[tuple[Document, list[Chunk], tuple[int, ...]]] = []
    failed: list[DocumentFailure] = []
    for doc in docs:
        try:
            spans = chunk_spans(doc.text, chunk_tokens)
        except Exception as exc:
            failed.append(DocumentFailure(doc_id=doc.id, error=f"chunking failed: {exc}"))
            continue
        meta = dict(doc.metadata)
        chunks = [
            Chunk(
                chunk_id=f"{doc.id}_{index}",
                doc_id=doc.id,
                index=index,
                title=doc.title,
                text=doc.text[start:end],
                start=start,
                end=end,
                metadata=meta,
            )
            for index, (start, end, _) in enumerate(spans)
        ]
        chunked.append((doc, chunks, tuple(t for _, _, t in spans)))
    texts = [_embed_text(c) for _, chunks, _ in chunked for c in chunks]
    try:
        matrix = _embed(embedder, texts)
    except Exception as exc:
        if len(chunked) <= 1:
            if chunked:
                failed.append(
                    DocumentFailure(doc_id=chunked[0][0].id, error=_embed_error(embedder, exc))
                )
            return [], failed
        # Find the culprit document(s) one by one; the rest still ingest.
        prepared: list[PreparedDocument] = []
        for doc, _, _ in chunked:
            ok, bad = prepare_documents([doc], embedder, chunk_tokens=chunk_tokens)
            prepared += ok
            failed += bad
        return prepared, failed
    prepared = []
    row = 0
    for doc, chunks, tokens in chunked:
        vectors = matrix[row : row + len(chunks)]
        prepared.append(PreparedDocument(doc, content_hash(doc), chunks, vectors, tokens))
        row += len(chunks)
    return prepared, failed


def _embed_text(chunk: Chunk) -> str:
    # The title disambiguates short passages ("He was born in 1920.") for dense search.
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


def _embed(embedder: Embedder, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    matrix = np.asarray(embedder.embed(texts), dtype=np.float32)
    if matrix.shape != (len(texts), embedder.dim):
        raise ValueError(
            f"embedder {embedder.name!r} returned shape {matrix.shape}, "
            f"expected ({len(texts)}, {embedder.dim})"
        )
    if not np.isfinite(matrix).all():
        raise ValueError(f"embedder {embedder.name!r} returned non-finite values")
    return matrix


def _embed_error(embedder: Embedder, exc: Exception) -> str:
    return f"embedding with {embedder.name!r} failed: {_first_line(exc)}"


def embed_query(embedder: Embedder, query: str, vector: np.ndarray | None) -> np.ndarray:
    """The query vector as float32 of the embedder's dimension, L2-normalised."""
    if vector is None:
        vec = _embed(embedder, [query])[0]
    else:
        vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != embedder.dim:
            raise ValueError(
                f"vector has {vec.shape[0]} dimensions but the store's embedder "
                f"{embedder.name!r} has {embedder.dim}"
            )
        if not np.isfinite(vec).all():
            raise ValueError("vector contains non-finite values")
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else vec


# --------------------------------------------------------------------------- input checks


def validate_query(query: str, max_chars: int = DEFAULT_MAX_QUERY_CHARS) -> str:
    """The query stripped; InvalidQueryError when it is empty or longer than max_chars."""
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
    text = query.strip()
    if not text:
        raise InvalidQueryError("query is empty; give a question or keywords to search for")
    if len(text) > max_chars:
        raise InvalidQueryError(
            f"query is {len(text)} characters long; the limit is {max_chars}. "
            "Shorten it to the key words or raise max_query_chars."
        )
    return text


def check_k(k: int, *, name: str = "k", limit: int = MAX_K) -> int:
    """`k` itself when it is an int in 1..limit, else ValueError naming it."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limit:
        raise ValueError(f"{name} must be an integer between 1 and {limit}, got {k!r}")
    return k


def compile_pattern(pattern: str, max_chars: int = DEFAULT_MAX_PATTERN_CHARS) -> Any:
    """An RE2 regex (linear-time matching), or InvalidPatternError saying why not.

    RE2 refuses what cannot run in linear time (backreferences, lookaround, possessive
    quantifiers), so an untrusted pattern can never hang a search.
    """
    if not isinstance(pattern, str):
        raise InvalidPatternError(f"pattern must be a string, got {type(pattern).__name__}")
    if not pattern:
        raise InvalidPatternError("pattern is empty; give a regular expression to grep for")
    if len(pattern) > max_chars:
        raise InvalidPatternError(
            f"pattern is {len(pattern)} characters long; the limit is {max_chars}"
        )
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _RE2_MAX_MEM
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        hint = ""
        if re.search(r"\\[1-9]|\(\?[=!<]|\(\?<[=!]|[*+?}]\+", pattern) or "perl operator" in reason:
            hint = (
                " (backreferences, lookahead/lookbehind and possessive quantifiers are not "
                "supported: grep uses RE2 syntax, which always runs in linear time)"
            )
        elif "pattern too large" in reason:
            hint = " (the pattern's automaton is too large; use fewer or smaller repetitions)"
        raise InvalidPatternError(f"invalid grep pattern {pattern!r}: {reason}{hint}") from None


_BREAK = None


def literal_fragments(pattern: str) -> list[str]:
    """Substrings every match of `pattern` must contain, longest first.

    Conservative: when a construct is not understood, it contributes nothing, so the
    result may be empty but never names a substring some match lacks. Case-insensitive
    parts are returned as written; the caller pre-filters case-insensitively.
    """
    # Python's parser reads a few RE2-only constructs differently ([[:alpha:]] classes,
    # \Q...\E quoting, \pL classes); rather than guess, such patterns yield no fragments.
    if "[:" in pattern or "\\Q" in pattern or "\\p" in pattern or "\\P" in pattern:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = sre_parse.parse(pattern)
    except Exception:
        return []
    pieces: list[str | None] = []
    _walk(list(parsed), pieces)
    fragments: list[str] = []
    current: list[str] = []
    for piece in [*pieces, _BREAK]:
        if piece is _BREAK:
            if current:
                fragments.append("".join(current))
            current = []
        else:
            current.append(piece)
    unique = sorted(set(fragments), key=lambda f: (-len(f), f))
    return unique


def _walk(items: list[Any], out: list[str | None]) -> None:
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "SUBPATTERN":
            # (group, add_flags, del_flags, sub); flags never remove a required literal.
            out.append(_BREAK)
            _walk(list(arg[3]), out)
            out.append(_BREAK)
        elif name in ("MAX_REPEAT", "MIN_REPEAT") and arg[0] >= 1:
            out.append(_BREAK)
            _walk(list(arg[2]), out)
            out.append(_BREAK)
        elif name == "ATOMIC_GROUP":
            out.append(_BREAK)
            _walk(list(arg), out)
            out.append(_BREAK)
        else:
            out.append(_BREAK)


# --------------------------------------------------------------------------- fusion

Ranked = Sequence[tuple[Any, float]]


def relative_score_fusion(dense: Ranked, lexical: Ranked, alpha: float) -> list[tuple[Any, float]]:
    """Weaviate's relativeScoreFusion: each list min-max normalised to [0, 1], then
    `alpha * dense + (1 - alpha) * lexical`; a key absent from a list scores 0 there."""
    scores: dict[Any, float] = {}
    for weight, ranked in ((alpha, dense), (1.0 - alpha, lexical)):
        if not ranked:
            continue
        values = [s for _, s in ranked]
        low, high = min(values), max(values)
        span = high - low
        for key, score in ranked:
            norm = (score - low) / span if span > 0 else 1.0
            scores[key] = scores.get(key, 0.0) + weight * norm
    return _order(scores, dense, lexical)


def rrf_fusion(
    dense: Ranked, lexical: Ranked, alpha: float, *, k: int = 60
) -> list[tuple[Any, float]]:
    """Weighted reciprocal rank fusion: `alpha / (k + rank_dense) + (1 - alpha) /
    (k + rank_lexical)`, ranks from 1; scores alone are ignored."""
    scores: dict[Any, float] = {}
    for weight, ranked in ((alpha, dense), (1.0 - alpha, lexical)):
        for rank, (key, _) in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return _order(scores, dense, lexical)


def _order(scores: dict[Any, float], dense: Ranked, lexical: Ranked) -> list[tuple[Any, float]]:
    # Ties break by lexical rank, then dense rank, so alpha=0 reproduces BM25's order and
    # alpha=1 the dense order exactly.
    lex_rank = {key: i for i, (key, _) in enumerate(lexical)}
    dense_rank = {key: i for i, (key, _) in enumerate(dense)}
    big = math.inf
    ordered = sorted(
        scores.items(),
        key=lambda kv: (-kv[1], lex_rank.get(kv[0], big), dense_rank.get(kv[0], big)),
    )
    return ordered


FusionFn = Callable[[Ranked, Ranked, float], list[tuple[Any, float]]]

FUSIONS: dict[str, FusionFn] = {
    "relative_score": relative_score_fusion,
    "rrf": rrf_fusion,
}


def fusion_names() -> tuple[str, ...]:
    return tuple(FUSIONS)


def check_fusion(name: str, alpha: float) -> tuple[str, float]:
    """The fusion name and alpha, validated; unknown names list the valid ones."""
    if name not in FUSIONS:
        raise ValueError(f"unknown fusion {name!r}; valid names: {', '.join(FUSIONS)}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be a number between 0 and 1, got {alpha!r}")
    return name, float(alpha)


def fuse(name: str, dense: Ranked, lexical: Ranked, alpha: float) -> list[tuple[Any, float]]:
    """Fuses a dense and a lexical ranking (best first) with the strategy `name`."""
    check_fusion(name, alpha)
    return FUSIONS[name](dense, lexical, alpha)


def batched(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
