"""Reads without an episode (the workflow nodes' Read document and Grep): a document's
passages in order and a regex grep, each passage with its page and section, on a real
server over a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift.integrations.stores import open_store
from sift.types import Document

from .conftest import keyed_app, keyed_client

KEY = "key-documents-0123456789"

_P1 = "Fuji report. " + " ".join(
    f"The mountain's height is measured at station {i}." for i in range(80)
)
_P2 = "富士山は日本で最も高い山です。" + "".join(
    f"観測所{i}で標高を測りました。" for i in range(80)
)
_P3 = "Climbing season. " + " ".join(
    f"Trail {i} opens in July and closes in September." for i in range(80)
)
_STARTS = [0, len(_P1) + 1, len(_P1) + len(_P2) + 2]
REPORT = Document(
    id="reports/fuji.pdf",
    title="Fuji report",
    text="\n".join([_P1, _P2, _P3]),
    metadata={
        "lang": "ja",
        "page_starts": _STARTS,
        "section_starts": [0, _STARTS[1]],
        "section_titles": ["Overview", "Overview > 標高"],
    },
)
PLAIN = Document(
    id="note",
    title="A note",
    text="Gustave Eiffel was born in Dijon in 1832.",
    metadata={"lang": "en"},
)


@pytest.fixture
def url(tmp_path: Path, start_server) -> str:
    root = tmp_path / "collections"
    corpus = open_store(root / "reports", embedder="hash")
    try:
        corpus.upsert([REPORT, PLAIN])
    finally:
        corpus.close()
    return start_server(keyed_app(root, KEY, max_top_k=20, max_query_chars=100))


def test_a_document_reads_in_order_with_pages_and_sections(url: str) -> None:
    with keyed_client(url, KEY) as client:
        answer = client.get("/v1/collections/reports/documents/reports/fuji.pdf")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    chunks = body["chunks"]
    assert body["doc_id"] == "reports/fuji.pdf" and body["title"] == "Fuji report"
    assert body["total_chunks"] == len(chunks) > 3 and body["next_offset"] is None
    assert [c["index"] for c in chunks] == list(range(len(chunks)))
    assert "".join(c["text"] for c in chunks).startswith("Fuji report.")
    # Each passage says where it sits: pages ascending through the document, the
    # Japanese section from the second page on.
    assert [c["page"] for c in chunks] == sorted(c["page"] for c in chunks)
    assert {c["page"] for c in chunks} == {1, 2, 3}
    second = [c for c in chunks if c["page"] == 2]
    assert second and all(c["section"] == "Overview > 標高" for c in second)
    assert any("観測所" in c["text"] for c in second)
    assert chunks[0]["section"] == "Overview" and chunks[0]["pages"][0] == 1
    # The location tables stay on the document, not in every passage's metadata.
    assert all("page_starts" not in c["metadata"] for c in chunks)


def test_a_long_document_reads_in_pages(url: str) -> None:
    with keyed_client(url, KEY) as client:
        whole = client.get("/v1/collections/reports/documents/reports/fuji.pdf").json()
        first = client.get(
            "/v1/collections/reports/documents/reports/fuji.pdf", params={"limit": 3}
        ).json()
        rest = client.get(
            "/v1/collections/reports/documents/reports/fuji.pdf",
            params={"offset": first["next_offset"], "limit": 1000},
        ).json()
    assert len(first["chunks"]) == 3 and first["next_offset"] == 3
    assert rest["next_offset"] is None
    assert first["chunks"] + rest["chunks"] == whole["chunks"]


def test_a_document_without_layout_has_no_page_or_section(url: str) -> None:
    with keyed_client(url, KEY) as client:
        body = client.get("/v1/collections/reports/documents/note").json()
    (chunk,) = body["chunks"]
    assert chunk["page"] is None and chunk["pages"] == [] and chunk["section"] is None


@pytest.mark.parametrize(
    ("path", "status", "code", "named"),
    [
        ("/v1/collections/reports/documents/missing", 404, 4004, "'missing'"),
        ("/v1/collections/nowhere/documents/note", 404, 2001, "nowhere"),
        ("/v1/collections/reports/documents/note?limit=0", 422, 4000, "limit"),
    ],
)
def test_read_errors_name_what_was_wrong(
    url: str, path: str, status: int, code: int, named: str
) -> None:
    with keyed_client(url, KEY) as client:
        answer = client.get(path)
    assert answer.status_code == status
    assert answer.json()["error_code"] == code and named in answer.json()["error_msg"]


def test_grep_finds_japanese_and_english_passages_with_their_place(url: str) -> None:
    with keyed_client(url, KEY) as client:
        japanese = client.post(
            "/v1/collections/reports/grep", json={"pattern": "観測所40で標高", "top_k": 3}
        ).json()
        english = client.post(
            "/v1/collections/reports/grep",
            json={"pattern": r"born in \w+", "filters": {"lang": "en"}},
        ).json()
        filtered = client.post(
            "/v1/collections/reports/grep",
            json={"pattern": r"born in \w+", "filters": {"lang": "ja"}},
        ).json()
    (hit,) = japanese["hits"]
    assert (
        "観測所40で" in hit["text"]
        and hit["pages"] == [2, 2]
        and hit["section"] == "Overview > 標高"
    )
    assert [h["doc_id"] for h in english["hits"]] == ["note"]
    assert filtered["hits"] == []


def test_grep_is_bounded_by_top_k(url: str) -> None:
    with keyed_client(url, KEY) as client:
        body = client.post(
            "/v1/collections/reports/grep", json={"pattern": "Trail", "top_k": 2}
        ).json()
    assert len(body["hits"]) == 2 and all("Trail" in h["text"] for h in body["hits"])


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"pattern": "("}, "pattern"),
        ({"pattern": "x", "top_k": 21}, "top_k"),
        ({"pattern": "x" * 101}, "pattern"),
        ({"pattern": ""}, "pattern"),
        ({"pattern": "x", "filters": {"conditions": "lang"}}, "filters"),
    ],
)
def test_grep_refuses_bad_input_naming_it(url: str, body: dict, named: str) -> None:
    with keyed_client(url, KEY) as client:
        answer = client.post("/v1/collections/reports/grep", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error_code"] == 4000 and named in answer.json()["error_msg"]


def test_reads_need_a_key_that_may_use_the_collection(served) -> None:
    with served.client(key="wrong-key-0123456789") as client:
        wrong = client.post("/v1/collections/docs/grep", json={"pattern": "Eiffel"})
    with served.client(key=served.key_docs) as client:
        other = client.get("/v1/collections/quick/documents/gustave")
        allowed = client.get("/v1/collections/docs/documents/gustave")
    assert wrong.status_code == 403 and wrong.json()["error_code"] == 1002
    assert other.status_code == 403 and "'quick'" in other.json()["error_msg"]
    assert allowed.status_code == 200
    assert allowed.json()["chunks"][0]["text"].startswith("Gustave Eiffel was")


def test_the_openapi_document_describes_the_reads(served) -> None:
    with served.client() as client:
        document = client.get("/openapi.json").json()
    read = document["paths"]["/v1/collections/{name}/documents/{doc_id}"]
    grep = document["paths"]["/v1/collections/{name}/grep"]
    assert {"get", "delete"} <= set(read)
    assert "post" in grep
    passage = document["components"]["schemas"]["Passage"]["properties"]
    assert {"page", "pages", "section", "chunk_id", "doc_id"} <= set(passage)
    # The server's limits are in the schema.
    grep_body = document["components"]["schemas"]["GrepRequest"]["properties"]
    assert grep_body["top_k"]["maximum"] == 50
    assert grep_body["pattern"]["maxLength"] == 500
