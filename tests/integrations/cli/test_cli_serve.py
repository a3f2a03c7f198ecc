"""`sift index` then `sift serve`, as a user runs them (real processes, a real server on
loopback): one store served alone, named for its folder; the README's default path; and
PDF pages in what Dify and the native API return."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from ..ingest.conftest import numbered_pages, write_pdf


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "SIFT_HOME": str(home), "NO_COLOR": "1"}
    env.pop("SIFT_STORE", None)
    return env


def _sift(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sift", *args], capture_output=True, text=True, env=env, timeout=300
    )


@contextmanager
def _serving(env: dict[str, str], *args: str) -> Iterator[tuple[httpx.Client, str]]:
    command = [sys.executable, "-m", "sift", "serve", "--port", "0", "--allow-anonymous", *args]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        log: list[str] = []
        url = None
        while url is None:
            line = process.stderr.readline()
            if not line:
                break
            log.append(line)
            found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", line)
            url = found.group(1) if found else None
        assert url, "".join(log)
        with httpx.Client(base_url=url, timeout=120) as client:
            # Readiness, polled: the limit only bounds a broken run.
            ready_by = time.monotonic() + 120
            while client.get("/readyz").status_code != 200:
                assert time.monotonic() < ready_by, "never ready"
                time.sleep(0.05)
            yield client, "".join(log)
    finally:
        process.terminate()
        process.wait(timeout=20)


def _retrieval(client: httpx.Client, knowledge_id: str, query: str) -> list[dict]:
    answer = client.post(
        "/retrieval",
        json={
            "knowledge_id": knowledge_id,
            "query": query,
            "retrieval_setting": {"top_k": 3, "score_threshold": 0.0},
        },
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["records"]


def test_one_store_is_served_as_the_collection_named_for_it(tmp_path: Path) -> None:
    env = _env(tmp_path / "home")
    folder = tmp_path / "reports"
    write_pdf(folder / "annual.pdf", numbered_pages(8, filler=36), font="HeiseiMin-W3")
    store = tmp_path / "ir-reports"
    indexed = _sift(env, "index", "--store", str(store), "--embedder", "hash", "-q", str(folder))
    assert indexed.returncode == 0, indexed.stderr
    with _serving(env, "--store", str(store)) as (client, log):
        assert "the store" in log and "as collection 'ir-reports'" in log
        assert client.get("/v1/collections").json()["collections"] == ["ir-reports"]
        records = _retrieval(client, "ir-reports", "p6x20")
        top = records[0]
        assert "Line 20 of page 6 " in top["content"]
        assert top["metadata"]["page"] == 6 and top["metadata"]["pages"] == [6, 6]
        assert top["metadata"]["doc_id"] == "reports/annual.pdf"
        native = client.post(
            "/v1/search",
            json={"collection": "ir-reports", "question": "6ページ目", "mode": "single_shot"},
        ).json()
        assert any(6 in range(e["metadata"]["pages"][0], e["metadata"]["pages"][1] + 1)
                   for e in native["evidence"])  # fmt: skip
        # Its internal folders are not collections, and none can be made beside it.
        assert client.get("/v1/collections/lexical").status_code == 404
        made = client.post(
            "/v1/collections/other/documents", json={"documents": [{"id": "x", "text": "x"}]}
        )
        assert made.status_code == 404
    assert not (store / "other").exists()


def test_index_then_serve_as_the_readme_shows_answers(tmp_path: Path) -> None:
    env = _env(tmp_path / "home")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bridge.md").write_text(
        "# Basalt Bridge\n\nThe Basalt Bridge was designed by Ilse Varga.", encoding="utf-8"
    )
    assert _sift(env, "index", "--embedder", "hash", "-q", str(docs)).returncode == 0
    with _serving(env) as (client, log):
        assert "as collection 'store'" in log
        assert "store" in client.get("/v1/collections").json()["collections"]
        records = _retrieval(client, "store", "Who designed the Basalt Bridge?")
        assert records[0]["metadata"]["doc_id"] == "docs/bridge.md"
