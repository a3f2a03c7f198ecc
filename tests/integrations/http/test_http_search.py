"""Search over a real server: Dify's /retrieval contract field by field, Dify's exact request
sequence, the native search as JSON and as server-sent events, deadlines."""

from __future__ import annotations

import itertools
import json
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
import pytest

from sift.graphs import EVENT_NAMES
from sift.types import SearchResult

QUESTION = "Where was the engineer whose company built the Eiffel Tower born?"


def _retrieval(
    knowledge_id: str = "docs",
    query: str = QUESTION,
    top_k: int = 4,
    threshold: float = 0.0,
    **extra: object,
) -> dict:
    return {
        "knowledge_id": knowledge_id,
        "query": query,
        "retrieval_setting": {"top_k": top_k, "score_threshold": threshold},
        **extra,
    }


def _check_records(body: dict, *, top_k: int, threshold: float = 0.0) -> list[dict]:
    assert set(body) == {"records"}
    records = body["records"]
    assert isinstance(records, list) and len(records) <= top_k
    for record in records:
        assert set(record) == {"content", "score", "title", "metadata"}
        assert isinstance(record["content"], str) and record["content"]
        assert isinstance(record["score"], float) and threshold <= record["score"] <= 1.0
        assert isinstance(record["title"], str) and record["title"]
        assert isinstance(record["metadata"], dict)
        assert {"doc_id", "chunk_id"} <= set(record["metadata"])
    return records


# --------------------------------------------------------------------------- /retrieval


@pytest.mark.parametrize("knowledge_id", ["docs", "quick"])  # agentic and single-shot
def test_retrieval_contract(served, knowledge_id):
    with served.client() as client:
        response = client.post("/retrieval", json=_retrieval(knowledge_id, top_k=3))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    records = _check_records(response.json(), top_k=3)
    assert records, "the corpus answers this question"
    by_id = {d.id: d for d in served.docs}
    for record in records:
        document = by_id[record["metadata"]["doc_id"]]
        assert record["title"] == document.title
        assert record["content"] in document.text or document.text.startswith(
            record["content"][:40]
        )
        for key, value in document.metadata.items():
            assert record["metadata"][key] == value
    # Dify sorts by score and drops what is under its threshold: the scores alone keep
    # sift's ranking, each above 0.
    scores = [r["score"] for r in records]
    assert all(a > b > 0 for a, b in itertools.pairwise(scores)) and scores[-1] > 0


def test_score_threshold_drops_records(served):
    with served.client() as client:
        everything = client.post("/retrieval", json=_retrieval(top_k=6)).json()["records"]
        strict = client.post("/retrieval", json=_retrieval(top_k=6, threshold=0.9)).json()
    kept = _check_records(strict, top_k=6, threshold=0.9)
    assert [r["metadata"]["chunk_id"] for r in kept] == [
        r["metadata"]["chunk_id"] for r in everything if r["score"] >= 0.9
    ]
    assert len(kept) < len(everything)


def test_no_hits_is_an_empty_list(served):
    condition = {
        "logical_operator": "and",
        "conditions": [{"name": "lang", "comparison_operator": "is", "value": "klingon"}],
    }
    with served.client() as client:
        response = client.post("/retrieval", json=_retrieval(metadata_condition=condition))
    assert response.status_code == 200
    assert response.json() == {"records": []}


