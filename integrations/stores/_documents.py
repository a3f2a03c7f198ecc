"""Documents on their way into a store: validated, hashed (so an unchanged document is
skipped), chunked and embedded. Both stores prepare documents here, so that they agree
on what counts as a changed document and how chunks are cut."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sift.errors import DocumentError
from sift.integrations.chunking import Span, chunk_spans_many, chunk_spans_within
from sift.integrations.stores._embedding import embed_texts
from sift.integrations.stores.locations import boundaries, check_locations, chunk_metadata
from sift.types import Chunk, Document, DocumentFailure, make_chunk_id

if TYPE_CHECKING:
    from sift.protocols import Embedder

__all__ = [
    "Chunked",
    "Item",
    "PreparedDocument",
    "Span",
    "assemble",
    "chunk_and_embed",
    "coerce_document",
    "content_hash",
    "items_of",
    "prepare_documents",
]


# json.dumps with these options, built once: dumps builds an encoder per call, which
# cost as much as the hash itself on an ingest's critical path.
_HASH_JSON = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
)


# How a document with pages or sections is cut: part of its hash, so that re-indexing a
# document stored when chunks could span pages (before this marker) re-chunks it, while
# documents without location tables (most JSONL passages) keep their hash and are skipped.
_LAYOUT_CHUNKING = "chunks cut at page and section starts"


def content_hash(doc: Document) -> str:
    """A stable digest of everything stored for a document (id, title, text, metadata)
    and, for a document with pages or sections, of how its chunks are cut.

    Two documents with the same hash store identically, so an upsert may skip them.
    """
    return _digest(doc.id, doc.title, doc.text, doc.metadata)


def _digest(doc_id: str, title: str, text: str, metadata: dict[str, Any]) -> str:
    fields: list[Any] = [doc_id, title, text, metadata]
    if boundaries(metadata):
        fields.append(_LAYOUT_CHUNKING)
    payload = _HASH_JSON.encode(fields)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def _spans(text: str, metadata: dict[str, Any], chunk_tokens: int) -> list[Span]:
    return chunk_spans_within(text, boundaries(metadata), chunk_tokens)


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
    wrong = check_locations(doc.metadata, len(doc.text))
    if wrong is not None:
        raise DocumentError(f"document {doc.id!r}: {wrong}")
    return doc


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return " ".join(line.strip() for line in text[:3]) if text else type(exc).__name__


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    """A document ready to store: its hash, its chunks' spans and one vector per chunk."""

    doc: Document
    hash: str
    spans: list[Span]
    vectors: np.ndarray

    @property
    def chunks(self) -> list[Chunk]:
        doc = self.doc
        return [
            Chunk(
                chunk_id=make_chunk_id(doc.id, index),
                doc_id=doc.id,
                index=index,
                title=doc.title,
                text=doc.text[start:end],
                start=start,
                end=end,
                metadata=chunk_metadata(doc.metadata, start, end),
            )
            for index, (start, end, _) in enumerate(self.spans)
        ]


# What `chunk_and_embed` takes and gives: plain data, so that it can run in another
# process. An item is (doc_id, title, text, metadata); the result holds the position and
# spans of every item that was prepared, one vector per chunk in the same order, the
# (doc_id, error) of every item that was not, and the content hash of every item that
# was (in the order of the first list).
Item = tuple[str, str, str, dict[str, Any]]
Chunked = tuple[list[tuple[int, list[Span]]], np.ndarray, list[tuple[str, str]], list[str]]


def chunk_and_embed(items: Sequence[Item], embedder: Embedder, *, chunk_tokens: int) -> Chunked:
    """Chunks, embeds and hashes documents, embedding in one embedder call; a document
    whose chunking or embedding fails is reported and the others are still prepared.

    The content hash is made here, not by the store's writer: it is mostly the JSON
    encoding of the text, and here it runs beside the writer (in the ingest's thread)
    instead of on its critical path (docs/decisions/0006-grep-signatures-in-c.md)."""
    chunked: list[tuple[int, list[Span]]] = []
    failed: list[tuple[str, str]] = []
    hashes: list[str] = []
    texts: list[str] = []
    # Documents with pages or sections are cut at their boundaries, one by one; the rest
    # (most passages) in one batch.
    plain = [position for position, item in enumerate(items) if not boundaries(item[3])]
    batch: list[list[Span] | None] = [None] * len(items)
    try:
        for position, cut in zip(
            plain, chunk_spans_many([items[p][2] for p in plain], chunk_tokens), strict=True
        ):
            batch[position] = cut
    except Exception:
        batch = [None] * len(items)  # each document alone, to name the one that fails
    for position, (doc_id, title, text, metadata) in enumerate(items):
        spans = batch[position]
        if spans is None:
            try:
                spans = _spans(text, metadata, chunk_tokens)
            except Exception as exc:
                failed.append((doc_id, f"chunking failed: {exc}"))
                continue
        chunked.append((position, spans))
        hashes.append(_digest(doc_id, title, text, metadata))
        # The title disambiguates short passages ("He was born in 1920.") for dense search.
        texts += [f"{title}\n{text[a:b]}" if title else text[a:b] for a, b, _ in spans]
    try:
        matrix = embed_texts(embedder, texts)
    except Exception as exc:
        if len(chunked) <= 1:
            failed += [(items[position][0], _embed_error(embedder, exc)) for position, _ in chunked]
            return [], np.zeros((0, embedder.dim), dtype=np.float32), failed, []
        # Find the culprit document(s) one by one; the rest still ingest.
        kept: list[tuple[int, list[Span]]] = []
        kept_hashes: list[str] = []
        blocks: list[np.ndarray] = []
        for position, _ in chunked:
            ok, vectors, bad, digests = chunk_and_embed(
                [items[position]], embedder, chunk_tokens=chunk_tokens
            )
            kept += [(position, spans) for _, spans in ok]
            kept_hashes += digests
            blocks.append(vectors)
            failed += bad
        return kept, np.concatenate(blocks), failed, kept_hashes
    return chunked, matrix, failed, hashes


def prepare_documents(
    docs: Sequence[Document],
    embedder: Embedder,
    *,
    chunk_tokens: int = 512,
) -> tuple[list[PreparedDocument], list[DocumentFailure]]:
    """Chunks, embeds and hashes documents (`chunk_and_embed`)."""
    return assemble(docs, chunk_and_embed(items_of(docs), embedder, chunk_tokens=chunk_tokens))


def items_of(docs: Sequence[Document]) -> list[Item]:
    """The documents as `chunk_and_embed` takes them."""
    return [(d.id, d.title, d.text, d.metadata) for d in docs]


def assemble(
    docs: Sequence[Document], chunked: Chunked
) -> tuple[list[PreparedDocument], list[DocumentFailure]]:
    """The prepared documents and failures of `chunk_and_embed`'s answer for `docs`."""
    ok, matrix, failed, hashes = chunked
    prepared = []
    row = 0
    for (position, spans), digest in zip(ok, hashes, strict=True):
        doc = docs[position]
        prepared.append(PreparedDocument(doc, digest, spans, matrix[row : row + len(spans)]))
        row += len(spans)
    return prepared, [DocumentFailure(doc_id=doc_id, error=error) for doc_id, error in failed]


def _embed_error(embedder: Embedder, exc: Exception) -> str:
    return f"embedding with {embedder.name!r} failed: {_first_line(exc)}"
