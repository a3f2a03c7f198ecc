"""A question with no word in it (issue 43) is a 422 with one clear message on every search
endpoint (Dify's /retrieval, the native /v1/search that n8n calls, as JSON and as an event
stream), in Dify's error shape, never a list of unrelated passages."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import KEY_ALL, keyed_app, keyed_client

WORDLESS = ["?!?...", "。、！？", "「」…"]  # English and Japanese punctuation / 英語と日本語の記号


@pytest.fixture
def url(store_root: Path, start_server) -> str:
    return start_server(keyed_app(store_root, KEY_ALL, search_processes=0))


def _refusal(response, field: str, question: str) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error_code"] == 4000
    assert body["error_msg"] == (
        f"{field} {question!r} has no word to search for (only punctuation, symbols or "
        "spaces); ask with at least one word"
    )
    assert "records" not in body and "evidence" not in body


@pytest.mark.parametrize("question", WORDLESS)
def test_every_search_endpoint_refuses_a_question_without_a_word(url: str, question: str) -> None:
    with keyed_client(url, KEY_ALL) as client:
        dify = client.post(
            "/retrieval",
            json={
                "knowledge_id": "docs",
                "query": question,
                "retrieval_setting": {"top_k": 5, "score_threshold": 0.0},
            },
        )
        _refusal(dify, "query", question)
        for mode in ("agentic", "single_shot"):
            native = client.post(
                "/v1/search", json={"collection": "docs", "question": question, "mode": mode}
            )
            _refusal(native, "question", question)
        streamed = client.post(
            "/v1/search",
            json={"collection": "docs", "question": question},
            headers={"Accept": "text/event-stream"},
        )
        _refusal(streamed, "question", question)


def test_a_word_in_either_language_is_searched(url: str) -> None:
    with keyed_client(url, KEY_ALL) as client:
        for question in ("Eiffel?!", "エッフェル塔？"):
            answer = client.post(
                "/retrieval",
                json={
                    "knowledge_id": "docs",
                    "query": question,
                    "retrieval_setting": {"top_k": 3, "score_threshold": 0.0},
                },
            )
            assert answer.status_code == 200, answer.text
        found = client.post("/v1/search", json={"collection": "docs", "question": "Eiffel?"})
        assert found.status_code == 200 and found.json()["evidence"]