@pytest.mark.parametrize(
    ("condition", "check"),
    [
        (
            {"conditions": [{"name": "lang", "comparison_operator": "is", "value": "fr"}]},
            lambda m: m["lang"] == "fr",
        ),
        (
            {"conditions": [{"name": "year", "comparison_operator": "<", "value": "1850"}]},
            lambda m: m["year"] < 1850,
        ),
        (
            {"conditions": [{"name": "tags", "comparison_operator": "contains", "value": "paris"}]},
            lambda m: "paris" in m.get("tags", []),
        ),
        (
            {
                "conditions": [
                    {
                        "name": "category",
                        "comparison_operator": "in",
                        "value": ["biography", "food"],
                    }
                ]
            },
            lambda m: m["category"] in ("biography", "food"),
        ),
        (
            {
                "logical_operator": "or",
                "conditions": [
                    {"name": "lang", "comparison_operator": "is", "value": "fr"},
                    {"name": "year", "comparison_operator": "≥", "value": 1856},
                ],
            },
            lambda m: m["lang"] == "fr" or m["year"] >= 1856,
        ),
        (
            {
                "conditions": [
                    {"name": "published", "comparison_operator": "after", "value": "2021-06-01"}
                ]
            },
            lambda m: m.get("published") in ("2022-07-15T10:00:00Z", "2023-05-20"),
        ),
        (
            {
                "conditions": [
                    {
                        "name": "published",
                        "comparison_operator": "before",
                        "value": "2021-01-01T00:00:01+00:00",
                    }
                ]
            },
            lambda m: m.get("published") in ("2019-01-01", 1609459200),
        ),
        (
            {
                "logical_operator": "or",
                "conditions": [
                    {"name": "published", "comparison_operator": "after", "value": 1672531200},
                    {"name": "category", "comparison_operator": "is", "value": "food"},
                ],
            },
            lambda m: m.get("published") == "2023-05-20" or m["category"] == "food",
        ),
        (
            {
                "conditions": [
                    {"name": ["category", "lang"], "comparison_operator": "is", "value": "fr"}
                ]
            },
            lambda m: m["lang"] == "fr",
        ),
        (
            {"conditions": [{"name": "published", "comparison_operator": "empty"}]},
            lambda m: "published" not in m,
        ),
    ],
)
def test_metadata_condition_filters(served, condition, check):
    with served.client() as client:
        response = client.post(
            "/retrieval",
            json=_retrieval(
                query="Eiffel tower Paris Dijon mustard Louvre",
                top_k=6,
                metadata_condition=condition,
            ),
        )
    records = _check_records(response.json(), top_k=6)
    assert records, "every condition here matches at least one document"
    for record in records:
        assert check(record["metadata"]), record["metadata"]
    # And nothing the condition admits is missing from an exhaustive answer.
    matching = {d.id for d in served.docs if check(d.metadata)}
    assert {r["metadata"]["doc_id"] for r in records} <= matching


def test_bad_metadata_condition_is_a_clear_422(served):
    with served.client() as client:
        unknown = client.post(
            "/retrieval",
            json=_retrieval(
                metadata_condition={
                    "conditions": [
                        {"name": "lang", "comparison_operator": "resembles", "value": "x"}
                    ]
                }
            ),
        )
        not_a_date = client.post(
            "/retrieval",
            json=_retrieval(
                metadata_condition={
                    "conditions": [
                        {
                            "name": "published",
                            "comparison_operator": "before",
                            "value": "last tuesday",
                        }
                    ]
                }
            ),
        )
    assert unknown.status_code == 422 and "resembles" in unknown.json()["error_msg"]
    assert not_a_date.status_code == 422 and "ISO 8601" in not_a_date.json()["error_msg"]


def test_slow_search_concludes_at_the_deadline_not_5xx(served):
    # "hasty" serves the same store with a 1 ms deadline.
    with served.client() as client:
        response = client.post("/retrieval", json=_retrieval("hasty"))
    assert response.status_code == 200, response.text
    _check_records(response.json(), top_k=4)


# --------------------------------------------------------------------------- Dify replay


def test_dify_request_sequence(served):
    """What Dify sends, byte for byte in shape: its registration probe (a bare POST with the
    key), then retrievals as `ExternalDatasetService` builds them (`data=json.dumps(...)`),
    without metadata_condition, with one, and with null (older Dify versions)."""
    endpoint = served.url  # what the user types as "API Endpoint"
    auth = {"Authorization": f"Bearer {served.key_all}"}
    # Dify's own client gives up after 5 s; here the limit only bounds a broken run (the
    # service's latency is measured in benchmarks/http_load.py, not asserted).
    with httpx.Client(timeout=60) as dify:
        probe = dify.post(f"{endpoint}/retrieval", headers=auth)
        assert probe.status_code == 200 and probe.json() == {"records": []}
        typed = dify.post(
            f"{endpoint}/retrieval",
            content=b"",
            headers={"Content-Type": "application/json", **auth},
        )
        assert typed.status_code == 200 and typed.json() == {"records": []}
        rejected = dify.post(f"{endpoint}/retrieval", headers={"Authorization": "Bearer nope-nope"})
        assert rejected.status_code == 403 and rejected.json()["error_code"] == 1002

        headers = {"Content-Type": "application/json", **auth}
        plain = {
            "retrieval_setting": {"top_k": 3, "score_threshold": 0.0},
            "query": QUESTION,
            "knowledge_id": "docs",
        }
        first = dify.post(f"{endpoint}/retrieval", headers=headers, content=json.dumps(plain))
        assert first.status_code == 200
        assert _check_records(first.json(), top_k=3)

        filtered = {
            **plain,
            "metadata_condition": {
                "logical_operator": "and",
                "conditions": [
                    {"name": "lang", "comparison_operator": "is", "value": "en"},
                    {"name": "year", "comparison_operator": "≥", "value": 1800},
                ],
            },
        }
        second = dify.post(f"{endpoint}/retrieval", headers=headers, content=json.dumps(filtered))
        records = _check_records(second.json(), top_k=3)
        assert records and all(
            r["metadata"]["lang"] == "en" and r["metadata"]["year"] >= 1800 for r in records
        )

        nulled = {**plain, "metadata_condition": None}
        third = dify.post(f"{endpoint}/retrieval", headers=headers, content=json.dumps(nulled))
        assert third.json() == first.json()

        partial = {**plain, "metadata_condition": {"logical_operator": None, "conditions": None}}
        fourth = dify.post(f"{endpoint}/retrieval", headers=headers, content=json.dumps(partial))
        assert fourth.json() == first.json()

        missing = dify.post(
            f"{endpoint}/retrieval",
            headers=headers,
            content=json.dumps({**plain, "knowledge_id": "unknown-kb"}),
        )
        assert missing.status_code == 404 and missing.json()["error_code"] == 2001


