"""Searches in search processes (`search_processes`): the service writes, the processes
read, and each sees every write acknowledged before its search; a process that dies or
does not stop is replaced, and its request gets a clear answer.

Slow work is made slow by a gate the test holds (a loopback Ollama whose replies wait for
it), never by a sleep; the waits below only bound a broken run.
"""

from __future__ import annotations

import logging
import os
import signal
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from sift.integrations.http import ServerSettings
from sift.integrations.http._engine import search_process_count
from sift.types import SearchResult

from .conftest import keyed_app, keyed_client, wait_until

KEY = "processes-key-0123"
QUESTION = "Where was the engineer whose company built the Eiffel Tower born?"


# Process starts included: a longer bound for a broken run than the conftest's.
_wait_until = partial(wait_until, limit_s=90.0)


def _app(store_root: Path, **overrides: Any) -> Any:
    return keyed_app(store_root, KEY, **{"search_processes": 2, **overrides})


def _client(url: str, timeout: float = 60) -> httpx.Client:
    return keyed_client(url, KEY, timeout)


def _search(client: httpx.Client, question: str, **extra: Any) -> httpx.Response:
    return client.post(
        "/v1/search",
        json={"collection": "docs", "question": question, "top_k": 5, **extra},
    )


def _doc_ids(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    return {e.doc_id for e in SearchResult.model_validate(response.json()).evidence}


def _open_files(pid: int) -> set[str]:
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found.add(os.readlink(fd))
        except OSError:
            continue  # closed meanwhile
    return found


def _nice(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    # Fields after the command (which may hold spaces); nice is the 19th of the line.
    return int(stat[stat.rindex(")") + 2 :].split()[16])


def test_searches_run_in_the_processes_and_see_every_acknowledged_write(
    store_root: Path, start_server: Any
) -> None:
    app = _app(store_root)
    url = start_server(app)
    processes = app.state.sift.engine.processes
    pids = processes.pids()
    assert len(pids) == 2 and os.getpid() not in pids
    db = str((store_root / "docs" / "sift.db").resolve())
    # They yield the CPU to the service (its event loop answers every request).
    assert all(_nice(pid) == min(_nice(os.getpid()) + 5, 19) for pid in pids)
    with _client(url) as client:
        # Warm-up opened the store in every search process, for reading.
        assert all(db in _open_files(pid) for pid in pids)
        assert "gustave" in _doc_ids(_search(client, QUESTION))
        # A write through the service, then searches: both processes (four searches,
        # alternating) find it, each having opened the store again.
        ingest = client.post(
            "/v1/collections/docs/documents",
            json={
                "documents": [
                    {
                        "id": "kyoto",
                        "title": "京都",
                        "text": "京都は千年の都である。Kyoto was the capital of Japan for "
                        "a thousand years.",
                    }
                ]
            },
        )
        assert ingest.status_code == 200, ingest.text
        for question in ("京都 千年の都", "Kyoto capital of Japan") * 2:
            assert "kyoto" in _doc_ids(_search(client, question, mode="single_shot"))
        assert client.delete("/v1/collections/docs/documents/kyoto").status_code == 200
        for question in ("京都 千年の都", "Kyoto capital of Japan") * 2:
            assert "kyoto" not in _doc_ids(_search(client, question, mode="single_shot"))
    # The service itself never searched: its threads only wrote.
    assert processes.pids() == pids


@pytest.mark.parametrize("nice", [0, 3])
def test_search_nice_sets_the_search_processes_priority(
    store_root: Path, start_server: Any, nice: int
) -> None:
    app = _app(store_root, search_processes=1, search_nice=nice)
    url = start_server(app)
    (pid,) = app.state.sift.engine.processes.pids()
    assert _nice(pid) == min(_nice(os.getpid()) + nice, 19)
    with _client(url) as client:
        assert "gustave" in _doc_ids(_search(client, QUESTION))


def test_searches_while_the_service_writes(
    store_root: Path, start_server: Any, http_documents: tuple[Any, ...]
) -> None:
    # Ingests and deletes go on while searches run in the processes, each of which
    # reopens the store it finds older than the service's writes, sometimes while a write
    # is under way: every request is answered, and afterwards every search sees the end
    # state.
    url = start_server(_app(store_root, max_concurrency=4))
    rounds = 12

    def write(i: int) -> list[int]:
        with _client(url) as client:
            documents = [
                {
                    "id": f"w{i}-{j}",
                    "title": f"第{i}巻",
                    "text": f"巻{i}の{j}章。Volume {i} part {j}.",
                }
                for j in range(5)
            ]
            codes = [
                client.post(
                    "/v1/collections/docs/documents", json={"documents": documents}
                ).status_code
            ]
            if i % 3 == 0:
                codes.append(client.delete(f"/v1/collections/docs/documents/w{i}-0").status_code)
            return codes

    def search(i: int) -> int:
        with _client(url) as client:
            mode = "single_shot" if i % 2 else "agentic"
            return _search(client, f"Volume {i} part 3", mode=mode).status_code

    with ThreadPoolExecutor(6) as pool:
        writes = pool.map(write, range(rounds))
        searches = pool.map(search, range(rounds * 2))
        assert all(code == 200 for codes in writes for code in codes)
        assert all(code == 200 for code in searches)
    with _client(url) as client:
        for i in range(rounds):
            for _ in range(2):  # both processes
                found = _doc_ids(
                    _search(client, f"Volume {i} part 3 巻{i}の3章", mode="single_shot")
                )
                assert f"w{i}-3" in found, (i, found)
        stats = client.get("/v1/collections/docs").json()["stats"]
    assert stats["documents"] == len(http_documents) + rounds * 5 - len(range(0, rounds, 3))


def test_events_stream_from_a_search_process(store_root: Path, start_server: Any) -> None:
    url = start_server(_app(store_root))
    with (
        _client(url) as client,
        client.stream(
            "POST",
            "/v1/search",
            json={"collection": "docs", "question": QUESTION},
            headers={"Accept": "text/event-stream"},
        ) as response,
    ):
        assert response.status_code == 200
        text = "".join(response.iter_text())
    events = [line[len("event: ") :] for line in text.splitlines() if line.startswith("event: ")]
    assert "sift.turn" in events or any(e.startswith("sift.") for e in events[:-1])
    assert events[-1] == "sift.result", events


def test_a_search_process_that_dies_is_replaced(
    store_root: Path, start_server: Any, gate: Any, ollama: Any
) -> None:
    app = _app(store_root, search_processes=1, deadline_grace_s=60)
    url = start_server(app)
    processes = app.state.sift.engine.processes
    (first,) = processes.pids()
    with _client(url) as client, ThreadPoolExecutor(2) as pool:
        # Killed while idle: the next search goes to its replacement, nothing is lost.
        os.kill(first, signal.SIGKILL)
        _wait_until(lambda: _dead(first), "it died")
        assert "gustave" in _doc_ids(_search(client, QUESTION))
        _wait_until(lambda: len(processes.pids()) == 1, "a replacement")
        (second,) = processes.pids()
        assert second != first
        # Killed during a search (held at the model): that request answers 503 with
        # Retry-After, naming what happened; the next search is answered again.
        held = pool.submit(_search, client, QUESTION, policy="ollama")
        _wait_until(lambda: gate.waiting == 1, "the search reached the model")
        os.kill(second, signal.SIGKILL)
        lost = held.result(timeout=60)
        assert lost.status_code == 503, lost.text
        assert lost.json()["error_code"] == 5030
        assert "search process" in lost.json()["error_msg"]
        assert lost.headers["Retry-After"] == "1"
        gate.open()
        assert "gustave" in _doc_ids(_search(client, QUESTION))
        _wait_until(lambda: processes.restarts == 2, "both were replaced")
    assert app.state.sift.admission.active == 0


def _dead(pid: int) -> bool:
    """Whether every thread of `pid` has exited (its pipes are closed then): its main
    thread shows Z while the others may still be exiting."""
    try:
        zombie = Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
        return zombie and len(os.listdir(f"/proc/{pid}/task")) <= 1
    except OSError:
        return True  # reaped


def test_a_search_process_that_does_not_stop_is_killed_and_replaced(
    store_root: Path, start_server: Any
) -> None:
    # A process that hangs (stopped here with SIGSTOP: it can reach no step of an
    # episode where it would stop) holds its search past deadline and grace: the request
    # answers 503/5040 at once, and the process is killed, its slot given back, and
    # another takes its place.
    app = _app(store_root, search_processes=1, deadline_grace_s=0.2)
    url = start_server(app)
    svc = app.state.sift
    (first,) = svc.engine.processes.pids()
    with _client(url) as client:
        os.kill(first, signal.SIGSTOP)
        try:
            response = _search(client, QUESTION, deadline_s=0.3)
            assert response.status_code == 503, response.text
            assert response.json()["error_code"] == 5040
            _wait_until(lambda: first not in svc.engine.processes.pids(), "it is killed")
        finally:
            if Path(f"/proc/{first}").exists():
                os.kill(first, signal.SIGCONT)
        _wait_until(lambda: svc.admission.active == 0, "its slot is given back")
        _wait_until(lambda: len(svc.engine.processes.pids()) == 1, "a replacement")
        assert "gustave" in _doc_ids(_search(client, QUESTION))
    assert svc.engine.processes.restarts == 1


def test_search_processes_that_cannot_start_leave_searches_on_threads(
    store_root: Path, start_server: Any, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    from sift.integrations.http import _processes

    # An interpreter that exits at once, as one whose imports fail would.
    monkeypatch.setattr(_processes, "_COMMAND", "import sys; sys.exit(3)")
    caplog.set_level(logging.ERROR, logger="sift.http")
    app = _app(store_root, search_processes=2)
    url = start_server(app)
    assert app.state.sift.engine.processes is None
    assert any("search processes could not start" in r.getMessage() for r in caplog.records)
    with _client(url) as client:
        assert client.get("/readyz").json()["collections"] == {"docs": "ready"}
        assert "gustave" in _doc_ids(_search(client, QUESTION))


def test_a_search_process_opens_a_store_for_reading(store_root: Path) -> None:
    from sift.errors import CorpusError
    from sift.integrations.http._collections import Collections
    from sift.types import Document

    collections = Collections(ServerSettings(store=str(store_root), embedder="hash"))
    docs = collections.get("docs")
    first = collections.open_reader(docs)
    try:
        with pytest.raises(CorpusError, match="writer=False"):
            first.upsert([Document(id="x", title="", text="書けない")])
        again = collections.open_reader(docs, first.embedder)
        try:
            assert again.embedder is first.embedder  # the model is not loaded again
            assert "gustave" in {h.chunk.doc_id for h in again.search("Gustave Eiffel", k=3)}
        finally:
            again.close()
    finally:
        first.close()


def test_the_number_of_search_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    def settings(**values: Any) -> ServerSettings:
        return ServerSettings(store="/nonexistent", **values)

    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1, 2, 3, 4, 5, 6, 7})
    assert search_process_count(settings(search_processes=None, max_concurrency=4)) == 4
    assert search_process_count(settings(search_processes=None, max_concurrency=16)) == 8
    assert search_process_count(settings(search_processes=3)) == 3
    assert search_process_count(settings(search_processes=0)) == 0
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0})
    # One core: processes gain nothing over threads.
    assert search_process_count(settings(search_processes=None)) == 0
    with pytest.raises(ValueError, match="search_processes"):
        settings(search_processes=-1)
