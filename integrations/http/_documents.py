"""Reading a collection without an episode: one document's passages in order, and the
passages matching a regular expression. The workflow nodes (n8n, Dify) offer them beside
search, as the harness offers `read_document` and `grep_corpus` to its policy; each
passage says where it sits (page, section) as well as what it holds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from sift.errors import InvalidPatternError
from sift.integrations.http._deps import Service, at_most, service
from sift.integrations.http._errors import (
    DOCUMENT_NOT_FOUND,
    INVALID_REQUEST,
    SERVICE_RESPONSES,
    ApiError,
)
from sift.integrations.http._native import (
    CollectionName,
    DocumentId,
    Filters,
    KeyDep,
    _filter,
)
from sift.integrations.http._validation import RequestModel
from sift.integrations.subagent import page_numbers
from sift.types import Chunk

__all__ = ["DocumentPassages", "GrepAnswer", "GrepRequest", "Passage", "router"]

router = APIRouter(prefix="/v1", tags=["native"])

ServiceDep = Annotated[Service, Depends(service)]


class Passage(BaseModel):
    """One stored chunk, with where it sits in its document."""

    doc_id: str
    chunk_id: str = Field(description="`<doc_id>_<index>`.")
    index: int = Field(description="Its position in the document, from 0.")
    title: str
    text: str
    page: int | None = Field(
        default=None, description="First page (PDF page, slide) of the passage, where known."
    )
    pages: list[int] = Field(
        default_factory=list, description="[first, last] page it spans; empty where unknown."
    )
    section: str | None = Field(
        default=None, description="The heading path it sits under (`A > B`), where known."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="As stored.")


class DocumentPassages(BaseModel):
    collection: str
    doc_id: str
    title: str
    total_chunks: int = Field(description="How many passages the document has in all.")
    offset: int
    next_offset: int | None = Field(
        description="Where the next page of passages starts; null after the last one."
    )
    chunks: list[Passage]


class GrepRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        description="A regular expression in RE2 syntax (linear time: no look-arounds, no "
        "back-references). Case-sensitive unless it starts with `(?i)`.",
    )
    top_k: int = Field(default=5, ge=1, description="How many passages at most.")
    filters: Filters = Field(default=None, description="The same filters as /v1/search takes.")


class GrepAnswer(BaseModel):
    collection: str
    pattern: str
    hits: list[Passage]
    note: str | None = Field(
        default=None, description="Set when the scan was bounded (more may match)."
    )


def _where(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The `page`, `pages` and `section` of a chunk's metadata (integrations/stores/
    locations.py writes them), as fields; absent ones null or empty."""
    pages = page_numbers(metadata)
    section = metadata.get("section")
    return {
        "page": pages[0] if pages else None,
        "pages": [pages[0], pages[-1]] if pages else [],
        "section": section if isinstance(section, str) else None,
    }


def passage(chunk: Chunk) -> Passage:
    return Passage(
        doc_id=chunk.doc_id,
        chunk_id=chunk.chunk_id,
        index=chunk.index,
        title=chunk.title,
        text=chunk.text,
        metadata=dict(chunk.metadata),
        **_where(chunk.metadata),
    )


@router.get(
    "/collections/{name}/documents/{doc_id:path}",
    response_model=DocumentPassages,
    responses=SERVICE_RESPONSES,
    summary="One document's passages in order, each with its page and section",
)
async def read_document(
    name: CollectionName,
    doc_id: DocumentId,
    key: KeyDep,
    svc: ServiceDep,
    offset: Annotated[int, Query(ge=0, description="The first passage to return.")] = 0,
    limit: Annotated[int, Query(ge=1, le=1_000, description="How many passages at most.")] = 100,
) -> DocumentPassages:
    svc.auth.check_collection(key, name)
    collection = svc.collections.get(name)
    slot = await svc.engine.admit()

    def work() -> list[Chunk]:
        with svc.collections.using(collection) as corpus:
            return corpus.read(doc_id)

    chunks = await svc.engine.run(slot, work, collection)
    if not chunks:
        raise ApiError(
            404, DOCUMENT_NOT_FOUND, f"document {doc_id!r} is not in collection {name!r}"
        )
    page = chunks[offset : offset + limit]
    end = offset + len(page)
    return DocumentPassages(
        collection=name,
        doc_id=doc_id,
        title=chunks[0].title,
        total_chunks=len(chunks),
        offset=offset,
        next_offset=end if end < len(chunks) else None,
        chunks=[passage(c) for c in page],
    )


@router.post(
    "/collections/{name}/grep",
    response_model=GrepAnswer,
    responses=SERVICE_RESPONSES,
    summary="Passages matching a regular expression (RE2, linear time)",
)
async def grep(name: CollectionName, body: GrepRequest, key: KeyDep, svc: ServiceDep) -> GrepAnswer:
    svc.auth.check_collection(key, name)
    collection = svc.collections.get(name)
    settings = svc.settings
    at_most(len(body.pattern), "pattern length", settings.max_query_chars)
    top_k = at_most(body.top_k, "top_k", settings.max_top_k)
    filters = _filter(body.filters)
    slot = await svc.engine.admit()

    def work() -> Any:
        try:
            with svc.collections.using(collection) as corpus:
                return corpus.grep(body.pattern, k=top_k, filters=filters)
        except InvalidPatternError as exc:
            raise ApiError(422, INVALID_REQUEST, f"pattern: {exc}") from None

    found = await svc.engine.run(slot, work, collection)
    return GrepAnswer(
        collection=name,
        pattern=body.pattern,
        hits=[passage(hit.chunk) for hit in found.hits],
        note=found.note,
    )
