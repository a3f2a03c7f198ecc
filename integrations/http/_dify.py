"""`POST /retrieval`: Dify's External Knowledge API, field for field.

Dify registers the endpoint by POSTing to /retrieval with the key and no body: that probe
gets 200 `{"records": []}`. Scores are mapped into (0, 1], strictly decreasing down
sift's ranking (see `unit_scores`), records under `score_threshold` are dropped, at most
`top_k` are returned, `metadata` is always an object. Slow searches conclude at the
collection's deadline instead of failing.

Dify's records have no field for the result as a whole, so a result whose evidence does
not match the question (`SearchResult.not_found`) says so in a header (`X-Sift-Not-Found`)
and in each record's metadata (`sift_not_found`), which Dify keeps with the record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Body, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from sift.integrations.http._conditions import (
    ConditionValueError,
    MetadataCondition,
    plan_filter,
)
from sift.integrations.http._deps import (
    Service,
    arrived,
    at_most,
    authorized_key,
    checked_text,
    service,
)
from sift.integrations.http._engine import SearchPlan
from sift.integrations.http._errors import INVALID_REQUEST, SERVICE_RESPONSES, ApiError
from sift.integrations.http._settings import COLLECTION_PATTERN, ApiKey
from sift.integrations.http._validation import NOT_BLANK, JsonBodyRoute, RequestModel
from sift.types import Evidence

__all__ = [
    "DEGRADED_HEADER",
    "NOT_FOUND_HEADER",
    "RetrievalRequest",
    "RetrievalResponse",
    "not_found_header",
    "router",
    "unit_scores",
]

router = APIRouter(tags=["dify"], route_class=JsonBodyRoute)

# Post-filtered searches fetch this many times top_k, so filtering still fills the answer.
_POST_FILTER_OVERFETCH = 4


class RetrievalSetting(RequestModel):
    model_config = ConfigDict(extra="ignore")

    top_k: int = Field(ge=1, description="Maximum number of records.")
    score_threshold: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Records scoring under it are dropped."
    )


class RetrievalRequest(RequestModel):
    model_config = ConfigDict(extra="ignore")

    knowledge_id: str = Field(
        min_length=1,
        max_length=128,
        pattern=COLLECTION_PATTERN,
        description="The collection (External Knowledge ID in Dify).",
    )
    query: str = Field(min_length=1, pattern=NOT_BLANK)
    retrieval_setting: RetrievalSetting
    metadata_condition: MetadataCondition | None = None


class Record(BaseModel):
    content: str
    score: float = Field(
        gt=0.0,
        le=1.0,
        description="In (0, 1], strictly decreasing down sift's ranking (Dify sorts by it).",
    )
    title: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class RetrievalResponse(BaseModel):
    records: list[Record] = Field(default_factory=list)


# Dify drops every record under its score_threshold and sorts what it keeps by score, so
# the scores alone must carry sift's ranking: strictly decreasing down the list, and
# above 0 for every record (a 0 is dropped by any threshold, and ties lose the order).
# Record i of n never scores under _FLOOR * (n - i) / n, and never within _TIE_STEP of
# the record ranked above it.
_FLOOR = 0.01
_TIE_STEP = 1e-6


def unit_scores(scores: Sequence[float]) -> list[float]:
    """Scores of a ranked list mapped into (0, 1], strictly decreasing down the ranking.

    1. Into [0, 1]: scores already inside it (cosine, relative-score fusion, the
       harness's rank-based 1/(1+rank)) keep their values, so Dify's threshold means what
       it says; otherwise they are divided by the best one (negative ones become 0): the
       top record scores 1 and the others keep their ratio to it, rather than min-max,
       which would push the last record to 0 whatever its quality.
    2. Each score is capped a millionth under the one ranked above it: the harness's
       order is the answer, and Dify re-sorts by score (a tie, or a later record that
       scored higher, keeps its place).
    3. Each score is at least record i's floor, 0.01 * (n - i) / n: a record that scored
       0 (one the plain search kept, a negative cosine) stays in the list, in its place,
       below any threshold of 0.01 or more.

    `[0.9, 0.4, 0.1]` stays as it is; `[0.5, 0.5, 0.0]` becomes `[0.5, 0.499999,
    0.00333]`; `[2.0, -1.0]` becomes `[1.0, 0.005]`.
    """
    if not scores:
        return []
    if all(0.0 <= s <= 1.0 for s in scores):
        unit = list(scores)
    else:
        top = max(scores)
        unit = [min(1.0, max(0.0, s / top)) if top > 0 else 0.0 for s in scores]
    n = len(unit)
    mapped: list[float] = []
    for rank, score in enumerate(unit):
        if mapped:
            score = min(score, mapped[-1] - _TIE_STEP)
        mapped.append(max(score, _FLOOR * (n - rank) / n))
    return mapped


def _record_view(evidence: Evidence) -> dict[str, Any]:
    """What metadata conditions see: the chunk's metadata plus doc_id and title."""
    return {**evidence.metadata, "doc_id": evidence.doc_id, "title": evidence.title}


def _metadata(evidence: Evidence, not_found: list[str] | None) -> dict[str, Any]:
    metadata = dict(evidence.metadata)
    metadata["doc_id"] = evidence.doc_id
    metadata["chunk_id"] = evidence.chunk_id
    if evidence.justification:
        metadata["justification"] = evidence.justification
    if not_found is not None:
        # Prefixed: the chunk's own metadata keys share this object.
        metadata["sift_not_found"] = not_found or True
    return metadata


DEGRADED_HEADER = "X-Sift-Degraded"
NOT_FOUND_HEADER = "X-Sift-Not-Found"
# Every printable ASCII character but space, comma and `%` stays as it is in the header.
_HEADER_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in ",%")


