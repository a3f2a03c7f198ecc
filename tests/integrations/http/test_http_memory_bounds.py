"""Memory bounded (issue 42): idle collections close and reopen on use, open ones are
capped (LRU, 503 when all are in use), and creating collections is limited per key and
off for wildcard keys unless configured. Real stores in tmp_path; real uvicorn where a
status or header is asserted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sift.integrations.http import ServerSettings
from sift.integrations.http._collections import Collections
from sift.integrations.http._errors import ApiError
from tests.integrations.http.conftest import keyed_app, keyed_client

KEY = "key-bounds-0123456789"

JA_DOCS = [
    {
        "id": "fuji",
        "title": "富士山",
        "text": "富士山は日本で最も高い山で、標高は3776メートルです。"
        "静岡県と山梨県にまたがっています。",
    },
    {
        "id": "kyoto",
        "title": "京都",
        "text": "京都は千年以上にわたり日本の都であり、多くの寺院や神社があります。",
    },
]
EN_DOCS = [
    {
        "id": "eiffel",
        "title": "Eiffel Tower",
        "text": "The Eiffel Tower is a wrought-iron lattice tower in Paris, completed in 1889.",
    }
]


class Clock:
    """A clock the test moves: idleness without waiting."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _collections(root: Path, clock: Clock, **overrides: Any) -> Collections:
    settings = ServerSettings(store=str(root), embedder="hash", warm_up=False, **overrides)
    return Collections(settings, clock=clock)


def _use(collections: Collections, name: str) -> None:
    with collections.using(collections.get(name, create=True)) as corpus:
        corpus.stats()


def test_an_idle_collection_closes_after_its_idle_time_and_never_while_in_use(
    tmp_path: Path,
) -> None:
    clock = Clock()
    collections = _collections(tmp_path, clock, collection_idle_s=600)
    _use(collections, "docs")
    clock.now += 599
    assert collections.sweep() == []
    assert collections.open_names() == ["docs"]
    clock.now += 1
    assert collections.sweep() == ["docs"]
    assert collections.open_names() == []

    # In use: however long it has been, the store stays open until the request ends.
    with collections.using(collections.get("docs")) as corpus:
        clock.now += 10_000
        assert collections.sweep() == []
        assert corpus.stats().documents == 0  # still usable, not closed under the request
    assert collections.open_names() == ["docs"]
    clock.now += 600
    assert collections.sweep() == ["docs"]
    collections.close()


def test_opening_past_the_cap_closes_the_least_recently_used_idle_one(tmp_path: Path) -> None:
    clock = Clock()
    collections = _collections(tmp_path, clock, max_open_collections=2)
    _use(collections, "a")
    _use(collections, "b")
    _use(collections, "a")  # now b is the least recently used
    _use(collections, "c")
    assert collections.open_names() == ["a", "c"]

    with (
        collections.using(collections.get("a")),
        collections.using(collections.get("c")),
        pytest.raises(ApiError) as refused,
    ):
        _use(collections, "b")
    assert refused.value.status == 503
    assert refused.value.headers == {"Retry-After": "1"}
    assert "all 2 open collections are in use" in refused.value.message
    assert collections.open_names() == ["a", "c"]
    _use(collections, "b")  # once one is idle again, it makes room
    assert len(collections.open_names()) == 2
    collections.close()


def test_a_closed_collection_reopens_on_search_and_ingest(
    tmp_path: Path, start_server: Any
) -> None:
    """Past its idle time a store closes at the next sweep; the next search or ingest
    finds its documents all the same (English and Japanese). The service's clock is the
    test's, so no sweep closes anything before the test moves it."""
    app = keyed_app(tmp_path / "root", f"{KEY}=docs,nihongo", search_processes=0, warm_up=False)
    (tmp_path / "root").mkdir()
    svc = app.state.sift
    clock = Clock()
    svc.collections.clock = clock
    url = start_server(app)
    with keyed_client(url, KEY) as client:
        for name, docs in (("docs", EN_DOCS), ("nihongo", JA_DOCS)):
            answer = client.post(f"/v1/collections/{name}/documents", json={"documents": docs})
            assert answer.status_code == 200, answer.text
        assert sorted(svc.collections.open_names()) == ["docs", "nihongo"]
        clock.now += 600
        assert sorted(svc.collections.sweep()) == ["docs", "nihongo"]
        assert svc.collections.open_names() == []

        found = client.post(
            "/v1/search",
            json={"collection": "nihongo", "question": "富士山の標高は", "mode": "single_shot"},
        )
        assert found.status_code == 200, found.text
        assert found.json()["evidence"][0]["doc_id"] == "fuji"
        assert svc.collections.open_names() == ["nihongo"]

        clock.now += 600
        assert svc.collections.sweep() == ["nihongo"]
        more = [{"id": "louvre", "title": "Louvre", "text": "The Louvre is a museum in Paris."}]
        answer = client.post("/v1/collections/docs/documents", json={"documents": more})
        assert answer.status_code == 200, answer.text
        info = client.get("/v1/collections/docs")
        assert info.json()["stats"]["documents"] == 2  # the reopened store kept the first


