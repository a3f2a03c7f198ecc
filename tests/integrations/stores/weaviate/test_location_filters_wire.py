"""A page range and a section reach Weaviate as filters on the chunk's own properties
(`m_page`, a number; `m_section`, one token), so the server narrows before it ranks; a
range on `pages` (an array) is re-checked by sift instead. Japanese beside English."""

from __future__ import annotations

from weaviate.proto.v1 import base_pb2

from sift.filters import Filter
from sift.types import Document

OP = base_pb2.Filters


def _leaves(f: base_pb2.Filters) -> list[base_pb2.Filters]:
    if f.operator in (OP.OPERATOR_AND, OP.OPERATOR_OR, OP.OPERATOR_NOT):
        return [leaf for sub in f.filters for leaf in _leaves(sub)]
    return [f]


def _prop(f: base_pb2.Filters) -> str:
    return f.target.property if f.HasField("target") else f.on[-1]


def _pdf(doc_id: str, pages: list[str], lang: str) -> Document:
    text, starts = "", []
    for page in pages:
        starts.append(len(text))
        text += page + "\n\n"
    return Document(
        id=doc_id, text=text, metadata={"lang": lang, "format": "pdf", "page_starts": starts}
    )


_RESULTS = "Results of the year. revenue\n\n"
DOCS = [
    _pdf("annual.pdf", [f"Revenue on page {n}." for n in range(1, 6)], "en"),
    _pdf("決算.pdf", [f"{n}ページ目の売上高 revenue" for n in range(1, 6)], "ja"),
    Document(
        id="guide.md",
        text=_RESULTS + "売上高は増加しました。revenue",
        metadata={
            "section_starts": [0, len(_RESULTS)],
            "section_titles": ["Results", "Results > 売上高"],
        },
    ),
]


def _search(fake, corpus, spec: Filter | None) -> tuple[list[tuple[str, object]], object]:
    mark = len(fake.grpc_calls)
    hits = corpus.search("revenue", k=20, mode="bm25", filters=spec)
    (request,) = [c.request for c in fake.grpc_calls[mark:] if c.method == "Search"]
    where = [(h.chunk.doc_id, h.chunk.metadata.get("page")) for h in hits]
    return sorted(where, key=str), request


def test_a_page_range_is_filtered_on_the_server(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS)
    found, request = _search(fake, corpus, Filter.of({"page": {"gte": 2, "lte": 3}}))
    assert found == [("annual.pdf", 2), ("annual.pdf", 3), ("決算.pdf", 2), ("決算.pdf", 3)]
    leaves = {(_prop(f), f.operator): f.value_number for f in _leaves(request.filters)}
    assert leaves == {
        ("m_page", OP.OPERATOR_GREATER_THAN_EQUAL): 2.0,
        ("m_page", OP.OPERATOR_LESS_THAN_EQUAL): 3.0,
    }
    found, request = _search(fake, corpus, Filter.of({"page": 4, "lang": "ja"}))
    assert found == [("決算.pdf", 4)]
    assert {(_prop(f), f.operator) for f in _leaves(request.filters)} == {
        ("m_page", OP.OPERATOR_EQUAL),
        ("m_lang", OP.OPERATOR_EQUAL),
    }


def test_a_section_is_filtered_on_the_server(fake, open_corpus) -> None:
    corpus = open_corpus()
    corpus.upsert(DOCS)
    mark = len(fake.grpc_calls)
    hits = corpus.search("revenue", k=20, mode="bm25", filters={"section": "Results > 売上高"})
    (request,) = [c.request for c in fake.grpc_calls[mark:] if c.method == "Search"]
    assert [(h.chunk.doc_id, h.chunk.metadata["section"]) for h in hits] == [
        ("guide.md", "Results > 売上高")
    ]
    (leaf,) = _leaves(request.filters)
    assert (_prop(leaf), leaf.operator, leaf.value_text) == (
        "m_section",
        OP.OPERATOR_EQUAL,
        "Results > 売上高",
    )


def test_a_range_on_pages_is_rechecked_by_sift(fake, open_corpus) -> None:
    """`pages` is [first, last]: sift's range holds when one of them passes, which
    Weaviate does not promise on an array, so no filter is sent and sift re-checks."""
    corpus = open_corpus()
    corpus.upsert(DOCS)
    found, request = _search(fake, corpus, Filter.of({"pages": {"gte": 5}}))
    assert found == [("annual.pdf", 5), ("決算.pdf", 5)]
    assert not request.HasField("filters")
