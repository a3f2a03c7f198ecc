"""The native API: search (JSON or a server-sent event stream), ingest, delete, stats."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError
from starlette.background import BackgroundTask

from sift.errors import InvalidFilterError
from sift.filters import MAX_FILTER_CONDITIONS, MAX_FILTER_VALUES, Filter, FilterOp, parse_filter
from sift.integrations.http._deps import (
    Service,
    arrived,
    at_most,
    authorized_key,
    checked_text,
    service,
)
from sift.integrations.http._dify import DEGRADED_HEADER
from sift.integrations.http._engine import PolicyName, SearchPlan
from sift.integrations.http._errors import (
    DOCUMENT_NOT_FOUND,
    ERROR_RESPONSES,
    INTERNAL,
    INVALID_REQUEST,
    SERVICE_RESPONSES,
    ApiError,
    validation_details,
)
from sift.integrations.http._settings import COLLECTION_PATTERN, ApiKey, SearchModeName
from sift.integrations.http._validation import (
    NOT_BLANK,
    JsonBodyRoute,
    RequestModel,
    parse_json,
    surrogate_problem,
)
from sift.progress import EVENT_NAMES, ProgressEvent
from sift.types import CorpusStats, Document, SearchResult, UpsertReport

__all__ = ["DocumentsRequest", "router"]

log = logging.getLogger("sift.http")

router = APIRouter(prefix="/v1", tags=["native"], route_class=JsonBodyRoute)


KeyDep = Annotated[ApiKey | None, Depends(authorized_key)]
ServiceDep = Annotated[Service, Depends(service)]
CollectionName = Annotated[
    str,
    Path(
        min_length=1,
        max_length=128,
        pattern=COLLECTION_PATTERN,
        description="Letters, digits, '_', '-' or '.', starting with a letter or digit.",
    ),
]
DocumentId = Annotated[str, Path(min_length=1, max_length=512)]


_TIERS = ("threshold_tokens", "rejection_tokens", "budget_tokens")


class BudgetTiers(RequestModel):
    """The token tiers of the episode (DESIGN "Budget tiers"). They always end in order,
    threshold <= rejection <= budget: given tiers out of order are sorted among
    themselves, and an unset tier is the server's default moved just enough to keep the
    order around the given ones."""

    model_config = ConfigDict(extra="forbid")

    threshold_tokens: int | None = Field(default=None, ge=1_024, le=1_048_576)
    rejection_tokens: int | None = Field(default=None, ge=1_024, le=1_048_576)
    budget_tokens: int | None = Field(default=None, ge=1_024, le=1_048_576)


Scalar = str | int | float | bool | None
Values = Annotated[list[Scalar], Field(max_length=MAX_FILTER_VALUES)]
FieldName = Annotated[str, StringConstraints(min_length=1, max_length=256)]


class RangeSpec(RequestModel):
    """A short-form bound or comparison: `{"gte": 2000, "lt": 2010}`."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})

    eq: Scalar = None
    ne: Scalar = None
    gt: Scalar = None
    gte: Scalar = None
    lt: Scalar = None
    lte: Scalar = None

    @model_validator(mode="after")
    def _some(self) -> RangeSpec:
        if not self.model_fields_set:
            raise ValueError("a comparison needs at least one of eq, ne, gt, gte, lt, lte")
        return self


class ConditionSpec(RequestModel):
    model_config = ConfigDict(extra="forbid")

    field: FieldName
    op: FilterOp = "eq"
    value: Scalar | Values = None


class FullFilter(RequestModel):
    """`{"logic": "and", "conditions": [{"field", "op", "value"}]}`."""

    model_config = ConfigDict(extra="forbid")

    logic: Literal["and", "or"] = "and"
    conditions: list[ConditionSpec] = Field(max_length=MAX_FILTER_CONDITIONS)


def _short_form_schema(schema: dict[str, Any]) -> None:
    schema["propertyNames"] = {"minLength": 1, "maxLength": 256, "not": {"const": "conditions"}}


ShortFilter = Annotated[
    dict[FieldName, Scalar | Values | RangeSpec],
    Field(json_schema_extra=_short_form_schema, max_length=MAX_FILTER_CONDITIONS),
]


