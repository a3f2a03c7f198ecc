"""A real uvicorn server on a loopback port, serving collections built in a tmp dir."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from sift.integrations.http import ServerSettings, create_app
from sift.integrations.ollama.testing import FakeOllama, Reply, final_answer
from sift.integrations.stores import open_store
from sift.types import Document

KEY_ALL = "key-all-0123456789"
KEY_DOCS = "key-docs-0123456789"

DOCS = [
    Document(
        id="eiffel",
        title="Eiffel Tower",
        text="The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was "
        "designed by the engineering company of Gustave Eiffel and completed in 1889.",
        metadata={
            "lang": "en",
            "year": 1889,
            "published": "2021-03-04",
            "tags": ["paris", "landmark"],
            "category": "architecture",
        },
    ),
    Document(
        id="gustave",
        title="Gustave Eiffel",
        text="Gustave Eiffel was a French civil engineer born in Dijon in 1832. His company "
        "built the Eiffel Tower for the 1889 World's Fair in Paris.",
        metadata={
            "lang": "en",
            "year": 1832,
            "published": "2022-07-15T10:00:00Z",
            "tags": ["people"],
            "category": "biography",
        },
    ),
    Document(
        id="dijon",
        title="Dijon",
        text="Dijon is a city in eastern France, capital of the Cote-d'Or department, "
        "famous for its mustard.",
        metadata={
            "lang": "en",
            "year": 2000,
            "published": "2019-01-01",
            "tags": ["france", "city"],
            "category": "geography",
        },
    ),
    Document(
        id="louvre",
        title="Louvre",
        text="The Louvre is the world's most-visited art museum, located in Paris. It "
        "houses the Mona Lisa.",
        metadata={
            "lang": "en",
            "year": 1793,
            "published": "2023-05-20",
            "tags": ["paris", "museum"],
            "category": "culture",
        },
    ),
    Document(
        id="tour-fr",
        title="Tour Eiffel",
        text="La tour Eiffel est une tour de fer puddle de Paris, construite par Gustave "
        "Eiffel pour l'Exposition universelle de 1889.",
        metadata={
            "lang": "fr",
            "year": 1889,
            "published": 1609459200,
            "tags": ["paris"],
            "category": "architecture",
        },
    ),
    Document(
        id="mustard",
        title="Dijon mustard",
        text="Dijon mustard is a traditional mustard named after the city of Dijon, first "
        "made there in 1856 by Jean Naigeon.",
        metadata={"lang": "en", "year": 1856, "category": "food"},
    ),
]


@dataclass
class Served:
    url: str
    app: object
    root: Path
    key_all: str = KEY_ALL
    key_docs: str = KEY_DOCS
    docs: tuple[Document, ...] = tuple(DOCS)

    def client(self, key: str | None = KEY_ALL, **kwargs: object) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, **kwargs)

    @property
    def service(self):  # the running app's service object, for white-box assertions
        return self.app.state.sift


def _serve(app: object, *, ready: bool = True) -> tuple[uvicorn.Server, threading.Thread, str]:
    """Starts `app` on a free loopback port; with `ready`, returns once its start-up
    warming is done (the limits below only bound a broken run)."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    engine = app.state.sift.engine  # type: ignore[attr-defined]
    deadline = time.monotonic() + 120
    while ready and not engine.ready:
        if time.monotonic() > deadline:
            raise RuntimeError("the app never became ready")
        time.sleep(0.01)
    return server, thread, f"http://127.0.0.1:{port}"


def keyed_app(store_root: Path, key: str, **overrides: Any) -> Any:
    """A service over the collections in `store_root` (hash embedder), `key` its one
    bearer key, Retry-After 3 s, and `overrides` for any other setting."""
    settings = ServerSettings(
        store=str(store_root), embedder="hash", api_keys=key, retry_after_s=3, **overrides
    )
    return create_app(settings)


def keyed_client(url: str, key: str, timeout: float = 60) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=timeout)


def wait_until(check: Callable[[], bool], what: str, limit_s: float = 60.0) -> None:
    """Polls `check`; the limit only bounds a broken run, it is never a speed claim."""
    end = time.monotonic() + limit_s
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


class Gate:
    """Holds whatever waits on it until the test opens it (or the test ends)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.waiting = 0
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            self.waiting += 1
        self.event.wait(120)

    def open(self) -> None:
        self.event.set()


@pytest.fixture
def gate() -> Iterator[Gate]:
    g = Gate()
    yield g
    g.open()  # never leave a worker blocked behind a failed test


@pytest.fixture
def ollama(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOllama]:
    """A loopback Ollama whose every chat reply waits for the gate, then concludes. Its
    address is in the environment, so search processes started later reach it too."""

    def held(_: dict[str, Any]) -> Reply:
        gate.wait()
        return final_answer([("gustave_0", "the engineer")])

    with FakeOllama(responder=held) as server:
        monkeypatch.setenv("SIFT_OLLAMA_HOST", server.host)
        yield server


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    """A root of collections holding `docs` (DOCS, hash embedder)."""
    root = tmp_path / "collections"
    corpus = open_store(root / "docs", embedder="hash")
    try:
        corpus.upsert(DOCS)
    finally:
        corpus.close()
    return root


@pytest.fixture
def http_documents() -> tuple[Document, ...]:
    """The documents every test collection holds."""
    return tuple(DOCS)


@pytest.fixture
def start_server() -> Iterator[object]:
    """Starts more servers (other settings) for one test; stops them afterwards."""
    started: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(app: object, *, ready: bool = True) -> str:
        server, thread, url = _serve(app, ready=ready)
        started.append((server, thread))
        return url

    yield start
    for server, thread in started:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("collections")
    for name in ("docs", "quick"):
        corpus = open_store(root / name, embedder="hash")
        try:
            corpus.upsert(DOCS)
        finally:
            corpus.close()
    collections = root.parent / "collections.json"
    collections.write_text(
        json.dumps(
            {
                "collections": {
                    # Far deadlines: these tests check answers, not speed (the deadline
                    # tests in test_http_admission.py hold the work with a gate).
                    "docs": {"mode": "agentic", "deadline_s": 300.0},
                    "quick": {"mode": "single_shot"},
                    "hasty": {
                        "location": str(root / "docs"),
                        "mode": "agentic",
                        "deadline_s": 0.001,
                    },
                }
            }
        )
    )
    settings = ServerSettings(
        store=str(root),
        embedder="hash",
        api_keys=f"{KEY_ALL};{KEY_DOCS}=docs,ingest",
        # These tests ingest into collections of their own with KEY_ALL: the opt-in that
        # lets a wildcard key create them (creation rules: test_http_memory_bounds.py).
        wildcard_create=True,
        collections_file=collections,
        max_body_bytes=64 * 1024,
        max_ingest_bytes=256 * 1024,
        max_query_chars=500,
        max_top_k=50,
        max_concurrency=4,
        retry_after_s=2,
        max_documents_per_request=20,
        deadline_grace_s=60.0,
        retrieval_deadline_s=300.0,
        # The shared service searches in processes of its own, as `sift serve` does on
        # a machine of two cores or more.
        search_processes=2,
    )
    app = create_app(settings)
    server, thread, url = _serve(app)
    try:
        yield Served(url=url, app=app, root=root)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
