"""The service under load: work off the event loop, the admission queue, deadlines that
cover the whole request (warm-up included), the single-shot fallback, and readiness.

Slow work is made slow by a gate the test holds (a loopback Ollama whose replies wait for
it, a store whose searches wait for it), never by a sleep the machine must keep up with:
every assertion holds however loaded the machine is.
"""

from __future__ import annotations

import gc
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx
import pytest

from sift.types import SearchResult

from .conftest import keyed_app, keyed_client
from .conftest import wait_until as _wait_until

# A search left behind (its request gone, its deadline past) must not leave a coroutine
# that the garbage collector finalizes after its loop closed: reported as unraisable in
# whichever test runs next, so any such report fails here.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

KEY = "admission-key-0123"
QUESTION = "Where was the engineer whose company built the Eiffel Tower born?"


def _retrieval(knowledge_id: str = "docs", query: str = QUESTION) -> dict[str, Any]:
    return {
        "knowledge_id": knowledge_id,
        "query": query,
        "retrieval_setting": {"top_k": 3, "score_threshold": 0.0},
    }


def _metric(text: str, name: str) -> float:
    """The value of an unlabelled sample in Prometheus text."""
    for line in text.splitlines():
        sample, _, value = line.partition(" ")
        if sample == name:
            return float(value)
    raise AssertionError(f"{name} is not in the metrics")


def _app(store_root: Path, **overrides: Any) -> Any:
    return keyed_app(store_root, KEY, **overrides)


def _client(url: str) -> httpx.Client:
    return keyed_client(url, KEY)


def _hold_the_slot(url: str, pool: ThreadPoolExecutor, client: httpx.Client, gate: Any) -> Any:
    """Once the service is ready, a native search driven by the gated Ollama: it holds a
    working slot until the gate opens."""
    _wait_until(lambda: client.get("/readyz").status_code == 200, "ready")

    def search() -> httpx.Response:
        with _client(url) as own:
            return own.post(
                "/v1/search",
                json={"collection": "docs", "question": QUESTION, "policy": "ollama"},
            )

    holder = pool.submit(search)
    _wait_until(lambda: gate.waiting == 1, "the first search reached the model")
    return holder


@pytest.mark.parametrize("search_processes", [0, 1])
def test_requests_wait_in_the_queue_while_health_answers(
    store_root, start_server, gate, ollama, search_processes
):
    app = _app(
        store_root,
        max_concurrency=1,
        queue_size=4,
        queue_wait_s=60,
        search_processes=search_processes,
    )
    url = start_server(app)
    admission = app.state.sift.admission
    with ThreadPoolExecutor(4) as pool, _client(url) as client:
        holder = _hold_the_slot(url, pool, client, gate)
        waiter = pool.submit(lambda: _client(url).post("/retrieval", json=_retrieval()))
        _wait_until(lambda: admission.queued == 1, "the retrieval waits in the queue")
        # Every slot is busy and a request is queued: the event loop still answers.
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json()["ready"] is True
        metrics = client.get("/metrics").text
        assert _metric(metrics, "sift_queue_length") == 1
        assert _metric(metrics, "sift_requests_in_flight") == 1
        assert not waiter.done()
        gate.open()
        answered = waiter.result(timeout=60)
        held = holder.result(timeout=60)
        metrics = client.get("/metrics").text
    # Queued, not refused: both answered.
    assert answered.status_code == 200, answered.text
    assert answered.json()["records"]
    assert held.status_code == 200, held.text
    assert SearchResult.model_validate(held.json()).stopped_because == "final"
    assert 'sift_queue_wait_seconds_count{outcome="admitted"}' in metrics
    assert _metric(metrics, "sift_queue_length") == 0
    _wait_until(lambda: admission.active == 0, "every slot is given back")


