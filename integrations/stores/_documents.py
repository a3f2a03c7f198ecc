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
from sift.integrations.chunking import chunk_spans
from sift.integrations.stores._embedding import embed_texts
from sift.integrations.stores.locations import check_locations, chunk_metadata
from sift.types import Chunk, Document, DocumentFailure

if TYPE_CHECKING:
    from sift.protocols import Embedder

__all__ = ["PreparedDocument", "coerce_document", "content_hash", "prepare_documents"]


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
    wrong = check_locations(doc.metadata, len(doc.text))
    if wrong is not None:
        raise DocumentError(f"document {doc.id!r}: {wrong}")
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
        chunks = [
            Chunk(
                chunk_id=f"{doc.id}_{index}",
                doc_id=doc.id,
                index=index,
                title=doc.title,
                text=doc.text[start:end],
                start=start,
                end=end,
                metadata=chunk_metadata(doc.metadata, start, end),
            )
            for index, (start, end, _) in enumerate(spans)
        ]
        chunked.append((doc, chunks, tuple(t for _, _, t in spans)))
    texts = [_embed_text(c) for _, chunks, _ in chunked for c in chunks]
    try:
        matrix = embed_texts(embedder, texts)
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


def _embed_error(embedder: Embedder, exc: Exception) -> str:
    return f"embedding with {embedder.name!r} failed: {_first_line(exc)}"