def _checked_filter(value: Any) -> Any:
    """The filter as sent, checked first by `parse_filter`, the check the CLI, MCP and
    Python faces make: a bad one is refused with its one line (`year: unknown operator
    'gt_e'; the operators are ...`), not with pydantic's report of how it failed each
    form of the union."""
    try:
        parse_filter(value)
    except InvalidFilterError as exc:
        # No context: the message is not a template (it may hold "{field, op, value}").
        raise PydanticCustomError("invalid_filter", str(exc)) from None
    return value


# The `filters` of a search or grep request: the forms the OpenAPI document describes.
Filters = Annotated[FullFilter | ShortFilter | None, BeforeValidator(_checked_filter)]


class SearchRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")

    collection: str = Field(min_length=1, max_length=128, pattern=COLLECTION_PATTERN)
    question: str = Field(min_length=1, pattern=NOT_BLANK)
    filters: Filters = Field(
        default=None,
        description='Short form {"lang": "en", "page": {"gte": 3, "lte": 5}} or a full '
        'filter {"logic": "and", "conditions": [{"field": ..., "op": ..., "value": ...}]}. '
        "Fields: the documents' metadata (files carry lang and format), doc_id, title, "
        "and each passage's page and section.",
    )
    top_k: int | None = Field(default=None, ge=1)
    mode: SearchModeName | None = Field(default=None, description="Default: the collection's.")
    policy: PolicyName = "heuristic"
    max_turns: int | None = Field(default=None, ge=1, le=256)
    budget: BudgetTiers | None = None
    rollouts: int = Field(default=1, ge=1)
    deadline_s: float | None = Field(default=None, gt=0)


class DocumentsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    documents: list[Document] = Field(min_length=1)


class CollectionInfo(BaseModel):
    name: str
    mode: SearchModeName
    deadline_s: float
    retrieval_deadline_s: float
    stats: CorpusStats | None = None


class CollectionList(BaseModel):
    collections: list[str]


class Deleted(BaseModel):
    deleted: int


def _filter(spec: FullFilter | dict[str, Any] | None) -> Filter | None:
    """The request's filter through the rules every face shares (`parse_filter`)."""
    if isinstance(spec, FullFilter):
        data: dict[str, Any] | None = spec.model_dump()
    elif spec is not None:
        data = {
            k: v.model_dump(exclude_unset=True) if isinstance(v, RangeSpec) else v
            for k, v in spec.items()
        }
    else:
        data = None
    try:
        return parse_filter(data)
    except ValueError as exc:
        raise ApiError(422, INVALID_REQUEST, f"filters: {exc}") from None


def _harness_overrides(body: SearchRequest) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    if body.max_turns:
        overrides["max_turns"] = body.max_turns
    if body.budget is not None:
        overrides.update(_ordered_tiers(body.budget))
    return overrides


def _ordered_tiers(budget: BudgetTiers) -> dict[str, int]:
    from sift.graphs import HarnessConfig

    given = {k: v for k, v in budget.model_dump().items() if v is not None}
    if not given:
        return {}
    defaults = HarnessConfig()
    names = [k for k in _TIERS if k in given]
    tiers = dict(zip(names, sorted(given.values()), strict=True))
    for index, name in enumerate(_TIERS):
        if name in tiers:
            continue
        value = getattr(defaults, name)
        below = [tiers[k] for k in _TIERS[:index] if k in tiers]
        above = [tiers[k] for k in _TIERS[index + 1 :] if k in tiers]
        if below:
            value = max(value, max(below))
        if above:
            value = min(value, min(above))
        tiers[name] = value
    return tiers


def _sse(event: str, data: Any, number: int) -> bytes:
    payload = json.dumps(jsonable_encoder(data), ensure_ascii=False, separators=(",", ":"))
    return f"id: {number}\nevent: {event}\ndata: {payload}\n\n".encode()


