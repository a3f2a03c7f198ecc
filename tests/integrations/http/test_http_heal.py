"""A collection whose BM25 index was removed under a running service heals on the next
search or write, without a restart (issue 42): its search processes only read the store
and may not rebuild the index, and every search answered 503 "retry", every write 409
"locked by another process", until the service was restarted."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path
from typing import Any

import httpx

from sift.integrations.stores import open_store
from sift.types import Document

from ..stores.sqlite.conftest import zero_chunks_root
from .conftest import KEY_ALL, keyed_app, keyed_client, wait_until

_JA = Document(id="灯台", title="灯台", text="灯台は船に陸の位置を知らせる塔です。")


def _with_japanese(root: Path) -> None:
    corpus = open_store(root / "docs")
    try:
        corpus.upsert([_JA])
    finally:
        corpus.close()


def _found(client: httpx.Client, question: str) -> set[str]:
    answer = client.post(
        "/v1/search", json={"collection": "docs", "question": question, "mode": "single_shot"}
    )
    assert answer.status_code == 200, answer.text
    return {e["doc_id"] for e in answer.json()["evidence"]}


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


def test_a_removed_bm25_index_heals_on_the_next_search(store_root: Path, start_server: Any):
    _with_japanese(store_root)
    app = keyed_app(store_root, KEY_ALL, search_processes=1)
    url = start_server(app)
    processes = app.state.sift.engine.processes
    (first,) = processes.pids()
    shutil.rmtree(store_root / "docs" / "lexical")
    # Its search process is replaced (as after a crash): the new one opens the store
    # afresh and finds no BM25 index, which a reader may not rebuild.
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: _gone(first), "the search process died")
    with keyed_client(url, KEY_ALL) as client:
        assert "mustard" in _found(client, "Dijon mustard")
        assert "灯台" in _found(client, "灯台")
    assert (store_root / "docs" / "lexical" / "meta.json").is_file()


def test_a_removed_bm25_index_heals_on_the_next_write(store_root: Path, start_server: Any):
    url = start_server(keyed_app(store_root, KEY_ALL, search_processes=1))
    shutil.rmtree(store_root / "docs" / "lexical")
    with keyed_client(url, KEY_ALL) as client:
        written = client.post(
            "/v1/collections/docs/documents",
            json={"documents": [{"id": _JA.id, "title": _JA.title, "text": _JA.text}]},
        )
        assert written.status_code == 200, written.text
        assert written.json()["added"] == 1
        assert "灯台" in _found(client, "灯台")
        assert "mustard" in _found(client, "Dijon mustard")
    assert (store_root / "docs" / "lexical" / "meta.json").is_file()


def test_a_damaged_database_is_said_not_a_500(store_root: Path, start_server: Any):
    """A zeroed page of sift.db cannot be rebuilt: the answer says the store is damaged
    and what to do, without a Retry-After (retrying would not mend it)."""
    zero_chunks_root(store_root / "docs")
    for processes in (0, 1):
        url = start_server(keyed_app(store_root, KEY_ALL, search_processes=processes))
        with keyed_client(url, KEY_ALL) as client:
            for question in ("Dijon mustard", "ディジョンのマスタード"):
                answer = client.post(
                    "/v1/search",
                    json={"collection": "docs", "question": question, "mode": "single_shot"},
                )
                assert answer.status_code == 503, answer.text
                message = answer.json()["error_msg"]
                assert "damaged" in message and "restore it from a backup" in message
                assert "Retry-After" not in answer.headers
