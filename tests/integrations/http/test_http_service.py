"""Auth, limits, errors, ingest, delete, stats, health and metrics over a real server."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest


def _error(response: httpx.Response, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code
    assert isinstance(body["error_msg"], str) and body["error_msg"]
    return body["error_msg"]


# --------------------------------------------------------------------------- ops


def test_health_needs_no_key(served):
    with served.client(key=None) as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_openapi_documents_every_endpoint(served):
    with served.client(key=None) as client:
        document = client.get("/openapi.json").json()
    assert {
        "/retrieval",
        "/v1/search",
        "/v1/collections/{name}",
        "/v1/collections/{name}/documents",
        "/v1/collections/{name}/documents/{doc_id}",
        "/healthz",
        "/metrics",
    } <= set(document["paths"])
    assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_unknown_route_is_a_json_error(served):
    with served.client() as client:
        _error(client.get("/nowhere"), 404, 4040)
        _error(client.get("/retrieval"), 405, 4050)


# --------------------------------------------------------------------------- auth


@pytest.mark.parametrize(
    "header", [None, "", "Bearer", "Token abc", "Basic abc", "key-all-0123456789", "Bearer a b"]
)
def test_missing_or_malformed_header_is_1001(served, header):
    headers = {} if header is None else {"Authorization": header}
    with httpx.Client(base_url=served.url, headers=headers) as client:
        response = client.post("/retrieval")
    # No header at all is HTTP's 401; a malformed one Dify's documented 403.
    message = _error(response, 401 if header is None else 403, 1001)
    assert "Bearer" in message
    if header is None:
        assert response.headers["WWW-Authenticate"] == "Bearer"


def test_auth_is_checked_before_the_body(served):
    with served.client(key=None) as client:
        _error(client.post("/retrieval", json={"unexpected": True}), 401, 1001)
        _error(client.post("/v1/search", json={}), 401, 1001)


def test_wrong_key_is_1002(served):
    with served.client(key="not-the-key-at-all") as client:
        _error(client.post("/retrieval"), 403, 1002)
        _error(client.get("/v1/collections/docs"), 403, 1002)


def test_key_limited_to_its_collections(served):
    with served.client(key=served.key_docs) as client:
        assert client.get("/v1/collections/docs").status_code == 200
        message = _error(client.get("/v1/collections/quick"), 403, 1002)
        assert "quick" in message
        listed = client.get("/v1/collections").json()["collections"]
    assert "docs" in listed and "quick" not in listed
    with served.client() as client:
        assert {"docs", "quick", "hasty"} <= set(
            client.get("/v1/collections").json()["collections"]
        )


def test_bearer_scheme_is_case_insensitive(served):
    with httpx.Client(
        base_url=served.url, headers={"Authorization": f"bearer {served.key_all}"}
    ) as client:
        assert client.post("/retrieval").json() == {"records": []}


# --------------------------------------------------------------------------- limits


def test_body_over_limit_is_413_with_or_without_length(served):
    big = {
        "knowledge_id": "docs",
        "query": "x" * (70 * 1024),
        "retrieval_setting": {"top_k": 1, "score_threshold": 0},
    }
    with served.client() as client:
        _error(client.post("/retrieval", json=big), 413, 4130)

        def chunks():  # no Content-Length: a chunked upload
            payload = json.dumps(big).encode()
            for start in range(0, len(payload), 8192):
                yield payload[start : start + 8192]

        _error(
            client.post(
                "/retrieval", content=chunks(), headers={"Content-Type": "application/json"}
            ),
            413,
            4130,
        )


def test_query_length_and_top_k_are_bounded(served):
    with served.client() as client:
        long_query = {
            "knowledge_id": "docs",
            "query": "q" * 501,
            "retrieval_setting": {"top_k": 3, "score_threshold": 0},
        }
        assert "500" in _error(client.post("/retrieval", json=long_query), 422, 4000)
        many = {
            "knowledge_id": "docs",
            "query": "paris",
            "retrieval_setting": {"top_k": 51, "score_threshold": 0},
        }
        assert "50" in _error(client.post("/retrieval", json=many), 422, 4000)
        search = {"collection": "docs", "question": "paris", "top_k": 51}
        _error(client.post("/v1/search", json=search), 422, 4000)


def test_validation_errors_name_the_field(served):
    with served.client() as client:
        bad = {"knowledge_id": "docs", "query": "paris", "retrieval_setting": {"top_k": "many"}}
        response = client.post("/retrieval", json=bad)
        message = _error(response, 422, 4000)
    assert "retrieval_setting.top_k" in message
    assert response.json()["details"][0]["field"] == "retrieval_setting.top_k"


def test_concurrent_cheap_requests_are_not_limited(served):
    limiter = served.service.admission

    def stats(_: int) -> httpx.Response:
        with served.client() as client:
            return client.get("/v1/collections/docs")

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(stats, range(16)))
    assert all(a.status_code == 200 for a in answers)
    assert {a.json()["stats"]["documents"] for a in answers} == {len(served.docs)}
    assert limiter.active == 0


# --------------------------------------------------------------------------- ingest


def test_ingest_is_idempotent_and_reports(served):
    documents = [
        {
            "id": f"n{i}",
            "title": f"Note {i}",
            "text": f"note number {i} about rivers",
            "metadata": {"n": i},
        }
        for i in range(3)
    ]
    with served.client(key=served.key_docs) as client:
        first = client.post("/v1/collections/ingest/documents", json={"documents": documents})
        assert first.status_code == 200, first.text
        assert first.json()["added"] == 3 and first.json()["failed"] == []
        again = client.post("/v1/collections/ingest/documents", json={"documents": documents})
        assert again.json()["unchanged"] == 3 and again.json()["added"] == 0
        documents[0]["text"] = "note number 0, revised, about lakes"
        changed = client.post("/v1/collections/ingest/documents", json={"documents": documents})
        assert changed.json()["updated"] == 1 and changed.json()["unchanged"] == 2
        stats = client.get("/v1/collections/ingest").json()
    assert stats["stats"]["documents"] == 3
    assert stats["stats"]["location"] == "ingest"  # no server path leaks


def test_bad_batch_stores_nothing(served):
    with served.client() as client:
        before = client.get("/v1/collections/docs").json()["stats"]["documents"]
        bad = {
            "documents": [
                {"id": "fine-1", "text": "ok"},
                {"id": "bad", "text": "x", "metadata": {"doc_id": "reserved"}},
            ]
        }
        message = _error(client.post("/v1/collections/docs/documents", json=bad), 422, 4000)
        assert "reserved" in message
        too_many = {"documents": [{"id": f"d{i}", "text": "t"} for i in range(21)]}
        assert "20" in _error(
            client.post("/v1/collections/docs/documents", json=too_many), 422, 4000
        )
        after = client.get("/v1/collections/docs").json()["stats"]["documents"]
    assert after == before


def test_the_same_id_twice_in_a_batch_is_written_in_order(served):
    twice = {"documents": [{"id": "dup", "text": "first text"}, {"id": "dup", "text": "second"}]}
    with served.client() as client:
        response = client.post("/v1/collections/twice/documents", json=twice)
        assert response.status_code == 200, response.text
        assert response.json()["added"] == 1 and response.json()["updated"] == 1
        assert client.get("/v1/collections/twice").json()["stats"]["documents"] == 1
        found = client.post(
            "/v1/search",
            json={"collection": "twice", "question": "second", "mode": "single_shot"},
        )
    assert [e["text"] for e in found.json()["evidence"]] == ["second"]


def test_delete_document(served):
    with served.client() as client:
        client.post(
            "/v1/collections/scratch/documents",
            json={
                "documents": [
                    {"id": "a/b c", "text": "to be removed"},
                    {"id": "keep", "text": "to be kept"},
                ]
            },
        )
        response = client.delete("/v1/collections/scratch/documents/a%2Fb%20c")
        assert response.status_code == 200, response.text
        assert response.json() == {"deleted": 1}
        assert "not in collection" in _error(
            client.delete("/v1/collections/scratch/documents/a%2Fb%20c"), 404, 4004
        )
        assert client.get("/v1/collections/scratch").json()["stats"]["documents"] == 1


def test_unknown_collection_is_2001_everywhere(served):
    with served.client() as client:
        _error(client.get("/v1/collections/absent"), 404, 2001)
        _error(client.delete("/v1/collections/absent/documents/x"), 404, 2001)
        _error(client.post("/v1/search", json={"collection": "absent", "question": "q"}), 404, 2001)
        body = {
            "knowledge_id": "absent",
            "query": "q",
            "retrieval_setting": {"top_k": 1, "score_threshold": 0},
        }
        _error(client.post("/retrieval", json=body), 404, 2001)
        assert not (served.root / "absent").exists()


def test_collection_names_cannot_escape_the_root(served):
    with served.client() as client:
        for name in ("..", ".hidden", "a%2F..%2Fb"):
            response = client.post(
                f"/v1/collections/{name}/documents", json={"documents": [{"id": "x", "text": "x"}]}
            )
            assert response.status_code in (404, 422), response.text
    assert not (served.root.parent / "b").exists()


# --------------------------------------------------------------------------- metrics


def test_metrics_are_prometheus_text(served):
    with served.client() as client:
        client.get("/v1/collections/docs")
        client.get("/v1/collections/absent")
        client.post("/retrieval", content=b"x" * (65 * 1024))
        text = client.get("/metrics").text
    assert 'sift_http_errors_total{error_code="4130",route="unmatched"}' in text
    assert (
        'sift_http_requests_total{method="GET",route="/v1/collections/{name}",status="200"}' in text
    )
    assert 'sift_http_errors_total{error_code="2001",route="/v1/collections/{name}"}' in text
    assert "sift_http_request_duration_seconds_bucket" in text


def test_partly_failed_batch_is_207_and_stores_only_whole_documents(
    start_server, tmp_path, monkeypatch
):
    from sift.integrations.http import ServerSettings, create_app
    from sift.integrations.ollama.testing import FakeOllama, Fault

    with FakeOllama(models=("embedder",)) as ollama:
        monkeypatch.setenv("OLLAMA_HOST", ollama.host)
        url = start_server(
            create_app(
                ServerSettings(
                    store=str(tmp_path),
                    embedder="ollama:embedder",
                    api_keys="partial-key-123=partial",
                )
            )
        )
        with httpx.Client(
            base_url=url, headers={"Authorization": "Bearer partial-key-123"}, timeout=60
        ) as client:
            first = {"documents": [{"id": "first", "text": "makes the collection"}]}
            assert client.post("/v1/collections/partial/documents", json=first).status_code == 200
            # The batch's embedding fails (with the embedder's two retries), then the first
            # document's alone: the second document is stored.
            ollama.embed_faults.extend([Fault(status=500, error="boom")] * 6)
            response = client.post(
                "/v1/collections/partial/documents",
                json={
                    "documents": [
                        {"id": "unlucky", "text": "a document the embedder fails on"},
                        {"id": "whole", "text": "a complete document"},
                    ]
                },
            )
            assert response.status_code == 207, response.text
            report = response.json()
            assert report["added"] == 1 and [f["doc_id"] for f in report["failed"]] == ["unlucky"]
            assert client.get("/v1/collections/partial").json()["stats"]["documents"] == 2
            assert client.delete("/v1/collections/partial/documents/unlucky").status_code == 404


def test_batch_where_every_document_failed_is_422(served):
    with served.client() as client:
        blank = client.post(
            "/v1/collections/nothing-stored/documents",
            json={"documents": [{"id": "fine", "text": "ok"}, {"id": "blank", "text": "  "}]},
        )
        message = _error(blank, 422, 4000)
        assert "documents[1] ('blank') has no text" in message
        assert client.get("/v1/collections/nothing-stored").status_code == 404
