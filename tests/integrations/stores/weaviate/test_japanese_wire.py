"""Analysis on the Weaviate store at the wire: the terms properties and their
tokenization, the query Weaviate is sent, the analyzer the collection records, grep's
Like filter on Japanese, and collections made before analyzers were recorded."""

from __future__ import annotations

import json

import pytest
from weaviate.proto.v1 import base_pb2

from sift.errors import CorpusError
from sift.integrations.stores.weaviate import _schema
from sift.text import Analyzer, default_analyzer
from sift.types import Document

OP = base_pb2.Filters

DOCS = [
    Document(id="ja", title="梅雨", text="日本で梅雨がないのは北海道と小笠原諸島である。"),
    Document(id="mix", title="アップル", text="アップルはiPodを製作している企業である。"),
    Document(id="en", title="iPod", text="The iPod is a line of portable media players."),
    Document(id="ward", title="住所", text="本社は東京都港区新橋にある。大阪市北区に支社。"),
]


def since(fake, mark: int, method: str) -> list:
    return [c.request for c in fake.grpc_calls[mark:] if c.method == method]


def leaves(f: base_pb2.Filters) -> list[base_pb2.Filters]:
    if f.operator in (OP.OPERATOR_AND, OP.OPERATOR_OR, OP.OPERATOR_NOT):
        return [leaf for sub in f.filters for leaf in leaves(sub)]
    return [f]


def created_class(fake, name: str) -> dict:
    return next(
        c.body
        for c in fake.rest_calls
        if c.method == "POST" and c.path == "/v1/schema" and c.body["class"] == name
    )


def test_objects_carry_the_analyzers_terms_in_whitespace_properties(fake, open_corpus) -> None:
    corpus = open_corpus()
    mark = len(fake.grpc_calls)
    corpus.upsert(DOCS)
    created = created_class(fake, corpus.settings.collection)
    props = {p["name"]: p for p in created["properties"]}
    for name in ("text_terms", "title_terms"):
        assert props[name]["tokenization"] == "whitespace"
        assert props[name]["indexSearchable"] is True
    description = json.loads(created["description"].removeprefix("sift:"))
    assert description["analyzer"] == default_analyzer().spec
    (batch,) = since(fake, mark, "BatchObjects")
    fields = {
        o.properties.non_ref_properties.fields["doc_id"].string_value: (
            o.properties.non_ref_properties.fields
        )
        for o in batch.objects
    }
    assert fields["mix"]["text_terms"].string_value.split() == default_analyzer().terms(
        DOCS[1].text
    )
    assert "ipod" in fields["mix"]["text_terms"].string_value.split()
    assert fields["ja"]["title_terms"].string_value == "梅雨 梅 雨"
    # The text itself is stored as it came, for display and grep.
    assert fields["ja"]["text"].string_value == DOCS[0].text


def test_the_query_is_the_weighted_terms_never_the_text(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS)
    mark = len(fake.grpc_calls)
    hits = corpus.search("iPodを製作している企業", k=2, mode="bm25")
    (request,) = since(fake, mark, "Search")
    sent = request.bm25_search.query.split()
    # A Latin name in a Japanese question weighs double: it is sent twice.
    assert sent.count("ipod") == 2 and sent.count("製作") == 1
    assert list(request.bm25_search.properties) == ["text_terms", "title_terms"]
    assert hits[0].chunk.doc_id == "mix"

    mark = len(fake.grpc_calls)
    hits = corpus.search("-iPod + ( ) ^2 ~ * ? : AND", k=2, mode="bm25")
    (request,) = since(fake, mark, "Search")
    assert request.bm25_search.query == "ipod 2 and"  # no operator reaches Weaviate
    assert {h.chunk.doc_id for h in hits} == {"mix", "en"}
    mark = len(fake.grpc_calls)
    assert corpus.search("( ) ^ ~ * ?", k=2, mode="bm25") == []
    assert since(fake, mark, "Search") == []  # nothing to look up: not even asked


def test_japanese_grep_narrows_with_a_like_filter(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS)
    mark = len(fake.grpc_calls)
    result = corpus.grep("東京都[^。]*区", k=5)
    (request,) = since(fake, mark, "Search")
    (like,) = [f for f in leaves(request.filters) if f.operator == OP.OPERATOR_LIKE]
    assert like.value_text == "*東京都*"
    assert [h.chunk.doc_id for h in result.hits] == ["ward"]


def test_another_analyzer_is_refused_on_a_collection(open_corpus) -> None:
    open_corpus().upsert(DOCS[:1])
    french = Analyzer(stemmers={"latin": "french"})
    with pytest.raises(CorpusError, match="indexed with the analyzer"):
        open_corpus(analyzer=french).search("梅雨", k=1)
    assert open_corpus(analyzer=default_analyzer()).search("梅雨", k=1)


def test_a_new_collection_takes_the_configured_analyzer(open_corpus) -> None:
    french = Analyzer(stemmers={"latin": "french"})
    corpus = open_corpus(analyzer=french)
    corpus.upsert([Document(id="fr", title="Chanson", text="Les chanteuses chantaient.")])
    assert corpus.stats().extra["analyzer"] == french.spec
    assert corpus.search("chanteuse", k=1, mode="bm25")[0].chunk.doc_id == "fr"


def test_a_collection_made_before_analyzers_keeps_working(fake, open_corpus) -> None:
    """No analyzer in its description, no terms properties: keyword search reads `text`
    and `title` with Weaviate's word tokenizer, as it did when it was made."""
    corpus = open_corpus()
    config = _schema.collection_config(
        corpus.settings.collection,
        multi_tenancy=False,
        vectorizer="none",
        ollama_endpoint="",
        ollama_model="",
    )
    config["properties"] = [p for p in config["properties"] if p.name not in _schema.TERMS_OF]
    config["description"] = _schema.write_description(
        {"schema": 1, "embedder": "hash:256", "dim": 256, "chunk_tokens": 512}
    )
    client = corpus._shared.client
    client.collections.create(**config)
    old = open_corpus()
    report = old.upsert(DOCS)
    assert not report.failed
    assert old.stats().extra["analyzer"] == "weaviate word tokenizer"
    mark = len(fake.grpc_calls)
    hits = old.search("portable players", k=2, mode="bm25")
    (request,) = since(fake, mark, "Search")
    assert request.bm25_search.query == "portable players"
    assert list(request.bm25_search.properties) == ["text", "title"]
    assert hits[0].chunk.doc_id == "en"
    with pytest.raises(CorpusError, match="made before sift recorded analyzers"):
        open_corpus(analyzer=default_analyzer()).search("x", k=1)