async def _stream(
    task: asyncio.Future[SearchResult], queue: asyncio.Queue[ProgressEvent]
) -> AsyncIterator[bytes]:
    number = 0
    try:
        # A comment line first, so proxies and clients see the stream open at once.
        yield b": sift search stream\n\n"
        while True:
            getter: asyncio.Future[Any] = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter not in done:
                getter.cancel()
                break
            event = getter.result()
            number += 1
            yield _sse(event.get("event", "sift.event"), event, number)
        while not queue.empty():
            event = queue.get_nowait()
            number += 1
            yield _sse(event.get("event", "sift.event"), event, number)
        number += 1
        try:
            result = task.result()
        except ApiError as exc:
            yield _sse("sift.error", {"error_code": exc.code, "error_msg": exc.message}, number)
            return
        except Exception as exc:  # the stream is open: report in-band, never a broken frame
            log.exception("search stream failed")
            yield _sse(
                "sift.error",
                {"error_code": INTERNAL, "error_msg": f"internal error ({type(exc).__name__})"},
                number,
            )
            return
        yield _sse("sift.result", result, number)
    finally:
        # The client may have left: the search stops at its next step, its slot is freed
        # when its worker is done.
        if not task.done():
            task.cancel()


@router.post(
    "/search",
    response_model=SearchResult,
    responses={
        **SERVICE_RESPONSES,
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
            "description": "The SearchResult, or with Accept: text/event-stream, "
            f"progress events ({', '.join(EVENT_NAMES)}) then `sift.result`. "
            "Past the deadline the evidence is the "
            "single-shot search's: `stopped_because` is `deadline`, `flags` holds "
            f"`degraded` and `deadline_fallback`, and the header `{DEGRADED_HEADER}: "
            "deadline` is set (JSON answers).",
        },
    },
    summary="Agentic (or single-shot) search of one collection",
)
async def search(
    body: SearchRequest, request: Request, response: Response, key: KeyDep, svc: ServiceDep
) -> Any:
    settings = svc.settings
    svc.auth.check_collection(key, body.collection)
    collection = svc.collections.get(body.collection)
    question = checked_text(body.question, "question", settings.max_query_chars)
    top_k = at_most(
        body.top_k or collection.top_k or min(30, settings.max_top_k), "top_k", settings.max_top_k
    )
    at_most(body.rollouts, "rollouts", settings.max_rollouts)
    deadline = min(body.deadline_s or collection.search_deadline_s, settings.search_deadline_s)
    plan = SearchPlan(
        question=question,
        mode=body.mode or collection.mode,
        top_k=top_k,
        filters=_filter(body.filters),
        deadline_s=deadline,
        grace_s=settings.deadline_grace_s,
        policy=body.policy,
        rollouts=body.rollouts,
        config=_harness_overrides(body),
    )
    started = arrived(request)
    if "text/event-stream" not in request.headers.get("accept", ""):
        result = await svc.engine.search(collection, plan, arrived=started)
        if "degraded" in result.flags:
            response.headers[DEGRADED_HEADER] = "deadline"
        return result
    # Admitted before the stream opens: a 429 or 503 is a status, not an event.
    slot = await svc.engine.admit(started + plan.deadline_s)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[ProgressEvent] = asyncio.Queue()

    def on_event(event: ProgressEvent) -> None:
        # Called on the thread that runs or waits for the search: hand over through the loop.
        data = event if isinstance(event, dict) else jsonable_encoder(event)
        loop.call_soon_threadsafe(queue.put_nowait, data)

    task = asyncio.ensure_future(
        svc.engine.search(collection, plan, arrived=started, on_event=on_event, slot=slot)
    )
    # Read its outcome even if the client leaves first, so asyncio does not log it.
    task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def cleanup() -> None:
        # Runs even when the client left before the stream started.
        if not task.done():
            task.cancel()

    return StreamingResponse(
        _stream(task, queue),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        background=BackgroundTask(cleanup),
    )


@router.get(
    "/collections",
    response_model=CollectionList,
    responses=ERROR_RESPONSES,
    summary="Collections this key may use",
)
async def list_collections(key: KeyDep, svc: ServiceDep) -> CollectionList:
    names = svc.collections.names()
    return CollectionList(collections=[n for n in names if key is None or key.allows(n)])