def test_all_open_collections_in_use_answers_503_with_retry_after(
    store_root: Path, start_server: Any
) -> None:
    app = keyed_app(
        store_root, KEY, max_open_collections=1, search_processes=0, wildcard_create=True
    )
    url = start_server(app)
    svc = app.state.sift
    with keyed_client(url, KEY) as client:
        held = svc.collections.get("docs")
        with svc.collections.using(held):
            answer = client.post("/v1/collections/other/documents", json={"documents": EN_DOCS})
            assert answer.status_code == 503, answer.text
            assert answer.headers["Retry-After"] == "3"
            assert "all 1 open collections are in use" in answer.json()["error_msg"]
        answer = client.post("/v1/collections/other/documents", json={"documents": EN_DOCS})
        assert answer.status_code == 200, answer.text
        assert svc.collections.open_names() == ["other"]


def test_a_wildcard_key_may_not_create_unless_configured(
    store_root: Path, start_server: Any
) -> None:
    url = start_server(keyed_app(store_root, KEY, search_processes=0))
    with keyed_client(url, KEY) as client:
        refused = client.post("/v1/collections/nihongo/documents", json={"documents": JA_DOCS})
        assert refused.status_code == 403, refused.text
        assert "SIFT_SERVER_WILDCARD_CREATE" in refused.json()["error_msg"]
        assert not (store_root / "nihongo").exists()
        # What exists stays usable: ingest into it.
        kept = client.post("/v1/collections/docs/documents", json={"documents": JA_DOCS})
        assert kept.status_code == 200, kept.text

    url = start_server(keyed_app(store_root, KEY, search_processes=0, wildcard_create=True))
    with keyed_client(url, KEY) as client:
        made = client.post("/v1/collections/nihongo/documents", json={"documents": JA_DOCS})
        assert made.status_code == 200, made.text
    assert (store_root / "nihongo").is_dir()


def test_a_key_creates_at_most_its_limit_across_restarts(tmp_path: Path, start_server: Any) -> None:
    root = tmp_path / "root"
    root.mkdir()
    scoped = f"{KEY}=ja1,ja2,en1"
    url = start_server(keyed_app(root, scoped, search_processes=0, max_collections_per_key=2))
    with keyed_client(url, KEY) as client:
        for name in ("ja1", "ja2"):
            made = client.post(f"/v1/collections/{name}/documents", json={"documents": JA_DOCS})
            assert made.status_code == 200, made.text
        refused = client.post("/v1/collections/en1/documents", json={"documents": EN_DOCS})
        assert refused.status_code == 403, refused.text
        assert "its limit (SIFT_SERVER_MAX_COLLECTIONS_PER_KEY=2)" in refused.json()["error_msg"]
        # Its own collections still take documents.
        more = client.post("/v1/collections/ja1/documents", json={"documents": EN_DOCS})
        assert more.status_code == 200, more.text

    # A restart does not reset the count; removing one of its collections frees a place.
    url = start_server(keyed_app(root, scoped, search_processes=0, max_collections_per_key=2))
    with keyed_client(url, KEY) as client:
        refused = client.post("/v1/collections/en1/documents", json={"documents": EN_DOCS})
        assert refused.status_code == 403, refused.text
    owners = (root / ".sift-owners.json").read_text(encoding="utf-8")
    assert KEY not in owners  # recorded by digest only
