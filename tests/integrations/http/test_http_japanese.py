"""Japanese through the real HTTP app: Dify's /retrieval and the native /v1/search find
the gold JSQuAD paragraph in a mixed Japanese and English collection."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import httpx
import pytest

from sift.integrations.http import ServerSettings, create_app
from sift.integrations.stores import open_store
from sift.types import SearchResult

from .conftest import keyed_client

KEY = "key-japanese-0123456789"
QUESTION = "日本で梅雨がないのは北海道とどこか。"


@pytest.fixture
def japanese_url(tmp_path: Path, japanese_sample, start_server) -> str:
    # The default (English, static) embedder: what a user who just indexes Japanese gets.
    corpus = open_store(tmp_path / "ja", embedder="static")
    try:
        assert not corpus.upsert(japanese_sample.documents).failed
    finally:
        corpus.close()
    collections = tmp_path / "collections.json"
    collections.write_text(
        json.dumps(
            {
                "collections": {
                    "ja": {"mode": "agentic", "deadline_s": 300.0},
                    "ja-quick": {"location": str(tmp_path / "ja"), "mode": "single_shot"},
                }
            }
        )
    )
    settings = ServerSettings(
        store=str(tmp_path), api_keys=KEY, collections_file=collections, retrieval_deadline_s=300.0
    )
    return start_server(create_app(settings))


def client(url: str) -> httpx.Client:
    return keyed_client(url, KEY)


@pytest.mark.parametrize(
    ("knowledge_id", "ascii_json"),
    # Dify's requests json.dumps the body (\\u escapes); other clients send UTF-8.
    [("ja", True), ("ja-quick", False)],
)
def test_dify_retrieval_finds_the_japanese_paragraph(
    japanese_url, japanese_sample, knowledge_id, ascii_json
):
    gold = japanese_sample.gold(QUESTION)
    body = {
        "knowledge_id": knowledge_id,
        "query": QUESTION,
        "retrieval_setting": {"top_k": 5, "score_threshold": 0.0},
    }
    with client(japanese_url) as http:
        response = http.post(
            "/retrieval",
            content=json.dumps(body, ensure_ascii=ascii_json),
            headers={"Content-Type": "application/json"},
        )
    assert response.status_code == 200, response.text
    records = response.json()["records"]
    assert gold in [r["metadata"]["doc_id"] for r in records]
    record = next(r for r in records if r["metadata"]["doc_id"] == gold)
    assert record["title"] == "梅雨" and "小笠原諸島" in record["content"]
    # Scores say sift's ranking by themselves (Dify sorts by them): strictly decreasing,
    # every one above 0.
    scores = [r["score"] for r in records]
    assert all(a > b for a, b in itertools.pairwise(scores)) and scores[-1] > 0


def test_native_search_answers_japanese_with_latin_names(japanese_url):
    with client(japanese_url) as http:
        agentic = http.post(
            "/v1/search", json={"collection": "ja", "question": QUESTION, "top_k": 5}
        )
        mixed = http.post(
            "/v1/search",
            json={
                "collection": "ja",
                "question": "iPodを製作している企業",
                "mode": "single_shot",
                "top_k": 3,
            },
        )
        syntax = http.post(
            "/v1/search",
            json={"collection": "ja", "question": "梅雨 AND (北海道) -沖縄 ＋＂NOT＂", "top_k": 3},
        )
    assert agentic.status_code == 200, agentic.text
    result = SearchResult.model_validate(agentic.json())
    assert result.question == QUESTION and result.error is None
    assert "梅雨" in [e.title for e in result.evidence]
    assert any("小笠原諸島" in e.text for e in result.evidence)
    assert mixed.status_code == 200, mixed.text
    assert SearchResult.model_validate(mixed.json()).evidence[0].doc_id == "ja-apple"
    assert syntax.status_code == 200, syntax.text
    assert SearchResult.model_validate(syntax.json()).evidence