# --------------------------------------------------------------------------- native


def test_native_search_returns_the_search_result(served):
    with served.client() as client:
        response = client.post(
            "/v1/search",
            json={
                "collection": "docs",
                "question": QUESTION,
                "top_k": 3,
                "filters": {"lang": "en"},
                "max_turns": 3,
                "budget": {
                    "threshold_tokens": 8192,
                    "rejection_tokens": 12288,
                    "budget_tokens": 16384,
                },
            },
        )
        single = client.post(
            "/v1/search",
            json={"collection": "docs", "question": QUESTION, "mode": "single_shot", "top_k": 2},
        )
    assert response.status_code == 200, response.text
    result = SearchResult.model_validate(response.json())
    assert result.mode == "agentic" and result.question == QUESTION
    assert 0 < len(result.evidence) <= 3
    assert all(e.metadata["lang"] == "en" for e in result.evidence)
    assert result.usage.turns >= 1 and result.trace
    shot = SearchResult.model_validate(single.json())
    assert shot.mode == "single_shot" and len(shot.evidence) <= 2


def test_native_search_rejects_bad_harness_settings(served):
    with served.client() as client:
        extra = client.post(
            "/v1/search", json={"collection": "docs", "question": "q", "surprise": 1}
        )
        filters = client.post(
            "/v1/search",
            json={
                "collection": "docs",
                "question": "q",
                "filters": {"conditions": [{"field": "x", "op": "sounds_like", "value": 1}]},
            },
        )
    assert extra.status_code == 422 and "surprise" in extra.json()["error_msg"]
    assert filters.status_code == 422 and "filters" in filters.json()["error_msg"]


def _frames(text: str) -> list[dict]:
    frames = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields: dict = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                fields.setdefault("comment", line)
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        frames.append(fields)
    return frames


