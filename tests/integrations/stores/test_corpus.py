"""The Corpus contract, run against every backend of `corpus_factory`."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from sift.errors import InvalidPatternError, InvalidQueryError
from sift.filters import Condition, Filter, matches
from sift.integrations.embedders import get_embedder
from sift.protocols import Corpus
from sift.types import Document

ANIMALS = ["otter", "falcon", "badger", "heron", "lynx", "marten", "osprey", "weasel"]


def make_docs(n: int = 40) -> list[Document]:
    docs = []
    for i in range(n):
        animal = ANIMALS[i % len(ANIMALS)]
        docs.append(
            Document(
                id=f"doc-{i}",
                title=f"The {animal} report {i}",
                text=(
                    f"The {animal} number {i} lives near the river. Observers counted "
                    f"{i * 3} sightings in spring.\n\nCode word: Token{i:03d}x."
                ),
                metadata={
                    "animal": animal,
                    "n": i,
                    "even": i % 2 == 0,
                    "tags": ["wild", animal] if i % 3 == 0 else ["tame"],
                    "place": ["東京都", "大阪府", "京都府"][i % 3],
                },
            )
        )
    return docs


@pytest.fixture
def corpus(corpus_factory) -> Corpus:
    store = corpus_factory()
    report = store.upsert(make_docs())
    assert report.added == 40 and not report.failed
    return store


def test_implements_the_protocol(corpus: Corpus) -> None:
    assert isinstance(corpus, Corpus)
    stats = corpus.stats()
    assert (stats.documents, stats.chunks) == (40, 40)
    assert stats.embedder == "hash:256" and stats.dim == 256


def test_reingest_is_idempotent_and_changes_replace_chunks(corpus: Corpus) -> None:
    again = corpus.upsert(make_docs())
    assert (again.added, again.updated, again.unchanged, again.chunks_written) == (0, 0, 40, 0)
    assert corpus.stats().chunks == 40
    long_text = "\n\n".join(f"Paragraph {p} about the quokka colony. " * 30 for p in range(4))
    changed = Document(id="doc-1", title="Quokkas", text=long_text)
    report = corpus.upsert([changed])
    assert (report.added, report.updated) == (0, 1)
    chunks = corpus.read("doc-1")
    assert len(chunks) > 1 and all("quokka" in c.text for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert corpus.stats().chunks == 39 + len(chunks)
    hits = corpus.search("falcon number 1 lives", k=40, mode="bm25")
    assert all("falcon" not in h.chunk.text or h.chunk.doc_id != "doc-1" for h in hits)
    assert corpus.search("quokka colony", k=1, mode="bm25")[0].chunk.doc_id == "doc-1"
    # Back to fewer chunks: the extra old chunks disappear.
    corpus.upsert([Document(id="doc-1", title="Short", text="A short one about the kea.")])
    assert [c.chunk_id for c in corpus.read("doc-1")] == ["doc-1_0"]
    assert corpus.get_chunks(["doc-1_1", "doc-1_2"]) == []


def test_invalid_documents_are_reported_and_the_rest_ingest(corpus_factory) -> None:
    store = corpus_factory()
    items = [
        {"id": "ok-1", "text": "fine text"},
        {"id": "", "text": "empty id"},
        {"id": "no-text"},
        {"id": "blank", "text": "   \n "},
        {"id": "bad-meta", "text": "x", "metadata": {"doc_id": "reserved"}},
        Document(id="ok-2", text="also fine"),
    ]
    report = store.upsert(items)  # type: ignore[arg-type]
    assert report.added == 2
    failed = {f.doc_id: f.error for f in report.failed}
    assert set(failed) == {"#1", "no-text", "blank", "bad-meta"}
    assert "no text" in failed["blank"] and "reserved" in failed["bad-meta"]
    assert store.stats().documents == 2


def test_search_modes_rank_the_matching_chunk_first(corpus: Corpus) -> None:
    for mode in ("bm25", "hybrid", "dense"):
        hits = corpus.search("Token017x falcon", k=5, mode=mode)  # type: ignore[arg-type]
        assert hits[0].chunk.chunk_id == "doc-17_0", mode
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        assert len({h.chunk.chunk_id for h in hits}) == len(hits)
    chunk = hits[0].chunk
    assert chunk.title == "The falcon report 17" and chunk.doc_id == "doc-17"
    assert chunk.metadata["n"] == 17


def test_dense_search_uses_the_given_vector(corpus: Corpus) -> None:
    target = corpus.read("doc-22")[0]
    vector = get_embedder("hash").embed([f"{target.title}\n{target.text}"])[0]
    hits = corpus.search("unrelated words entirely", k=3, mode="dense", vector=vector)
    assert hits[0].chunk.chunk_id == "doc-22_0"
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    with pytest.raises(ValueError, match="dimensions"):
        corpus.search("x", mode="dense", vector=np.ones(3, dtype=np.float32))


def test_exclude_still_returns_k_fresh_chunks(corpus_factory) -> None:
    store = corpus_factory()
    docs = [Document(id=f"p{i}", text=f"common words here, passage {i}") for i in range(700)]
    store.upsert(docs)
    excluded = [f"p{i}_0" for i in range(500)]
    for mode in ("bm25", "dense", "hybrid"):
        hits = store.search("common words passage", k=10, mode=mode, exclude=excluded)  # type: ignore[arg-type]
        assert len(hits) == 10, mode
        assert not {h.chunk.chunk_id for h in hits} & set(excluded)
    grep = store.grep("passage", k=10, exclude=excluded)
    assert [h.chunk.chunk_id for h in grep.hits] == [f"p{i}_0" for i in range(500, 510)]


FILTERS = [
    Filter.of({"animal": "otter"}),
    Filter.of({"animal": ["otter", "lynx"]}),
    Filter.of({"n": {"gte": 10, "lt": 20}}),
    Filter.of({"even": True, "animal": "heron"}),
    Filter(
        logic="or",
        conditions=(
            Condition(field="n", op="lt", value=3),
            Condition(field="tags", op="eq", value="wild"),
        ),
    ),
    Filter(conditions=(Condition(field="doc_id", op="starts_with", value="doc-3"),)),
    Filter(conditions=(Condition(field="title", op="contains", value="badger"),)),
    Filter(conditions=(Condition(field="tags", op="not_in", value=["tame"]),)),
    Filter(
        conditions=(Condition(field="missing", op="empty"), Condition(field="n", op="ne", value=5))
    ),
    Filter(conditions=(Condition(field="animal", op="gt", value=5),)),  # mixed types: none
    Filter.of({"place": "東京都", "n": {"lt": 30}}),
    Filter(conditions=(Condition(field="place", op="contains", value="京都"),)),
    Filter(conditions=(Condition(field="place", op="ends_with", value="府"),)),
    Filter(
        logic="or",
        conditions=(
            Condition(field="place", op="starts_with", value="大阪"),
            Condition(field="animal", op="eq", value="otter"),
        ),
    ),
    Filter.of({"n": 39}),  # one document of forty
]


@pytest.mark.parametrize("spec", FILTERS, ids=range(len(FILTERS)))
def test_filters_agree_with_the_reference_semantics(corpus: Corpus, spec: Filter) -> None:
    expected = {
        d.id for d in make_docs() if matches(spec, {**d.metadata, "doc_id": d.id, "title": d.title})
    }
    for mode in ("bm25", "dense", "hybrid"):
        hits = corpus.search("river sightings spring", k=40, mode=mode, filters=spec)  # type: ignore[arg-type]
        assert {h.chunk.doc_id for h in hits} == expected, mode
    grep = corpus.grep(r"Token\d+x", k=40, filters=spec)
    assert {h.chunk.doc_id for h in grep.hits} == expected


def test_a_selective_filter_still_fills_k(corpus_factory) -> None:
    store = corpus_factory()
    docs = [
        Document(id=f"q{i}", text=f"shared text {i}", metadata={"rare": i % 97 == 0})
        for i in range(600)
    ]
    store.upsert(docs)
    for mode in ("bm25", "dense", "hybrid"):
        hits = store.search("shared text", k=5, mode=mode, filters={"rare": True})  # type: ignore[arg-type]
        assert len(hits) == 5, mode
        assert all(h.chunk.metadata["rare"] for h in hits), mode


def test_grep_respects_case_and_order(corpus: Corpus) -> None:
    sensitive = corpus.grep(r"token01\dx", k=20)
    assert sensitive.hits == []
    insensitive = corpus.grep(r"(?i)token01\dx", k=20)
    assert [h.chunk.chunk_id for h in insensitive.hits] == [f"doc-{i}_0" for i in range(10, 20)]
    exact = corpus.grep(r"Token01[2-4]x", k=20)
    assert [h.chunk.doc_id for h in exact.hits] == ["doc-12", "doc-13", "doc-14"]
    assert exact.note is None
    stopped = corpus.grep(r"Token\d{3}x", k=4)
    assert [h.chunk.doc_id for h in stopped.hits] == ["doc-0", "doc-1", "doc-2", "doc-3"]
    assert stopped.note and "first 4" in stopped.note
    # No literal at all: the scan still finds the chunks and stops at k.
    nolit = corpus.grep(r"\d\d\d\d?x\.", k=3)
    assert [h.chunk.doc_id for h in nolit.hits] == ["doc-0", "doc-1", "doc-2"]
    alternation = corpus.grep(r"(heron|lynx) number 1\d ", k=10)
    assert [h.chunk.doc_id for h in alternation.hits] == ["doc-11", "doc-12", "doc-19"]


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\1", "backreferences"),
        (r"foo(?=bar)", "lookahead"),
        (r"(?<!x)y", "lookahead"),
        ("(unclosed", "missing"),
        ("a" * 600, "limit"),
        ("", "empty"),
    ],
)
def test_grep_refuses_bad_patterns(corpus: Corpus, pattern: str, reason: str) -> None:
    with pytest.raises(InvalidPatternError, match=reason):
        corpus.grep(pattern)


def test_grep_pathological_pattern_finishes(corpus: Corpus) -> None:
    # Catastrophic for backtracking engines, linear for RE2.
    store_hits = corpus.grep(r"(a|aa)*(a|aa)*(a|aa)*b", k=5)
    assert isinstance(store_hits.hits, list)


def test_read_and_get_chunks(corpus: Corpus) -> None:
    assert corpus.read("nope") == []
    got = corpus.get_chunks(["doc-5_0", "missing_0", "doc-2_0", "doc-5_9", "garbage"])
    assert [c.chunk_id for c in got] == ["doc-5_0", "doc-2_0"]
    chunk = got[0]
    assert chunk.text.startswith("The marten number 5") and chunk.start == 0


def test_delete(corpus: Corpus) -> None:
    assert corpus.delete(["doc-3", "doc-4", "unknown"]) == 2
    assert corpus.read("doc-3") == []
    assert corpus.stats().documents == 38
    assert all(h.chunk.doc_id != "doc-3" for h in corpus.search("Token003x", k=40, mode="bm25"))
    assert corpus.grep("Token003x").hits == []
    assert corpus.delete(["doc-3"]) == 0


def test_bad_search_input(corpus: Corpus) -> None:
    with pytest.raises(InvalidQueryError, match="empty"):
        corpus.search("   ")
    with pytest.raises(InvalidQueryError, match="limit"):
        corpus.search("x" * 5000)
    for k in (0, -1, 100_000):
        with pytest.raises(ValueError, match="k must be"):
            corpus.search("otter", k=k)
    with pytest.raises(ValueError, match="k must be"):
        corpus.grep("otter", k=0)
    with pytest.raises(ValueError, match="valid modes"):
        corpus.search("otter", mode="fuzzy")  # type: ignore[arg-type]


def test_query_syntax_is_not_interpreted(corpus: Corpus) -> None:
    for query in ('title:"otter', "AND OR NOT", "otter^5 -falcon", "*", "(((", "河流"):
        corpus.search(query, k=3, mode="bm25")  # must not raise


def test_concurrent_searches_and_writes(corpus: Corpus) -> None:
    errors: list[BaseException] = []

    def reader(seed: int) -> None:
        try:
            for i in range(15):
                n = (seed * 7 + i) % 40
                hits = corpus.search(f"Token{n:03d}x", k=3, mode="bm25")
                assert hits and hits[0].chunk.doc_id == f"doc-{n}"
                corpus.grep(f"Token{n:03d}x", k=1)
                corpus.get_chunks([f"doc-{n}_0"])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def writer() -> None:
        try:
            corpus.upsert(Document(id=f"extra-{i}", text=f"extra text {i}") for i in range(50))
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(4)]
    threads.append(threading.Thread(target=writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert corpus.stats().documents == 90


def test_a_document_is_unchanged_exactly_when_nothing_stored_changed(corpus_factory) -> None:
    store = corpus_factory()
    base = Document(id="a", title="t", text="x 東京", metadata={"k": 1, "j": [1, 2]})
    assert store.upsert([base]).added == 1
    # Metadata key order is not a change.
    same = Document(id="a", title="t", text="x 東京", metadata={"j": [1, 2], "k": 1})
    assert store.upsert([same]).unchanged == 1
    for change in ({"title": "u"}, {"text": "y 大阪"}, {"metadata": {"k": 2, "j": [1, 2]}}):
        report = store.upsert([base.model_copy(update=change)])
        assert report.updated == 1, change
        assert store.upsert([base]).updated == 1, change
