"""The service under faults it met in an audit (issue 31): a store broken under a
running service, another process holding a collection's write lock, bodies nested too
deep or not JSON, settings that are wrong at start, and what /readyz tells a stranger."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from sift.integrations.stores import open_store

from .conftest import KEY_ALL, keyed_app, keyed_client

_DOC = {"id": "fresh", "title": "Fresh", "text": "a fresh page about lighthouses"}
_DOC_JA = {"id": "灯台", "title": "灯台", "text": "灯台は船に陸の位置を知らせる塔です。"}


def _ingest(client: httpx.Client, *documents: dict[str, str]) -> httpx.Response:
    return client.post("/v1/collections/docs/documents", json={"documents": list(documents)})


def _stored(root: Path, doc_id: str) -> bool:
    corpus = open_store(root / "docs", writer=False)
    try:
        return bool(corpus.read(doc_id))
    finally:
        corpus.close()


# --------------------------------------------------------------------------- a broken store


def test_a_store_broken_under_the_service_recovers_without_a_500(store_root: Path, start_server):
    """Another process once removed the BM25 index under a serving collection (two
    writers making a new store): every later write of the service answered 500, though
    each reached SQLite. The store is opened afresh and the write tried again."""
    url = start_server(keyed_app(store_root, KEY_ALL, search_processes=0))
    with keyed_client(url, KEY_ALL) as client:
        assert _ingest(client, {**_DOC, "id": "first"}).status_code == 200
        shutil.rmtree(store_root / "docs" / "lexical")
        for document in (_DOC, _DOC_JA):
            answer = _ingest(client, document)
            assert answer.status_code == 200, answer.text
        deleted = client.delete("/v1/collections/docs/documents/first")
        assert deleted.status_code == 200, deleted.text
        found = client.post(
            "/v1/search",
            json={"collection": "docs", "question": "lighthouses", "mode": "single_shot"},
        ).json()
        assert "fresh" in {e["doc_id"] for e in found["evidence"]}
        found = client.post(
            "/v1/search", json={"collection": "docs", "question": "灯台", "mode": "single_shot"}
        ).json()
        assert "灯台" in {e["doc_id"] for e in found["evidence"]}
    assert _stored(store_root, "fresh") and not _stored(store_root, "first")


def test_a_delete_whose_index_update_failed_is_not_a_404_on_retry(store_root: Path, start_server):
    url = start_server(keyed_app(store_root, KEY_ALL, search_processes=0))
    with keyed_client(url, KEY_ALL) as client:
        assert _ingest(client, _DOC).status_code == 200
        shutil.rmtree(store_root / "docs" / "lexical")
        answer = client.delete("/v1/collections/docs/documents/fresh")
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"deleted": 1}
        assert client.delete("/v1/collections/docs/documents/fresh").status_code == 404


# --------------------------------------------------------------------------- another writer

_HOLDER = textwrap.dedent(
    """
    import sys
    from sift.integrations.stores import open_store
    from sift.types import Document
    corpus = open_store(sys.argv[1], embedder="hash")
    corpus.upsert([Document(id="held", title="Held", text="written by the other process")])
    print("holding", flush=True)
    sys.stdin.readline()
    corpus.close()
    """
)


def test_another_process_writing_is_409_with_retry_after(store_root: Path, start_server):
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(store_root / "docs")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        url = start_server(keyed_app(store_root, KEY_ALL, search_processes=0))
        with keyed_client(url, KEY_ALL) as client:
            refused = _ingest(client, _DOC)
            assert refused.status_code == 409, refused.text
            assert refused.json()["error_code"] == 4090
            assert refused.headers["Retry-After"] == "3"
            message = refused.json()["error_msg"]
            assert "another process" in message and f"process {holder.pid}" in message
            refused = client.delete("/v1/collections/docs/documents/eiffel")
            assert refused.status_code == 409, refused.text
            assert holder.stdin is not None
            holder.stdin.write("\n")
            holder.stdin.flush()
            holder.wait(timeout=60)
            # Once the other writer is gone, the next request writes.
            assert _ingest(client, _DOC).status_code == 200
            assert client.delete("/v1/collections/docs/documents/eiffel").status_code == 200
    finally:
        holder.kill()
        holder.wait()
    assert _stored(store_root, "fresh") and _stored(store_root, "held")


# --------------------------------------------------------------------------- bodies


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("levels", [40, 990, 5000])
def test_deeply_nested_bodies_are_422_naming_the_nesting(served, levels: int):
    deep = _nested(levels)
    search = '{"collection": "docs", "question": "q", "filters": {"a": ' + deep + "}}"
    ingest = '{"documents": [{"id": "x", "text": "t", "metadata": {"a": ' + deep + "}}]}"
    with served.client() as client:
        for path, body in (("/v1/search", search), ("/v1/collections/docs/documents", ingest)):
            answer = client.post(path, content=body, headers={"Content-Type": "application/json"})
            assert answer.status_code == 422, (path, answer.text)
            assert "nested more than 32 levels" in answer.json()["error_msg"]
        # The connection and the service still serve.
        assert client.get("/healthz").status_code == 200


def test_json_errors_say_where_the_text_stops_being_json(served):
    with served.client() as client:
        for path in ("/v1/search", "/retrieval", "/v1/collections/docs/documents"):
            answer = client.post(
                path,
                content=b'{"collection": "docs",, "question": "q"}',
                headers={"Content-Type": "application/json"},
            )
            assert answer.status_code == 422, answer.text
            message = answer.json()["error_msg"]
            assert "not valid JSON" in message and "line 1, column 23" in message, message
            assert "JSON decode error" not in message


def test_a_number_too_long_to_read_is_422(served):
    body = '{"collection": "docs", "question": "q", "top_k": ' + "9" * 5000 + "}"
    with served.client() as client:
        answer = client.post(
            "/v1/search", content=body, headers={"Content-Type": "application/json"}
        )
    assert answer.status_code == 422, answer.text
    assert "cannot be read" in answer.json()["error_msg"]


def test_a_bad_body_without_a_key_is_still_401(served):
    with served.client(key=None) as client:
        answer = client.post(
            "/v1/search", content=_nested(990), headers={"Content-Type": "application/json"}
        )
    assert answer.status_code == 401


# --------------------------------------------------------------------------- ops


def test_readyz_names_collections_only_to_a_key_that_may_use_them(served):
    with served.client(key=None) as client:
        anonymous = client.get("/readyz").json()
    assert anonymous["status"] == "ready" and anonymous["collections"] == {}
    with served.client() as client:
        assert {"docs", "quick"} <= set(client.get("/readyz").json()["collections"])
    with served.client(key=served.key_docs) as client:
        assert set(client.get("/readyz").json()["collections"]) == {"docs"}


@pytest.mark.parametrize(
    ("variable", "value"),
    [("SIFT_MAX_TURNS", "abc"), ("SIFT_THRESHOLD_TOKENS", "10"), ("SIFT_SERVER_PORT", "x")],
)
def test_sift_serve_stops_at_start_on_a_bad_setting(tmp_path: Path, variable: str, value: str):
    env = {**os.environ, variable: value, "SIFT_HOME": str(tmp_path / "home")}
    # An option given overrides its variable: the port is left to the variable.
    port = [] if variable == "SIFT_SERVER_PORT" else ["--port", "0"]
    result = subprocess.run(
        [sys.executable, "-m", "sift.integrations.cli", "serve", *port],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sift: error: invalid setting"), lines
    assert variable in lines[0] and value in lines[0]


# --------------------------------------------------------------------------- anonymous mode


def test_without_keys_host_and_origin_keep_web_pages_out(store_root: Path, start_server):
    """A DNS-rebinding page could read, add and delete documents of a service that needs
    no key: its requests carry the page's own host name as Host, or as Origin."""
    from sift.integrations.http import ServerSettings, create_app

    settings = ServerSettings(
        store=str(store_root),
        embedder="hash",
        allow_anonymous=True,
        allowed_hosts="sift.example.org, *.corp.example",
        search_processes=0,
    )
    url = start_server(create_app(settings))
    port = url.rsplit(":", 1)[1]
    with httpx.Client(base_url=url, timeout=60) as client:
        for host in ("evil.example", f"evil.example:{port}", "corp.example", "a.b.evil.example"):
            refused = client.get("/v1/collections", headers={"Host": host})
            assert refused.status_code == 421, (host, refused.text)
            assert refused.json()["error_code"] == 4210
        refused = client.post(
            "/v1/collections/docs/documents",
            json={"documents": [_DOC]},
            headers={"Origin": "http://evil.example"},
        )
        assert refused.status_code == 403 and refused.json()["error_code"] == 4030
        assert not _stored(store_root, "fresh")
        for host in (
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            f"[::1]:{port}",
            f"192.168.1.20:{port}",
            "sift.example.org",
            f"search.corp.example:{port}",
        ):
            fine = client.get("/v1/collections", headers={"Host": host})
            assert fine.status_code == 200, (host, fine.text)
        same = client.get("/v1/collections", headers={"Origin": f"http://127.0.0.1:{port}"})
        assert same.status_code == 200
        # Japanese text through the same door.
        assert _ingest(client, _DOC_JA).status_code == 200
    assert _stored(store_root, "灯台")