def not_found_header(missing: list[str]) -> str:
    """The `X-Sift-Not-Found` value of a result flagged `not_found`: `*` when nothing
    matches the question's key terms, else the names that occur nowhere, separated by
    `, `, each percent-encoded where it holds a space, a comma, `%` or a character outside
    printable ASCII (a header value is ASCII)."""
    if not missing:
        return "*"
    return ", ".join(quote(name, safe=_HEADER_SAFE) for name in missing)


@router.post(
    "/retrieval",
    response_model=RetrievalResponse,
    responses=SERVICE_RESPONSES,
    summary="Dify External Knowledge API retrieval",
    description="Past the collection's deadline the records are the single-shot search's, "
    f"and the answer carries the header `{DEGRADED_HEADER}: deadline`. When the evidence "
    "does not match the question (the records are only the nearest text), the header "
    f"`{NOT_FOUND_HEADER}` holds the names the question types that occur nowhere in the "
    "collection (`, ` between them, each percent-encoded where needed), or `*` when "
    "nothing holds enough of the question's key terms; each record's metadata then has "
    "`sift_not_found`: the list of those names, or true.",
)
async def retrieval(
    request: Request,
    response: Response,
    key: Annotated[ApiKey | None, Depends(authorized_key)],
    svc: Annotated[Service, Depends(service)],
    body: Annotated[RetrievalRequest | None, Body()] = None,
) -> RetrievalResponse:
    if body is None:
        # Dify's registration probe: a valid key and no body.
        return RetrievalResponse()
    settings = svc.settings
    svc.auth.check_collection(key, body.knowledge_id)
    collection = svc.collections.get(body.knowledge_id)
    query = checked_text(body.query, "query", settings.max_query_chars)
    top_k = at_most(body.retrieval_setting.top_k, "retrieval_setting.top_k", settings.max_top_k)
    try:
        plan = plan_filter(body.metadata_condition)
    except ConditionValueError as exc:
        raise ApiError(422, INVALID_REQUEST, f"metadata_condition: {exc}") from None
    fetch = (
        top_k
        if plan.post is None
        else min(top_k * _POST_FILTER_OVERFETCH, settings.max_top_k * _POST_FILTER_OVERFETCH)
    )
    search = SearchPlan(
        question=query,
        mode=collection.mode,
        top_k=fetch,
        filters=plan.pushdown,
        deadline_s=collection.retrieval_deadline_s,
        grace_s=settings.deadline_grace_s,
    )
    result = await svc.engine.search(collection, search, arrived=arrived(request))
    if "degraded" in result.flags:
        response.headers[DEGRADED_HEADER] = "deadline"
    not_found = result.not_found
    if not_found is not None:
        response.headers[NOT_FOUND_HEADER] = not_found_header(not_found)
    evidence = [e for e in result.evidence if plan.post is None or plan.post(_record_view(e))]
    scores = unit_scores([e.score for e in evidence])
    threshold = body.retrieval_setting.score_threshold
    records = [
        Record(content=e.text, score=s, title=e.title or e.doc_id, metadata=_metadata(e, not_found))
        for e, s in zip(evidence, scores, strict=True)
        if s >= threshold
    ]
    return RetrievalResponse(records=records[:top_k])