def test_search_streams_progress_then_the_result(served):
    with (
        served.client() as client,
        client.stream(
            "POST",
            "/v1/search",
            json={"collection": "docs", "question": QUESTION, "top_k": 3},
            headers={"Accept": "text/event-stream"},
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    assert text.endswith("\n\n")
    frames = _frames(text)
    assert "comment" in frames[0]
    events = frames[1:]
    assert [int(f["id"]) for f in events] == list(range(1, len(events) + 1))
    names = [f["event"] for f in events]
    assert names[-1] == "sift.result"
    assert set(names[:-1]) <= set(EVENT_NAMES)
    assert {"sift.turn_started", "sift.tool_call", "sift.finished"} <= set(names)
    for frame in events[:-1]:
        assert json.loads(frame["data"])["event"] == frame["event"]
    result = SearchResult.model_validate_json(events[-1]["data"])
    assert 0 < len(result.evidence) <= 3
    assert served.service.admission.active == 0


def test_stream_errors_arrive_before_the_stream(served):
    with served.client() as client:
        response = client.post(
            "/v1/search",
            json={"collection": "absent", "question": "q"},
            headers={"Accept": "text/event-stream"},
        )
    assert response.status_code == 404 and response.json()["error_code"] == 2001


def test_a_stream_left_early_gives_its_slot_back(served):
    limiter = served.service.admission
    with (
        served.client() as client,
        client.stream(
            "POST",
            "/v1/search",
            json={"collection": "docs", "question": QUESTION},
            headers={"Accept": "text/event-stream"},
        ) as stream,
    ):
        first = next(stream.iter_text())
        assert first.startswith(": sift search stream")
    # The client hung up after the first bytes: the server must release the slot.
    deadline = time.monotonic() + 20
    while limiter.active and time.monotonic() < deadline:
        time.sleep(0.02)
    assert limiter.active == 0
    with served.client() as client:  # and the service still answers
        assert client.post("/retrieval", json=_retrieval()).status_code == 200


def test_concurrent_retrievals_answer_or_429(served):
    limiter = served.service.admission

    def ask(_: int) -> httpx.Response:
        with served.client() as client:
            return client.post("/retrieval", json=_retrieval(top_k=2))

    with ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(pool.map(ask, range(12)))
    for answer in answers:
        if answer.status_code == 429:
            assert answer.json()["error_code"] == 4290 and answer.headers["Retry-After"] == "2"
        else:
            assert answer.status_code == 200
            _check_records(answer.json(), top_k=2)
    assert any(a.status_code == 200 for a in answers)
    assert limiter.active == 0


def test_metrics_count_searches_and_tool_calls(served):
    with served.client() as client:
        client.post("/retrieval", json=_retrieval())
        text = client.get("/metrics").text
    assert 'sift_searches_total{collection="docs",mode="agentic"' in text
    assert 'sift_tool_calls_total{tool="search_corpus"}' in text


def test_iso_helpers_agree_with_python():
    from sift.integrations.http._conditions import to_instant

    moment = datetime(2021, 1, 1, tzinfo=UTC).timestamp()
    assert to_instant("2021-01-01") == moment
    assert to_instant("2021-01-01T00:00:00Z") == moment
    assert to_instant("2021-01-01T01:00:00+01:00") == moment
    assert to_instant(1609459200) == moment
    assert to_instant(1609459200000) == moment
    assert to_instant("1609459200") == moment
    assert to_instant("yesterday") is None and to_instant(True) is None


def test_native_search_deadline_stops_the_harness(served):
    with served.client() as client:
        response = client.post("/v1/search", json={"collection": "hasty", "question": QUESTION})
    assert response.status_code == 200
    result = SearchResult.model_validate(response.json())
    assert result.stopped_because == "deadline"


@pytest.mark.parametrize(
    ("filters", "problem"),
    [
        ({"": "x"}, "filters"),
        ({"lang": {"about": 1}}, "lang"),
        ({"lang": {}}, "filters"),
        ({"conditions": "lang"}, "conditions"),
        ({"conditions": [{"field": "lang", "op": "sounds_like", "value": "x"}]}, "op"),
        ({"lang": {"nested": {"deeper": 1}}}, "filters"),
    ],
)
def test_filters_outside_their_schema_are_422(served, filters, problem):
    with served.client() as client:
        response = client.post(
            "/v1/search", json={"collection": "docs", "question": "paris", "filters": filters}
        )
    assert response.status_code == 422, response.text
    assert problem in response.json()["error_msg"]


def test_short_and_full_filters_select_the_same_documents(served):
    with served.client() as client:
        short = client.post(
            "/v1/search",
            json={
                "collection": "docs",
                "question": "Eiffel tower Paris",
                "mode": "single_shot",
                "filters": {"year": {"gte": 1850, "lte": 1900}, "lang": ["en", "fr"]},
            },
        )
        full = client.post(
            "/v1/search",
            json={
                "collection": "docs",
                "question": "Eiffel tower Paris",
                "mode": "single_shot",
                "filters": {
                    "logic": "and",
                    "conditions": [
                        {"field": "year", "op": "gte", "value": 1850},
                        {"field": "year", "op": "lte", "value": 1900},
                        {"field": "lang", "op": "in", "value": ["en", "fr"]},
                    ],
                },
            },
        )
    ids = {e["doc_id"] for e in short.json()["evidence"]}
    assert ids == {e["doc_id"] for e in full.json()["evidence"]}
    assert ids and ids <= {"eiffel", "tour-fr", "mustard"}


def test_budget_tiers_end_in_order(served):
    """Tiers out of order are sorted; an unset tier moves to keep the order (the token
    usage events report the tiers the episode ran with)."""
    with (
        served.client() as client,
        client.stream(
            "POST",
            "/v1/search",
            json={
                "collection": "docs",
                "question": QUESTION,
                "budget": {"threshold_tokens": 20000, "rejection_tokens": 10000},
            },
            headers={"Accept": "text/event-stream"},
        ) as response,
    ):
        text = "".join(response.iter_text())
    usage = [json.loads(f["data"]) for f in _frames(text) if f.get("event") == "sift.token_usage"]
    assert usage
    assert (usage[0]["threshold"], usage[0]["rejection"], usage[0]["budget"]) == (
        10000,
        20000,
        32768,
    )


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"rejection_tokens": 50000}, (16384, 50000, 50000)),
        ({"budget_tokens": 2000}, (2000, 2000, 2000)),
        ({"threshold_tokens": 30000, "budget_tokens": 20000}, (20000, 24576, 30000)),
        (
            {"threshold_tokens": 8192, "rejection_tokens": 12288, "budget_tokens": 16384},
            (8192, 12288, 16384),
        ),
    ],
)
def test_tier_ordering(given, expected):
    from sift.integrations.http._native import BudgetTiers, _ordered_tiers

    tiers = _ordered_tiers(BudgetTiers(**given))
    assert (tiers["threshold_tokens"], tiers["rejection_tokens"], tiers["budget_tokens"]) == (
        expected
    )
