"""Collections on Weaviate, served over HTTP: the loopback Weaviate speaking the real
REST + gRPC protocols (sift.integrations.stores.weaviate.testing)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from sift.integrations.http import ServerSettings, create_app
from sift.integrations.stores.weaviate.testing import FakeWeaviate


def test_weaviate_root_serves_listed_collections(tmp_path: Path, start_server):
    collections = tmp_path / "collections.json"
    collections.write_text(
        json.dumps(
            {"collections": {"Papers": {"mode": "single_shot"}, "Agentic": {"mode": "agentic"}}}
        )
    )
    with FakeWeaviate() as fake:
        settings = ServerSettings(
            store=fake.url(),
            embedder="hash",
            api_keys="weaviate-key-0001",
            collections_file=collections,
        )
        url = start_server(create_app(settings))
        documents = [
            {
                "id": "loire",
                "title": "Loire",
                "text": "The Loire is the longest river in "
                "France, flowing to the Atlantic at Saint-Nazaire.",
                "metadata": {"kind": "river"},
            },
            {
                "id": "rhone",
                "title": "Rhone",
                "text": "The Rhone rises in the Swiss Alps and "
                "reaches the Mediterranean near Marseille.",
                "metadata": {"kind": "river"},
            },
        ]
        auth = {"Authorization": "Bearer weaviate-key-0001"}
        with httpx.Client(base_url=url, headers=auth, timeout=30) as client:
            for name in ("Papers", "Agentic"):
                stored = client.post(
                    f"/v1/collections/{name}/documents", json={"documents": documents}
                )
                assert stored.status_code == 200, stored.text
                assert stored.json()["added"] == 2
                info = client.get(f"/v1/collections/{name}").json()
                assert info["stats"]["backend"] == "weaviate"
                assert info["stats"]["documents"] == 2
                answer = client.post(
                    "/retrieval",
                    json={
                        "knowledge_id": name,
                        "query": "longest river in France",
                        "retrieval_setting": {"top_k": 2, "score_threshold": 0.0},
                        "metadata_condition": {
                            "conditions": [
                                {"name": "kind", "comparison_operator": "is", "value": "river"}
                            ]
                        },
                    },
                )
                assert answer.status_code == 200, answer.text
                records = answer.json()["records"]
                assert records and records[0]["metadata"]["doc_id"] == "loire"
                assert all(0.0 <= r["score"] <= 1.0 for r in records)
            assert client.get("/v1/collections/Unlisted").json()["error_code"] == 2001
        assert fake.calls("BatchObjects"), "documents went to Weaviate over gRPC"
