"""Smaller faults of the service (issue 42): settings that are wrong stop `sift serve`
with one line before it serves, a key rejected at start-up is never printed, a port in
use is one line, non-finite numbers never reach a store, the OpenAPI document states the
grep limit the stores enforce, and /metrics names collections only to their keys."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import KEY_ALL, KEY_DOCS, keyed_app, keyed_client

_SIFT = [sys.executable, "-c", "from sift.integrations.cli import main; main()"]


def _serve(
    store: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`sift serve` that must stop before it serves (the timeout only ends a broken run)."""
    return subprocess.run(
        # Port 0 unless a test says: a run that did start takes no port another needs.
        [*_SIFT, "serve", "--store", str(store), "--port", "0", *args],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(store), **(env or {})},
        timeout=60,
        check=False,
    )


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("sift: error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("SIFT_SERVER_WARM_POLICIES", "notjson", "unknown policy 'notjson'"),
        ("SIFT_SERVER_WARM_POLICIES", '["heuristic"', "is not a JSON list"),
        ("SIFT_SERVER_WARM_POLICIES", "heuristic,方針", "unknown policy '方針'"),
        ("SIFT_SERVER_EMBEDDER", "nosuch", "unknown embedder 'nosuch'"),
        ("SIFT_SERVER_EMBEDDER", "ollama:", "unknown embedder 'ollama:'"),
    ],
)
def test_a_wrong_setting_stops_the_service_on_one_line(
    variable: str, value: str, said: str, store_root: Path
) -> None:
    line = _one_error_line(
        _serve(store_root, env={variable: value, "SIFT_SERVER_API_KEYS": KEY_ALL})
    )
    assert variable in line and said in line


def test_warm_policies_read_as_names_or_json(store_root: Path) -> None:
    from sift.integrations.http import ServerSettings

    for given in ("heuristic, ollama", '["heuristic", "ollama"]'):
        settings = ServerSettings(store=str(store_root), warm_policies=given)  # type: ignore[arg-type]
        assert settings.warm_policies == ["heuristic", "ollama"]


@pytest.mark.parametrize(
    "secret",
    ["tiny", "a real key with spaces 0123456789", "本物の鍵-secret-0123456789"],
)
def test_a_rejected_key_is_named_by_its_fingerprint_only(
    secret: str, store_root: Path, tmp_path: Path
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(
        json.dumps({"keys": [{"key": KEY_ALL}, {"key": secret, "name": "typo"}]}),
        encoding="utf-8",
    )
    line = _one_error_line(_serve(store_root, "--keys-file", str(keys)))
    assert "key #2" in line
    assert secret not in line and secret[:8] not in line
    digest = hashlib.sha256(secret.encode()).hexdigest()[:12]
    assert f"{len(secret)} characters, sha256 {digest}" in line


@pytest.mark.parametrize("secret", ["tiny", "本物の鍵-secret-0123456789"])
def test_a_rejected_key_of_the_environment_is_named_by_its_place(
    secret: str, store_root: Path
) -> None:
    line = _one_error_line(_serve(store_root, env={"SIFT_SERVER_API_KEYS": f"{KEY_ALL} {secret}"}))
    assert "SIFT_SERVER_API_KEYS: key #2" in line
    assert secret not in line and secret[:8] not in line


def test_a_port_in_use_is_one_line(store_root: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = _one_error_line(
            _serve(store_root, "--port", str(port), env={"SIFT_SERVER_API_KEYS": KEY_ALL})
        )
    assert f"127.0.0.1:{port}" in line and "another process is listening there" in line


# --------------------------------------------------------------------------- served


def _ingest(client: Any, documents: str) -> Any:
    return client.post(
        "/v1/collections/docs/documents",
        content=documents,
        headers={"Content-Type": "application/json"},
    )


def test_non_finite_metadata_is_refused_and_listing_stays_json(
    store_root: Path, start_server: Any, tmp_path: Path
) -> None:
    url = start_server(keyed_app(store_root, KEY_ALL, search_processes=0))
    with keyed_client(url, KEY_ALL) as client:
        for body in (
            '{"documents": [{"id": "n", "text": "nan", "metadata": {"score": NaN}}]}',
            '{"documents": [{"id": "i", "text": "無限", "metadata": {"点数": [1, -Infinity]}}]}',
        ):
            refused = _ingest(client, body)
            assert refused.status_code == 422, refused.text
            assert "not a finite number" in refused.json()["error_msg"]
        assert (
            _ingest(
                client, '{"documents": [{"id": "f", "text": "fine", "metadata": {"score": 1.5}}]}'
            ).status_code
            == 200
        )
    # The CLI's ingest refuses them too, one line a record, and stores the rest.
    records = tmp_path / "records.jsonl"
    records.write_text(
        '{"id": "nan-cli", "text": "x", "metadata": {"score": NaN}}\n'
        '{"id": "無限", "text": "y", "metadata": {"点数": Infinity}}\n'
        '{"id": "ok-cli", "text": "z", "metadata": {"score": 2.5}}\n',
        encoding="utf-8",
    )
    indexed = subprocess.run(
        [*_SIFT, "index", str(records), "--store", str(tmp_path / "cli"), "--embedder", "hash"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    refusals = [line for line in indexed.stderr.splitlines() if "not a finite number" in line]
    assert len(refusals) == 2, indexed.stderr
    assert "records.jsonl:1" in refusals[0] and "records.jsonl:2" in refusals[1]

    def refuse(constant: str) -> Any:
        raise AssertionError(f"not standard JSON: {constant}")

    stored: set[str] = set()
    for store in (store_root / "docs", tmp_path / "cli"):
        listed = subprocess.run(
            [*_SIFT, "ls", "--store", str(store), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        stored |= {
            json.loads(line, parse_constant=refuse)["doc_id"] for line in listed.stdout.splitlines()
        }
    assert {"f", "ok-cli"} <= stored and not {"n", "i", "nan-cli", "無限"} & stored


def test_the_grep_limit_in_the_schema_is_the_one_enforced(
    store_root: Path, start_server: Any
) -> None:
    url = start_server(keyed_app(store_root, KEY_ALL, search_processes=0))
    with keyed_client(url, KEY_ALL) as client:
        schema = client.get("/openapi.json").json()["components"]["schemas"]["GrepRequest"]
        limit = schema["properties"]["pattern"]["maxLength"]
        assert limit == 500
        for pattern, status in (
            ("a" * limit, 200),
            ("a" * (limit + 1), 422),
            ("灯" * (limit + 1), 422),
        ):
            answer = client.post("/v1/collections/docs/grep", json={"pattern": pattern})
            assert answer.status_code == status, answer.text


def test_metrics_name_collections_only_to_their_keys(served: Any) -> None:
    with served.client() as client:
        found = client.post("/v1/search", json={"collection": "quick", "question": "Eiffel Tower"})
        assert found.status_code == 200, found.text
        assert 'collection="quick"' in client.get("/metrics").text
    with served.client(key=None) as anonymous:
        text = anonymous.get("/metrics").text
    assert "collection=" not in text
    assert "sift_http_requests_total" in text  # the rest is still there
    with served.client(key=KEY_DOCS) as docs_only:  # may use `docs` and `ingest`
        text = docs_only.get("/metrics").text
    assert 'collection="quick"' not in text
