"""WeaviateCorpus at the wire: the exact REST and gRPC requests weaviate-client sends for
each Corpus operation, and how the replies map back to sift's types."""

from __future__ import annotations

import socket

import grpc
import numpy as np
import pytest
from weaviate.proto.v1 import base_pb2, base_search_pb2

from sift.errors import CorpusError, StoreUnavailableError
from sift.filters import Condition, Filter
from sift.integrations.embedders import get_embedder
from sift.integrations.stores import open_store
from sift.integrations.stores.weaviate import WeaviateCorpus, WeaviateSettings, chunk_uuid
from sift.integrations.stores.weaviate.testing import FakeWeaviate
from sift.types import Document

OP = base_pb2.Filters

DOCS = [
    Document(
        id="a",
        title="Alpha",
        text="The quick brown fox jumps.",
        metadata={"lang": "en", "year": 2001},
    ),
    Document(
        id="b",
        title="Beta",
        text="Lorem ipsum dolor sit amet.",
        metadata={"lang": "la", "year": 1990},
    ),
    Document(
        id="c",
        title="Gamma",
        text="A quick word about otters.",
        metadata={"lang": "en", "year": 2015},
    ),
]


def since(fake: FakeWeaviate, mark: int, method: str) -> list:
    return [c.request for c in fake.grpc_calls[mark:] if c.method == method]


def leaves(f: base_pb2.Filters) -> list[base_pb2.Filters]:
    if f.operator in (OP.OPERATOR_AND, OP.OPERATOR_OR, OP.OPERATOR_NOT):
        return [leaf for sub in f.filters for leaf in leaves(sub)]
    return [f]