def test_full_queue_and_expired_wait_are_429_with_retry_after(
    store_root, start_server, gate, ollama
):
    app = _app(store_root, max_concurrency=1, queue_size=1, queue_wait_s=0.5)
    url = start_server(app)
    admission = app.state.sift.admission
    with ThreadPoolExecutor(4) as pool, _client(url) as client:
        holder = _hold_the_slot(url, pool, client, gate)
        queued = pool.submit(
            lambda: _client(url).post(
                "/v1/collections/docs/documents", json={"documents": [{"id": "q", "text": "q"}]}
            )
        )
        _wait_until(lambda: admission.queued == 1 or queued.done(), "the ingest queues")
        full = client.post("/retrieval", json=_retrieval())
        expired = queued.result(timeout=60)
        gate.open()
        assert holder.result(timeout=60).status_code == 200
        metrics = client.get("/metrics").text
    assert full.status_code == 429 and full.json()["error_code"] == 4290
    assert "queue is full" in full.json()["error_msg"]
    assert full.headers["Retry-After"] == "3"
    assert expired.status_code == 429 and "no slot within" in expired.json()["error_msg"]
    assert expired.headers["Retry-After"] == "3"
    assert 'sift_admission_rejected_total{reason="queue_full"} 1.0' in metrics
    assert 'sift_admission_rejected_total{reason="wait_timeout"} 1.0' in metrics
    assert 'sift_queue_wait_seconds_count{outcome="timed_out"} 1.0' in metrics


@pytest.mark.parametrize("search_processes", [0, 1])
def test_past_the_deadline_the_answer_is_single_shot_flagged(
    store_root, start_server, gate, ollama, caplog, search_processes
):
    # With a search process, its log line reaches the service's log too.
    app = _app(store_root, deadline_grace_s=30, search_processes=search_processes)
    url = start_server(app)
    caplog.set_level(logging.WARNING, logger="sift.http")
    with _client(url) as client:
        _wait_until(lambda: client.get("/readyz").status_code == 200, "ready")
        # The model never answers in time: the harness stops at the deadline.
        response = client.post(
            "/v1/search",
            json={
                "collection": "docs",
                "question": QUESTION,
                "policy": "ollama",
                "deadline_s": 0.3,
                "top_k": 3,
            },
        )
        metrics = client.get("/metrics").text
    assert response.status_code == 200, response.text
    result = SearchResult.model_validate(response.json())
    assert result.stopped_because == "deadline"
    assert {"degraded", "deadline_fallback"} <= set(result.flags)
    assert response.headers["X-Sift-Degraded"] == "deadline"
    # Not an empty "nothing found": the single-shot result for the question.
    assert result.evidence and result.evidence[0].found_by[0].turn == 0
    assert {e.doc_id for e in result.evidence} & {"gustave", "eiffel", "dijon"}
    assert 'sift_degraded_answers_total{cause="deadline",collection="docs"} 1.0' in metrics
    assert any("single-shot result (degraded)" in r.getMessage() for r in caplog.records)


