"""Against a real Weaviate, when WEAVIATE_URL is set (the store contract suite in
tests/integrations/stores runs there too, as the "weaviate" backend)."""

from __future__ import annotations

import os
import uuid

import pytest

from sift.integrations.stores.weaviate import WeaviateCorpus
from sift.types import Document

pytestmark = [
    pytest.mark.weaviate,
    pytest.mark.skipif(
        not os.environ.get("WEAVIATE_URL"),
        reason="needs a real Weaviate: set WEAVIATE_URL (e.g. "
        "weaviate://localhost:8080?grpc=50051, see docs/weaviate.md)",
    ),
]


def test_health_and_tenant_isolation_on_a_real_server() -> None:
    collection = f"SiftReal_{uuid.uuid4().hex[:10]}"
    corpus = WeaviateCorpus.from_url(
        os.environ["WEAVIATE_URL"], collection=collection, tenant="t1", embedder="hash"
    )
    try:
        report = corpus.upsert([Document(id="a", text="otters hold hands while sleeping")])
        assert report.added == 1 and not report.failed
        health = corpus.health()
        assert health.ok and health.multi_tenancy, health
        other = corpus.with_tenant("t2")
        assert other.search("otters") == []
        assert [h.chunk.doc_id for h in corpus.search("otters", mode="bm25")] == ["a"]
        assert [h.chunk.doc_id for h in corpus.grep(r"hold\w* hands").hits] == ["a"]
        other.close()
    finally:
        corpus.drop()
        corpus.close()