def prop(f: base_pb2.Filters) -> str:
    return f.target.property if f.HasField("target") else f.on[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- connect


def test_open_checks_meta_schema_and_grpc_health_and_nothing_else(fake, open_corpus) -> None:
    mark_rest, mark_grpc = len(fake.rest_calls), len(fake.grpc_calls)
    corpus = open_corpus()
    rest = [(c.method, c.path) for c in fake.rest_calls[mark_rest:]]
    assert ("GET", "/v1/meta") in rest
    assert ("GET", f"/v1/schema/{corpus.settings.collection}") in rest
    assert {m for m, _ in rest} == {"GET"}  # opening writes nothing
    assert [c.method for c in fake.grpc_calls[mark_grpc:]] == ["Health"]
    assert corpus.stats().extra["server_version"] == fake.version


def test_api_key_travels_on_rest_and_grpc_and_a_wrong_one_is_refused() -> None:
    with FakeWeaviate(api_key="s3cret") as fake:
        corpus = WeaviateCorpus(
            fake.settings(collection="Keyed", api_key="s3cret"), embedder="hash"
        )
        corpus.upsert(DOCS[:1])
        assert all(c.headers.get("authorization") == "Bearer s3cret" for c in fake.rest_calls)
        batch = [c for c in fake.grpc_calls if c.method == "BatchObjects"]
        assert batch and batch[0].metadata.get("authorization") == "Bearer s3cret"
        corpus.close()
        with pytest.raises(StoreUnavailableError, match="API key") as err:
            WeaviateCorpus(fake.settings(collection="Keyed", api_key="wrong"), embedder="hash")
        assert "wrong" not in str(err.value)


def test_unreachable_server_names_host_and_collection() -> None:
    port = free_port()
    settings = WeaviateSettings(
        host="127.0.0.1", http_port=port, grpc_port=free_port(), collection="Docs", init_timeout=1
    )
    with pytest.raises(StoreUnavailableError) as err:
        WeaviateCorpus(settings, embedder="hash")
    message = str(err.value)
    assert f"127.0.0.1:{port}" in message and "'Docs'" in message and "unreachable" in message


def test_rest_up_but_grpc_down_is_reported(fake) -> None:
    settings = fake.settings(collection="Docs", grpc_port=free_port(), init_timeout=0.5)
    with pytest.raises(StoreUnavailableError, match="gRPC"):
        WeaviateCorpus(settings, embedder="hash")


def test_missing_collection_is_a_clear_error_for_readers(fake, open_corpus) -> None:
    with pytest.raises(StoreUnavailableError, match=r"collection does not exist.*sift index"):
        open_corpus(create=False)
    corpus = open_corpus()
    mark = len(fake.grpc_calls)
    with pytest.raises(StoreUnavailableError, match="does not exist"):
        corpus.search("fox")
    with pytest.raises(StoreUnavailableError, match="does not exist"):
        corpus.grep("fox")
    assert corpus.delete(["a"]) == 0 and corpus.stats().documents == 0
    assert since(fake, mark, "Search") == []


def test_health_reports_each_part(fake, open_corpus) -> None:
    corpus = open_corpus()
    before = corpus.health()
    assert before.rest_ready and before.grpc_serving and not before.collection_exists
    assert not before.ok and "collection" in (before.error or "")
    corpus.upsert(DOCS[:1])
    assert corpus.health().ok
    fake.serving = False
    try:
        down = corpus.health()
    finally:
        fake.serving = True
    assert not down.ok and not down.grpc_serving and "gRPC" in (down.error or "")


# --------------------------------------------------------------------------- writes


def test_object_uuids_are_fixed_across_machines_and_releases() -> None:
    # Re-ingesting into an existing collection overwrites only while these never change.
    assert chunk_uuid("a_0") == "23553de3-89d6-5c05-b759-aba6b888a412"
    assert chunk_uuid("文書_3") == "bedf6d9f-314a-579b-b7c4-25fd894dd343"


def test_schema_and_batch_objects(fake, open_corpus) -> None:
    corpus = open_corpus()
    name = corpus.settings.collection
    mark = len(fake.grpc_calls)
    report = corpus.upsert(DOCS)
    assert (report.added, report.chunks_written, report.failed) == (3, 3, [])

    created = next(
        c.body
        for c in fake.rest_calls
        if c.method == "POST" and c.path == "/v1/schema" and c.body["class"] == name
    )
    props = {p["name"]: p for p in created["properties"]}
    assert props["text"]["tokenization"] == "word" and props["text"]["dataType"] == ["text"]
    assert props["doc_id"]["tokenization"] == "field"
    assert props["text"]["indexFilterable"] is True  # grep's Like filter needs it
    assert props["metadata_json"]["indexFilterable"] is False
    assert props["chunk_index"]["dataType"] == ["number"]
    assert {"title", "chunk_id", "content_hash", "metadata_json", "seq"} <= set(props)
    assert created["vectorConfig"]["default"]["vectorizer"] == {"none": {}}
    assert created["invertedIndexConfig"]["indexNullState"] is True
    assert '"embedder": "hash:256"' in created["description"]
    added = {
        c.body["name"]: c.body for c in fake.rest_calls if c.path == f"/v1/schema/{name}/properties"
    }
    assert added["m_lang"]["dataType"] == ["text"] and added["m_lang"]["tokenization"] == "field"
    assert added["m_year"]["dataType"] == ["number"]

    batches = since(fake, mark, "BatchObjects")
    assert len(batches) == 1
    objects = batches[0].objects
    embedder = get_embedder("hash")
    for obj, doc in zip(objects, DOCS, strict=True):
        assert obj.collection == name and obj.tenant == ""
        assert obj.uuid == chunk_uuid(f"{doc.id}_0")
        sent = np.frombuffer(
            obj.vectors[0].vector_bytes if obj.vectors else obj.vector_bytes, dtype="<f4"
        )
        expected = embedder.embed([f"{doc.title}\n{doc.text}"])[0]
        np.testing.assert_allclose(sent, expected, rtol=1e-6)
        fields = obj.properties.non_ref_properties.fields
        assert fields["doc_id"].string_value == doc.id
        assert fields["text"].string_value == doc.text
        assert fields["m_lang"].string_value == doc.metadata["lang"]


def test_reingest_is_an_upsert_and_a_shorter_document_loses_its_stale_chunks(
    fake, open_corpus
) -> None:
    corpus = open_corpus(chunk_tokens=8)
    long_text = " ".join(f"Sentence number {i} is here." for i in range(12))
    corpus.upsert([Document(id="long", text=long_text)])
    n_before = len(corpus.read("long"))
    assert n_before > 2
    mark = len(fake.grpc_calls)
    again = corpus.upsert([Document(id="long", text=long_text)])
    assert again.unchanged == 1 and since(fake, mark, "BatchObjects") == []

    mark = len(fake.grpc_calls)
    report = corpus.upsert([Document(id="long", text="Now short.")])
    assert (report.updated, report.chunks_written) == (1, 1)
    deletes = since(fake, mark, "BatchDelete")
    assert len(deletes) == 1
    ops = {(prop(f), f.operator) for f in leaves(deletes[0].filters)}
    assert ops == {("doc_id", OP.OPERATOR_EQUAL), ("chunk_index", OP.OPERATOR_GREATER_THAN_EQUAL)}
    assert [c.text for c in corpus.read("long")] == ["Now short."]
    assert len(fake.objects(corpus.settings.collection)) == 1


def test_objects_that_keep_failing_fail_their_document_which_is_cleaned_up(
    fake, open_corpus
) -> None:
    corpus = open_corpus(chunk_tokens=8, batch_retries=2)
    long_text = " ".join(f"Sentence number {i} is here." for i in range(6))
    bad_uuid = chunk_uuid("bad_1")
    fake.reject(lambda u, props: "disk full" if u == bad_uuid else None)
    mark = len(fake.grpc_calls)
    report = corpus.upsert([Document(id="good", text="Fine."), Document(id="bad", text=long_text)])
    assert (report.added, [f.doc_id for f in report.failed]) == (1, ["bad"])
    error = report.failed[0].error
    assert "'bad_1'" in error and "disk full" in error and "3 attempt" in error
    assert "not stored" in error
    batches = since(fake, mark, "BatchObjects")
    assert len(batches) == 3  # the first send, then two retries of the failed object only
    assert [o.uuid for o in batches[1].objects] == [bad_uuid]
    assert corpus.read("bad") == []  # the chunks that did import were removed
    assert [c.doc_id for c in corpus.read("good")] == ["good"]
    assert corpus.stats().documents == 1


def test_a_transient_object_error_is_retried_and_the_document_stored(fake, open_corpus) -> None:
    corpus = open_corpus()
    seen: list[str] = []

    def once(u: str, props: dict) -> str | None:
        if u in seen:
            return None
        seen.append(u)
        return "temporarily overloaded"

    fake.reject(once)
    report = corpus.upsert(DOCS[:2])
    assert (report.added, report.failed) == (2, [])


def test_a_failed_batch_rpc_is_retried(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS[:1])  # the collection exists, so the next call is one batch
    fake.fail("BatchObjects", grpc.StatusCode.INTERNAL, "shard busy")
    report = corpus.upsert(DOCS[1:])
    assert (report.added, report.failed) == (2, [])


def test_a_type_clash_in_metadata_fails_only_that_document(open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS[:1])
    report = corpus.upsert(
        [
            Document(id="odd", text="x y", metadata={"year": "unknown"}),
            Document(id="fine", text="z", metadata={"year": 1999}),
        ]
    )
    assert report.added == 1 and [f.doc_id for f in report.failed] == ["odd"]
    assert "same type" in report.failed[0].error


def test_delete_counts_documents_and_sends_one_filtered_batch_delete(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS)
    mark = len(fake.grpc_calls)
    assert corpus.delete(["a", "c", "nope"]) == 2
    (request,) = since(fake, mark, "BatchDelete")
    (leaf,) = leaves(request.filters)
    assert prop(leaf) == "doc_id" and leaf.operator == OP.OPERATOR_CONTAINS_ANY
    assert sorted(leaf.value_text_array.values) == ["a", "c", "nope"]
    assert corpus.stats().documents == 1


def test_embedder_mismatch_is_refused(open_corpus) -> None:
    open_corpus().upsert(DOCS[:1])
    other = open_corpus(embedder="hash:64")
    with pytest.raises(CorpusError, match="hash:256"):
        other.upsert(DOCS[1:2])
    # Opening without an embedder reuses the recorded one.
    assert open_corpus(embedder=None).stats().embedder == "hash:256"


# --------------------------------------------------------------------------- search


def test_hybrid_request_and_reply_mapping(fake, open_corpus) -> None:
    corpus = open_corpus(alpha=0.3)
    corpus.upsert(DOCS)
    vector = get_embedder("hash").embed(["quick fox"])[0]
    mark = len(fake.grpc_calls)
    spec = Filter.of({"lang": "en"})
    hits = corpus.search("Quick FOXES", k=2, vector=vector, filters=spec, exclude=["c_0"])
    (request,) = since(fake, mark, "Search")
    hybrid = request.hybrid_search
    # The analyzer's terms (lower-cased, stemmed), not the text, over the terms properties.
    assert hybrid.query == "quick fox"
    assert hybrid.alpha == pytest.approx(0.3)
    assert hybrid.fusion_type == base_search_pb2.Hybrid.FUSION_TYPE_RELATIVE_SCORE
    sent = (
        np.frombuffer(hybrid.vector_bytes, dtype="<f4")
        if hybrid.vector_bytes
        else np.frombuffer(hybrid.vectors[0].vector_bytes, dtype="<f4")
    )
    np.testing.assert_allclose(sent, vector / np.linalg.norm(vector), rtol=1e-6)
    assert list(hybrid.properties) == ["text_terms", "title_terms"]
    assert request.limit == 2 and request.tenant == ""
    found = {(prop(f), f.operator) for f in leaves(request.filters)}
    assert found == {("m_lang", OP.OPERATOR_EQUAL), ("chunk_id", OP.OPERATOR_CONTAINS_NONE)}
    assert request.metadata.score
    assert [h.chunk.chunk_id for h in hits] == ["a_0"]
    hit = hits[0]
    assert hit.chunk.metadata == {"lang": "en", "year": 2001}  # ints survive the round trip
    assert (hit.chunk.title, hit.chunk.start, hit.chunk.end) == ("Alpha", 0, len(DOCS[0].text))
    assert hit.score == pytest.approx(1.0)


def test_rank_fusion_is_selectable(fake, open_corpus) -> None:
    corpus = open_corpus(fusion="rrf")
    corpus.upsert(DOCS)
    mark = len(fake.grpc_calls)
    corpus.search("quick", k=1)
    (request,) = since(fake, mark, "Search")
    assert request.hybrid_search.fusion_type == base_search_pb2.Hybrid.FUSION_TYPE_RANKED


def test_bm25_and_dense_requests(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS)
    mark = len(fake.grpc_calls)
    bm25 = corpus.search("otters", k=3, mode="bm25")
    (request,) = since(fake, mark, "Search")
    assert request.bm25_search.query == "otter" and list(request.bm25_search.properties) == [
        "text_terms",
        "title_terms",
    ]
    assert not request.HasField("hybrid_search") and not request.HasField("filters")
    assert [h.chunk.doc_id for h in bm25] == ["c"] and bm25[0].score > 0

    mark = len(fake.grpc_calls)
    dense = corpus.search("The quick brown fox jumps.", k=1, mode="dense")
    (request,) = since(fake, mark, "Search")
    assert request.HasField("near_vector") and request.metadata.distance
    assert dense[0].chunk.doc_id == "a"
    # The fake's cosine distance, mapped back to a similarity (higher is better).
    embedder = get_embedder("hash")
    q, d = embedder.embed(["The quick brown fox jumps.", "Alpha\nThe quick brown fox jumps."])
    assert dense[0].score == pytest.approx(float(np.dot(q, d)), abs=1e-5)


def test_filter_translation(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS)
    spec = Filter(
        conditions=(
            Condition(field="year", op="gte", value=2000),
            Condition(field="lang", op="in", value=["en", "de"]),
            Condition(field="doc_id", op="starts_with", value="a"),
        )
    )
    mark = len(fake.grpc_calls)
    hits = corpus.search("quick", k=5, mode="bm25", filters=spec)
    (request,) = since(fake, mark, "Search")
    assert request.filters.operator == OP.OPERATOR_AND
    by_prop = {prop(f): f for f in leaves(request.filters)}
    assert by_prop["m_year"].operator == OP.OPERATOR_GREATER_THAN_EQUAL
    assert by_prop["m_year"].value_number == 2000.0
    assert by_prop["m_lang"].operator == OP.OPERATOR_CONTAINS_ANY
    assert list(by_prop["m_lang"].value_text_array.values) == ["en", "de"]
    assert by_prop["doc_id"].operator == OP.OPERATOR_LIKE and by_prop["doc_id"].value_text == "a*"
    assert [h.chunk.doc_id for h in hits] == ["a"]

    # A field no document has: equality matches nothing, without asking the server.
    mark = len(fake.grpc_calls)
    assert corpus.search("quick", filters={"nope": "x"}) == []
    assert since(fake, mark, "Search") == []
    # ... and "not equal" on it matches everything, so no filter is sent.
    mark = len(fake.grpc_calls)
    spec = Filter(conditions=(Condition(field="nope", op="ne", value="x"),))
    assert len(corpus.search("quick", k=5, mode="bm25", filters=spec)) == 2
    (request,) = since(fake, mark, "Search")
    assert not request.HasField("filters")


def test_servers_before_1_33_get_not_equal_chains(open_corpus) -> None:
    with FakeWeaviate(version="1.30.2") as old:
        corpus = WeaviateCorpus(old.settings(collection="Old"), embedder="hash")
        corpus.upsert(DOCS)
        corpus.search("quick", k=3, mode="bm25", exclude=["a_0", "b_0"])
        request = old.calls("Search")[-1]
        ops = {(prop(f), f.operator) for f in leaves(request.filters)}
        assert ops == {("chunk_id", OP.OPERATOR_NOT_EQUAL)}
        assert len(leaves(request.filters)) == 2
        corpus.close()


# --------------------------------------------------------------------------- grep, read


def test_grep_narrows_with_a_like_filter_in_corpus_order(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS)
    mark = len(fake.grpc_calls)
    result = corpus.grep(r"(?i)QUICK \w+", k=5)
    (request,) = since(fake, mark, "Search")
    (like,) = [f for f in leaves(request.filters) if f.operator == OP.OPERATOR_LIKE]
    # Under (?i) the K ends the literal: RE2 also matches the Kelvin sign there.
    assert prop(like) == "text" and like.value_text == "*quic*"
    assert [s.path[0] for s in request.sort_by] == ["seq", "chunk_index"]
    assert [h.chunk.doc_id for h in result.hits] == ["a", "c"]
    assert [h.score for h in result.hits] == [1.0, 1.0] and result.note is None


def test_grep_without_a_literal_scans_with_the_cursor_up_to_the_bound(fake, open_corpus) -> None:
    corpus = open_corpus(grep_scan_limit=2)
    corpus.upsert(DOCS)
    mark = len(fake.grpc_calls)
    result = corpus.grep(r"[A-Z]\w+ [a-z]", k=5)
    searches = since(fake, mark, "Search")
    assert searches and all(not s.HasField("filters") for s in searches)
    assert len(result.hits) <= 2
    assert result.note and "searched only 2 chunks" in result.note and "literal" in result.note
    whole = open_corpus(grep_scan_limit=100, collection=corpus.settings.collection)
    everything = whole.grep(r"[A-Z]\w* [a-z]", k=5)
    assert [h.chunk.doc_id for h in everything.hits] == ["a", "b", "c"]
    assert everything.note is None


def test_read_asks_for_one_document_sorted_by_chunk_index(fake, open_corpus) -> None:
    corpus = open_corpus(chunk_tokens=8)
    text = " ".join(f"Sentence number {i} is here." for i in range(8))
    corpus.upsert([Document(id="doc", text=text), DOCS[0]])
    mark = len(fake.grpc_calls)
    chunks = corpus.read("doc")
    (request,) = since(fake, mark, "Search")
    (leaf,) = leaves(request.filters)
    assert (prop(leaf), leaf.operator, leaf.value_text) == ("doc_id", OP.OPERATOR_EQUAL, "doc")
    assert [(s.path[0], s.ascending) for s in request.sort_by] == [("chunk_index", True)]
    assert [c.index for c in chunks] == list(range(len(chunks))) and len(chunks) > 2
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")
    assert [c.chunk_id for c in corpus.get_chunks(["doc_1", "zzz", "a_0"])] == ["doc_1", "a_0"]


# --------------------------------------------------------------------------- faults


def test_a_search_that_times_out_is_reported(fake, open_corpus) -> None:
    corpus = open_corpus(query_timeout=0.3)
    corpus.upsert(DOCS[:1])
    fake.hold("Search")
    try:
        with pytest.raises(StoreUnavailableError, match="did not answer in time"):
            corpus.search("quick", mode="bm25")
    finally:
        fake.release("Search")


def test_a_server_error_on_search_names_the_collection(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS[:1])
    fake.fail("Search", grpc.StatusCode.INTERNAL, "index corrupted")
    with pytest.raises(CorpusError, match="index corrupted") as err:
        corpus.search("quick", mode="bm25")
    assert corpus.settings.collection in str(err.value)


# --------------------------------------------------------------------------- tenants


def test_tenants_scope_every_request(fake, open_corpus) -> None:
    corpus = open_corpus(tenant="t1")
    mark = len(fake.grpc_calls)
    corpus.upsert(DOCS[:2])
    created = next(c.body for c in reversed(fake.rest_calls) if c.path == "/v1/schema")
    assert created["multiTenancyConfig"]["enabled"] is True
    assert created["multiTenancyConfig"]["autoTenantCreation"] is True
    assert {o.tenant for b in since(fake, mark, "BatchObjects") for o in b.objects} == {"t1"}
    mark = len(fake.grpc_calls)
    assert len(corpus.search("quick", k=5)) == 2
    corpus.grep("quick")
    corpus.read("a")
    corpus.stats()
    tenants = {
        getattr(r, "tenant", None)
        for c in fake.grpc_calls[mark:]
        for r in [c.request]
        if c.method in ("Search", "Aggregate")
    }
    assert tenants == {"t1"}

    other = corpus.with_tenant("t2")
    other.upsert(DOCS[2:])
    assert [h.chunk.doc_id for h in other.search("quick", k=5)] == ["c"]
    assert {h.chunk.doc_id for h in corpus.search("quick", k=5)} == {"a", "b"}
    other.close()
    assert corpus.search("quick", k=1)  # the view's close keeps the shared connection
    fresh = corpus.with_tenant("fresh")  # nothing written there yet: an empty corpus
    assert fresh.search("quick") == [] and fresh.read("a") == [] and fresh.grep("quick").hits == []
    assert fresh.stats().documents == 0 and fresh.delete(["a"]) == 0
    fresh.close()

    untenanted = open_corpus(collection=corpus.settings.collection)
    with pytest.raises(CorpusError, match="multi-tenant"):
        untenanted.search("quick")
    with pytest.raises(ValueError, match="tenant name"):
        corpus.with_tenant("no spaces allowed")


# --------------------------------------------------------------------------- settings


def test_url_parsing(monkeypatch) -> None:
    monkeypatch.setenv("MY_WEAVIATE_KEY", "k-123")
    s = WeaviateSettings.from_url(
        "weaviate://db.internal:8081?grpc=50052&collection=docs&tenant=t1&api_key_env=MY_WEAVIATE_KEY"
        "&timeout=5"
    )
    assert (s.host, s.http_port, s.grpc_port, s.collection, s.tenant) == (
        "db.internal",
        8081,
        50052,
        "Docs",
        "t1",
    )
    assert s.api_key is not None and s.api_key.get_secret_value() == "k-123"
    assert s.query_timeout == 5 and not s.secure and "k-123" not in s.url()
    assert s.query_maximum_results == 10_000  # Weaviate's default window
    small = WeaviateSettings.from_url("weaviate://h:1?query_maximum_results=500")
    assert small.query_maximum_results == 500
    tls = WeaviateSettings.from_url("weaviates://cluster.example.com?grpc_host=grpc.example.com")
    assert tls.secure and tls.http_port == 443 and tls.grpc_address == "grpc.example.com:50051"
    with pytest.raises(ValueError, match="unknown option 'colection'"):
        WeaviateSettings.from_url("weaviate://h:1?colection=Docs")
    with pytest.raises(ValueError, match="credentials"):
        WeaviateSettings.from_url("weaviate://user:pw@h:1")
    with pytest.raises(ValueError, match="NOT_SET_VAR"):
        WeaviateSettings.from_url("weaviate://h:1?api_key_env=NOT_SET_VAR")
    with pytest.raises(ValueError, match="collection name"):
        WeaviateSettings.from_url("weaviate://h:1?collection=bad-name")


def test_open_store_dispatches_weaviate_urls(fake) -> None:
    corpus = open_store(fake.url(collection="ViaUrl", tenant="x"), embedder="hash")
    try:
        assert isinstance(corpus, WeaviateCorpus)
        assert corpus.tenant == "x" and corpus.settings.collection == "ViaUrl"
        corpus.upsert(DOCS[:1])
        assert corpus.stats().backend == "weaviate" and corpus.stats().documents == 1
    finally:
        corpus.close()


def test_metadata_added_by_another_writer_is_filterable(open_corpus) -> None:
    reader = open_corpus()
    reader.upsert(DOCS[:1])
    writer = open_corpus(collection=reader.settings.collection)
    writer.upsert([Document(id="t", text="quick topics", metadata={"topic": "otters"})])
    hits = reader.search("quick", k=5, mode="bm25", filters={"topic": "otters"})
    assert [h.chunk.doc_id for h in hits] == ["t"]


def test_a_failed_update_keeps_the_previous_version(fake, open_corpus) -> None:
    corpus = open_corpus(chunk_tokens=8)
    first = " ".join(f"First version sentence {i}." for i in range(5))
    corpus.upsert([Document(id="doc", text=first, metadata={"v": 1})])
    before = corpus.read("doc")
    stored = {u: o.vector.copy() for u, o in fake.objects(corpus.settings.collection).items()}
    bad_uuid = chunk_uuid("doc_1")
    fake.reject(
        lambda u, props: "shard read-only" if u == bad_uuid and props.get("m_v") == 2 else None
    )
    second = " ".join(f"Second version sentence {i}." for i in range(5))
    report = corpus.upsert([Document(id="doc", text=second, metadata={"v": 2})])
    assert report.updated == 0 and [f.doc_id for f in report.failed] == ["doc"]
    assert "shard read-only" in report.failed[0].error
    assert "previous version of the document is kept" in report.failed[0].error
    assert corpus.read("doc") == before
    after = fake.objects(corpus.settings.collection)
    assert set(after) == set(stored)
    for u, vector in stored.items():
        np.testing.assert_array_equal(after[u].vector, vector)  # vectors restored too


def test_grep_with_a_literal_says_when_its_candidates_pass_the_bound(fake, open_corpus) -> None:
    corpus = open_corpus(grep_scan_limit=2)
    corpus.upsert([Document(id=f"d{i}", text=f"quick note {i}") for i in range(5)])
    mark = len(fake.grpc_calls)
    result = corpus.grep(r"quick note [4-9]", k=3)
    (request,) = since(fake, mark, "Search")
    assert request.limit + request.offset == 3  # the bound and one more, to know
    assert result.hits == [] and result.note and "more than 2 chunks contain 'quick'" in result.note


def test_a_tenant_view_reports_its_own_location(open_corpus) -> None:
    corpus = open_corpus(tenant="t1")
    view = corpus.with_tenant("t2")
    assert corpus.location.endswith("&tenant=t1") and view.location.endswith("&tenant=t2")
    assert view.location.count("tenant=") == 1
    assert view.stats().location == view.location
    view.close()


def test_a_collection_keeps_its_chunk_size(open_corpus) -> None:
    first = open_corpus(chunk_tokens=8)
    first.upsert(DOCS[:1])
    again = open_corpus(collection=first.settings.collection)
    assert again.stats().extra["chunk_tokens"] == 8
    text = " ".join(f"Sentence number {i} is here." for i in range(6))
    again.upsert([Document(id="long", text=text)])
    assert len(again.read("long")) > 2


def test_a_failed_client_close_is_reported_and_hides_no_other_error(
    fake, open_corpus, monkeypatch, caplog
) -> None:
    import weaviate

    original = weaviate.WeaviateClient.close

    def failing(self: weaviate.WeaviateClient) -> None:
        original(self)
        raise RuntimeError("gRPC channel would not shut down")

    corpus = open_corpus()
    view = corpus.with_tenant("t1")
    monkeypatch.setattr(weaviate.WeaviateClient, "close", failing)
    view.close()  # the connection is still used by `corpus`: nothing to close yet
    with pytest.raises(CorpusError, match=r"closing the client failed .*would not shut down"):
        corpus.close()
    corpus.close()  # a second close is a no-op
    other = open_corpus()
    with pytest.raises(ValueError, match="the real problem"), other:
        raise ValueError("the real problem")
    assert "closing the client failed" in caplog.text


# --------------------------------------------------------------------------- query window


def test_reads_updates_and_deletes_reach_past_the_query_window() -> None:
    """Weaviate answers no query past QUERY_MAXIMUM_RESULTS objects and deletes at most
    that many per request; with a window of 5, every operation still sees all 12+ chunks
    of a document, and no request asks past the window."""
    window = 5
    long_text = " ".join(f"Sentence number {i} is here." for i in range(12))
    with FakeWeaviate(query_maximum_results=window) as fake:
        settings = fake.settings(collection="Window", query_maximum_results=window)
        with WeaviateCorpus(settings, embedder="hash", chunk_tokens=8) as corpus:
            docs = [
                Document(id="doc", text=long_text),
                Document(id="other", text=long_text.replace("Sentence", "Line")),
                Document(id="short", text="Only a few words."),
            ]
            assert not corpus.upsert(docs).failed
            stored = fake.objects("Window")
            n_doc = sum(1 for o in stored.values() if o.properties["doc_id"] == "doc")
            assert n_doc > 2 * window

            mark = len(fake.grpc_calls)
            chunks = corpus.read("doc")
            assert [c.index for c in chunks] == list(range(n_doc))
            assert "".join(c.text for c in chunks).replace(" ", "") == long_text.replace(" ", "")
            searches = since(fake, mark, "Search")
            assert len(searches) == n_doc // window + 1
            assert all(s.limit <= window and not s.offset for s in searches)
            later = [leaf for s in searches[1:] for leaf in leaves(s.filters)]
            assert any(leaf.operator == OP.OPERATOR_GREATER_THAN for leaf in later)

            ids = [c.chunk_id for c in chunks]
            assert [c.chunk_id for c in corpus.get_chunks(ids)] == ids

            # A failed update puts back every chunk of the previous version.
            before = {
                u: (o.properties["text"], o.vector.tobytes())
                for u, o in stored.items()
                if o.properties["doc_id"] == "doc"
            }
            bad = chunk_uuid("doc_1")
            fake.reject(
                lambda u, props: "read-only" if u == bad and "there" in props["text"] else None
            )
            changed = Document(id="doc", text=long_text.replace("here", "there"))
            report = corpus.upsert([changed, Document(id="other", text="Now short.")])
            fake.reject(None)
            assert [f.doc_id for f in report.failed] == ["doc"]
            assert "previous version of the document is kept" in report.failed[0].error
            assert [c.text for c in corpus.read("doc")] == [c.text for c in chunks]
            restored = {
                u: (o.properties["text"], o.vector.tobytes())
                for u, o in fake.objects("Window").items()
                if o.properties["doc_id"] == "doc"
            }
            assert restored == before
            # "other" shrank from many chunks to one: every stale chunk is gone.
            assert [c.chunk_id for c in corpus.read("other")] == ["other_0"]

            # grep with a literal walks every candidate in corpus order.
            hits = corpus.grep(r"Sentence number \d+", k=100).hits
            assert [h.chunk.chunk_id for h in hits] == ids
            assert all(s.limit <= window and not s.offset for s in fake.calls("Search"))

            assert corpus.delete(["doc", "other", "short"]) == 3
            assert fake.objects("Window") == {}


def test_grep_pages_past_documents_that_share_an_ingest_sequence(monkeypatch) -> None:
    # Two writers can stamp two documents with the same sequence (the same microsecond);
    # paging grep's candidates by (sequence, chunk index) must not skip either one.
    window = 5
    text = " ".join(f"Marker number {i} here." for i in range(4))
    with FakeWeaviate(query_maximum_results=window) as fake:
        settings = fake.settings(collection="Ties", query_maximum_results=window)
        with (
            WeaviateCorpus(settings, embedder="hash", chunk_tokens=8) as one,
            WeaviateCorpus(settings, embedder="hash", chunk_tokens=8) as two,
        ):
            monkeypatch.setattr("time.time_ns", lambda: 1_700_000_000_000_000_000)
            one.upsert([Document(id="a", text=text)])
            two.upsert([Document(id="b", text=text)])
            monkeypatch.undo()
            seqs = {o.properties["seq"] for o in fake.objects("Ties").values()}
            assert len(seqs) == 1
            expected = sorted(c.chunk_id for d in ("a", "b") for c in one.read(d))
            assert len(expected) > window
            hits = one.grep("Marker", k=100).hits
            assert sorted(h.chunk.chunk_id for h in hits) == expected