def test_a_stalled_store_is_503_not_an_empty_answer(store_root, start_server, gate):
    app = _app(store_root, deadline_grace_s=0.2, retrieval_deadline_s=0.2)
    url = start_server(app)
    svc = app.state.sift

    class Stalled:
        """The real store, whose searches hang until the gate opens."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def search(self, *args: Any, **kwargs: Any) -> Any:
            gate.wait()
            return self.inner.search(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    with _client(url) as client:
        _wait_until(lambda: client.get("/readyz").status_code == 200, "ready")
        collection = svc.collections.get("docs")
        with svc.collections.using(collection):
            pass  # opened, then wrapped: every later search of it stalls
        svc.collections._open["docs"].corpus = Stalled(svc.collections._open["docs"].corpus)
        response = client.post("/retrieval", json=_retrieval())
        assert response.status_code == 503, response.text
        assert response.json()["error_code"] == 5040
        assert response.headers["Retry-After"] == "3"
        # The worker is still stuck: its slot stays taken until it really ends.
        assert svc.admission.active == 1
        gate.open()
        _wait_until(lambda: svc.admission.active == 0, "the slot comes back")
        metrics = client.get("/metrics").text
    assert 'sift_degraded_answers_total{cause="overrun",collection="docs"} 1.0' in metrics


def test_readiness_waits_for_warm_up_and_requests_wait_within_their_deadline(
    store_root, start_server, gate, ollama
):
    # Warming the Ollama policy waits for the gated model: start-up is slow at will.
    # A short deadline, which the early request waits out; a long grace, so that the
    # later request is answered (by the single-shot fallback, if the episode overruns).
    app = _app(
        store_root,
        warm_policies=["heuristic", "ollama"],
        retrieval_deadline_s=0.3,
        deadline_grace_s=30,
    )
    url = start_server(app, ready=False)
    with _client(url) as client:
        live = client.get("/healthz")
        assert live.status_code == 200 and live.json()["ready"] is False
        warming = client.get("/readyz")
        assert warming.status_code == 503 and warming.json()["status"] == "warming"
        early = client.post("/retrieval", json=_retrieval())
        assert early.status_code == 503 and early.json()["error_code"] == 5031
        assert early.headers["Retry-After"] == "3"
        assert "warming up" in early.json()["error_msg"]
        gate.open()
        _wait_until(lambda: client.get("/readyz").status_code == 200, "ready")
        ready = client.get("/readyz").json()
        answered = client.post("/retrieval", json=_retrieval())
    assert ready == {"status": "ready", "collections": {"docs": "ready"}}
    assert answered.status_code == 200 and answered.json()["records"]
    assert ollama.chat_requests(), "the warm-up ran an episode with the Ollama policy"


def test_a_broken_collection_does_not_keep_the_service_unready(store_root, start_server):
    (store_root / "broken").mkdir()
    (store_root / "broken" / "sift.db").write_bytes(b"this is not a database" * 100)
    app = _app(store_root)
    url = start_server(app)
    with _client(url) as client:
        _wait_until(lambda: client.get("/readyz").status_code == 200, "ready")
        report = client.get("/readyz").json()["collections"]
        assert report["docs"] == "ready"
        assert report["broken"] != "ready" and report["broken"]
        assert client.post("/retrieval", json=_retrieval()).status_code == 200


def test_client_leaving_a_queued_request_frees_its_place(store_root, start_server, gate, ollama):
    app = _app(store_root, max_concurrency=1, queue_size=2, queue_wait_s=60)
    url = start_server(app)
    admission = app.state.sift.admission
    with ThreadPoolExecutor(4) as pool, _client(url) as client:
        holder = _hold_the_slot(url, pool, client, gate)

        def impatient() -> None:
            with (
                httpx.Client(
                    base_url=url, headers={"Authorization": f"Bearer {KEY}"}, timeout=0.5
                ) as quick,
                pytest.raises(httpx.ReadTimeout),
            ):
                quick.post("/retrieval", json=_retrieval())

        pool.submit(impatient).result(timeout=60)
        _wait_until(lambda: admission.queued == 0, "the abandoned place is freed")
        gate.open()
        assert holder.result(timeout=60).status_code == 200
    _wait_until(lambda: admission.active == 0, "every slot is given back")


def test_metrics_name_queue_and_readiness(store_root, start_server):
    app = _app(store_root)
    url = start_server(app)
    with _client(url) as client:
        _wait_until(lambda: client.get("/readyz").status_code == 200, "ready")
        text = client.get("/metrics").text
    assert _metric(text, "sift_ready") == 1
    for name in ("sift_queue_length", "sift_requests_in_flight"):
        assert f"# TYPE {name} gauge" in text
    assert "# TYPE sift_queue_wait_seconds histogram" in text


@pytest.mark.parametrize("freeze", [True, False])
def test_a_warm_service_freezes_its_heap(store_root: Path, start_server: Any, freeze: bool) -> None:
    # What was alive once the service was warm is out of the collector's reach, so that
    # a full collection no longer stalls the event loop; freeze_heap=False leaves it.
    gc.unfreeze()
    try:
        url = start_server(_app(store_root, freeze_heap=freeze))
        with _client(url) as client:
            _wait_until(lambda: client.get("/readyz").status_code == 200, "ready")
            frozen = gc.get_freeze_count()
            assert (frozen > 10_000) if freeze else (frozen == 0)
            assert client.post("/retrieval", json=_retrieval()).status_code == 200
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("search_processes", [0, 1])
def test_requests_need_none_of_anyios_worker_threads(
    store_root: Path, start_server: Any, search_processes: int
) -> None:
    # A plain-function dependency runs on anyio's worker threads (40 at most): under a
    # burst every request queued for them, /healthz too (p99 199 ms at 200 clients,
    # issue 42). With every one of those threads taken, health, a refused key and
    # searches (agentic and single-shot) still answer: none of them waits for one.
    app = _app(store_root, max_concurrency=1, queue_size=0, search_processes=search_processes)
    held: list[object] = []

    async def take_every_thread() -> dict[str, int]:
        limiter = anyio.to_thread.current_default_thread_limiter()
        while limiter.available_tokens:
            borrower = object()
            limiter.acquire_on_behalf_of_nowait(borrower)
            held.append(borrower)
        return {"taken": len(held)}

    async def give_them_back() -> dict[str, int]:
        limiter = anyio.to_thread.current_default_thread_limiter()
        for borrower in held:
            limiter.release_on_behalf_of(borrower)
        return {"given_back": len(held)}

    app.add_api_route("/test/take-threads", take_every_thread, methods=["POST"])
    app.add_api_route("/test/give-threads", give_them_back, methods=["POST"])
    url = start_server(app)
    with _client(url) as client, keyed_client(url, "not-the-key-0123") as stranger:
        _wait_until(lambda: client.get("/readyz").status_code == 200, "ready")
        assert client.post("/test/take-threads").json()["taken"] > 0
        try:
            health = client.get("/healthz")
            refused = stranger.post("/retrieval", json=_retrieval())
            agentic = client.post("/retrieval", json=_retrieval())
            quick = client.post(
                "/v1/search",
                json={"collection": "docs", "question": QUESTION, "mode": "single_shot"},
            )
        finally:
            client.post("/test/give-threads")
    assert health.status_code == 200
    assert refused.status_code == 403
    assert agentic.status_code == 200 and agentic.json()["records"]
    assert quick.status_code == 200 and quick.json()["evidence"]


def test_a_search_that_finds_the_queue_full_is_refused_before_its_body_is_read(
    store_root: Path, start_server: Any, gate: Any, ollama: Any
) -> None:
    # The cheapest answer to the request the service cannot take: no routing, no body
    # parsed (a body the service would refuse as invalid gets the same 429), counted
    # under its route. A bad key and Dify's registration probe (no body) still get
    # their own answers.
    app = _app(store_root, max_concurrency=1, queue_size=0)
    url = start_server(app)
    with (
        ThreadPoolExecutor(2) as pool,
        _client(url) as client,
        keyed_client(url, "not-the-key-0123") as stranger,
    ):
        holder = _hold_the_slot(url, pool, client, gate)
        try:
            full = client.post("/retrieval", json=_retrieval())
            unparsed = client.post("/retrieval", json={"knowledge_id": 5})
            native = client.post("/v1/search", json={"collection": "docs", "question": QUESTION})
            refused = stranger.post("/retrieval", json=_retrieval())
            probe = client.post("/retrieval")
        finally:
            gate.open()
        assert holder.result(timeout=60).status_code == 200
        metrics = client.get("/metrics").text
    for answer in (full, unparsed, native):
        assert answer.status_code == 429, answer.text
        assert answer.json()["error_code"] == 4290
        assert "queue is full" in answer.json()["error_msg"]
        assert answer.headers["Retry-After"] == "3"
    assert refused.status_code == 403
    assert probe.status_code == 200 and probe.json() == {"records": []}
    assert 'sift_admission_rejected_total{reason="queue_full"} 3.0' in metrics
    assert 'sift_http_requests_total{method="POST",route="/retrieval",status="429"} 2.0' in metrics
    assert 'sift_http_requests_total{method="POST",route="/v1/search",status="429"} 1.0' in metrics
