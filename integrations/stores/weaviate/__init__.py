"""The Weaviate store: sift's `Corpus` on a Weaviate collection, for corpora that outgrow
one machine (sharding, replication, multi-tenancy).

    corpus = WeaviateCorpus.from_url("weaviate://localhost:8080?grpc=50051&collection=Docs")
    corpus.upsert(documents)
    corpus.with_tenant("acme").search("who founded it?")

Each chunk is one object whose UUID is `chunk_uuid(chunk_id)` (uuid5 in a fixed
namespace), the same on every machine, so re-ingesting a chunk overwrites it.
"""

from __future__ import annotations

from sift.integrations.stores.weaviate._corpus import WeaviateCorpus, WeaviateHealth
from sift.integrations.stores.weaviate._objects import chunk_uuid
from sift.integrations.stores.weaviate._settings import WeaviateSettings

__all__ = ["WeaviateCorpus", "WeaviateHealth", "WeaviateSettings", "chunk_uuid"]