@router.get(
    "/collections/{name}",
    response_model=CollectionInfo,
    responses=SERVICE_RESPONSES,
    summary="A collection's settings and store statistics",
)
async def collection_info(name: CollectionName, key: KeyDep, svc: ServiceDep) -> CollectionInfo:
    svc.auth.check_collection(key, name)
    collection = svc.collections.get(name)
    stats = await svc.collections.stats(collection)
    # The store's location is a server path or URL: not the client's business.
    stats = stats.model_copy(update={"location": name})
    return CollectionInfo(
        name=name,
        mode=collection.mode,
        deadline_s=collection.search_deadline_s,
        retrieval_deadline_s=collection.retrieval_deadline_s,
        stats=stats,
    )


def _documents(raw: bytes, limit: int) -> list[Document]:
    """The batch of an ingest request, parsed on a worker thread (a body may be 16 MiB)."""
    try:
        data = parse_json(raw)
    except ValueError as exc:
        raise ApiError(422, INVALID_REQUEST, f"invalid request: {exc}") from None
    problem = surrogate_problem(data)
    if problem:
        raise ApiError(422, INVALID_REQUEST, f"invalid request: {problem}")
    try:
        body = DocumentsRequest.model_validate(data)
    except ValidationError as exc:
        details = validation_details(exc.errors())
        summary = "; ".join(f"{d['field']}: {d['problem']}" for d in details[:5])
        raise ApiError(
            422, INVALID_REQUEST, f"invalid request: {summary}", details=details
        ) from None
    if len(body.documents) > limit:
        raise ApiError(
            422,
            INVALID_REQUEST,
            f"{len(body.documents)} documents in one request; "
            f"the limit is {limit}: split the batch",
        )
    for position, document in enumerate(body.documents):
        if not document.text.strip():
            raise ApiError(
                422,
                INVALID_REQUEST,
                f"documents[{position}] ({document.id!r}) has no text; nothing was stored",
            )
    return body.documents


@router.post(
    "/collections/{name}/documents",
    response_model=UpsertReport,
    responses={
        **SERVICE_RESPONSES,
        207: {
            "model": UpsertReport,
            "description": "Some documents failed; each one "
            "listed in `failed` is not stored at all.",
        },
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/DocumentsRequest"}}
            },
        }
    },
    summary="Batch upsert (idempotent; each document stored whole or not at all)",
)
async def upsert_documents(
    name: CollectionName, request: Request, key: KeyDep, svc: ServiceDep
) -> Any:
    svc.auth.check_collection(key, name)
    collection = svc.collections.get(name, create=True, key=key)
    # The body is read here (cheap) and parsed on the worker (not on the event loop).
    raw = await request.body()
    slot = await svc.engine.admit()
    limit = svc.settings.max_documents_per_request
    report = await svc.engine.upsert(slot, collection, lambda: _documents(raw, limit))
    if report.failed and not (report.added or report.updated or report.unchanged):
        # Nothing was stored: a client error, not a partial success.
        details = [{"field": f"document {f.doc_id!r}", "problem": f.error} for f in report.failed]
        summary = "; ".join(f"{d['field']}: {d['problem']}" for d in details[:5])
        raise ApiError(422, INVALID_REQUEST, f"no document was stored: {summary}", details=details)
    if report.failed:
        return JSONResponse(jsonable_encoder(report), status_code=207)
    return report


@router.delete(
    "/collections/{name}/documents/{doc_id:path}",
    response_model=Deleted,
    responses=SERVICE_RESPONSES,
    summary="Delete one document and its chunks",
)
async def delete_document(
    name: CollectionName, doc_id: DocumentId, key: KeyDep, svc: ServiceDep
) -> Deleted:
    svc.auth.check_collection(key, name)
    collection = svc.collections.get(name)
    slot = await svc.engine.admit()
    deleted = await svc.engine.delete(slot, collection, doc_id)
    if not deleted:
        raise ApiError(
            404, DOCUMENT_NOT_FOUND, f"document {doc_id!r} is not in collection {name!r}"
        )
    return Deleted(deleted=deleted)
