"""Dify's External Knowledge API for a question the collection does not answer: the
records keep Dify's fixed shape (the nearest text), and the answer says it in the header
`X-Sift-Not-Found` (the names that occur nowhere, or `*`) and in each record's metadata
(`sift_not_found`). English beside Japanese, through the real app on a loopback port."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sift.integrations.http._dify import not_found_header
from sift.integrations.stores import open_store
from sift.types import Document

from .conftest import keyed_app, keyed_client

KEY = "key-not-found-0123456789"

DOCS = [
    Document(
        id="tracer/options",
        title="Tracer options",
        text="--max-callers=<number> [default: 12]\nSpecifies the maximum number of entries "
        "shown in the stack traces that identify program locations. The maximum value is 500.",
        metadata={"lang": "en"},
    ),
    Document(
        id="tracer/output",
        title="Tracer output",
        text="The tracer writes one stack trace per line to its log file. Each stack trace "
        "lists the callers of a function, most recent first.",
        metadata={"lang": "en"},
    ),
    Document(
        id="backup/logs",
        title="Backup daemon logs",
        text="The backup daemon rotates its log files every week. To rotate the log files at "
        "once, send it SIGHUP.",
        metadata={"lang": "en"},
    ),
    Document(
        id="tracer-ja/options",
        title="トレーサのオプション",
        text="--max-callers=<数値> [既定値: 12]\nプログラムの位置を示すスタックトレースに表示する"
        "項目の最大数を指定します。最大値は500です。",
        metadata={"lang": "ja"},
    ),
    Document(
        id="backup-ja/logs",
        title="バックアップデーモンのログ",
        text="バックアップデーモンはログファイルを毎週ローテートします。"
        "すぐにローテートするにはSIGHUPを送ります。",
        metadata={"lang": "ja"},
    ),
]


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("not-found")
    corpus = open_store(root / "manual", embedder="hash")
    try:
        corpus.upsert(DOCS)
    finally:
        corpus.close()
    collections = root.parent / f"{root.name}.json"
    # A far deadline: past it the answer would be single-shot's, which no planner flags.
    collections.write_text(
        json.dumps({"collections": {"manual": {"mode": "agentic", "deadline_s": 300.0}}})
    )
    return root


@pytest.fixture
def url(store_root: Path, start_server) -> str:
    collections = store_root.parent / f"{store_root.name}.json"
    return start_server(keyed_app(store_root, KEY, collections_file=collections))


def _retrieve(url: str, query: str) -> tuple[dict[str, str], list[dict]]:
    with keyed_client(url, KEY) as client:
        response = client.post(
            "/retrieval",
            json={
                "knowledge_id": "manual",
                "query": query,
                "retrieval_setting": {"top_k": 3, "score_threshold": 0.0},
            },
        )
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"records"}  # Dify's shape, nothing added
    return dict(response.headers), response.json()["records"]


@pytest.mark.parametrize(
    ("query", "header", "metadata"),
    [
        ("What does --frobnicate-depth control?", "--frobnicate-depth", ["--frobnicate-depth"]),
        ("--frobnicate-depth は何を制御しますか？", "--frobnicate-depth", ["--frobnicate-depth"]),
        ("How do I bake a sourdough loaf with rye flour?", "*", True),
        ("ライ麦粉でサワードウを焼くには？", "*", True),
    ],
)
def test_the_answer_says_the_records_are_only_the_nearest_text(
    url: str, query: str, header: str, metadata: object
) -> None:
    headers, records = _retrieve(url, query)
    assert headers["x-sift-not-found"] == header
    assert records  # still the nearest text, in Dify's record shape
    for record in records:
        assert set(record) == {"content", "score", "title", "metadata"}
        assert record["metadata"]["sift_not_found"] == metadata
        assert record["metadata"]["doc_id"] and record["metadata"]["chunk_id"]


@pytest.mark.parametrize(
    "query", ["How do I rotate the log files of the backup daemon?", "--max-callers の既定値は？"]
)
def test_an_answered_question_carries_neither(url: str, query: str) -> None:
    headers, records = _retrieve(url, query)
    assert "x-sift-not-found" not in headers
    assert records and all("sift_not_found" not in r["metadata"] for r in records)


def test_the_header_value_is_ascii_whatever_the_names() -> None:
    assert not_found_header([]) == "*"
    assert not_found_header(["--frobnicate-depth", "FOO_BAR"]) == "--frobnicate-depth, FOO_BAR"
    assert not_found_header(["\\ltjsetparameter", "a,b", "設定"]) == (
        "\\ltjsetparameter, a%2Cb, %E8%A8%AD%E5%AE%9A"
    )
