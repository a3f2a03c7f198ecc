"""Filters inside the embedded store agree with `sift.filters.matches`, the semantics of
record: the chunks the SQL of a filter allows (property-tested on random documents and
filters, English and Japanese values, odd ones too), and what each search mode returns
under a filter (the top k of the matching chunks alone, for BM25 and exact dense)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from sift.filters import Condition, Filter, FilterOp, matches
from sift.integrations.stores.locations import chunk_metadata
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.integrations.stores.sqlite._filtering import FIELDS_DDL, _allowed, field_rows
from sift.integrations.stores.sqlite._schema import DDL
from sift.types import Document

_FIELDS = ["tenant", "year", "tags", "lang", "score", "page", "section", "title", "doc_id"]
_TEXTS = ["acme", "Acme", "beta", "", "東京", "東京都", "営業部", "a\x00b", "1", "True", "2024-05"]
_SCALARS: list[Any] = [
    *_TEXTS,
    0,
    1,
    -3,
    2024,
    1.0,
    2.5,
    True,
    False,
    None,
    2**70,  # past SQLite's 64-bit integers: judged in Python
]
_OPS: list[FilterOp] = list(get_args(FilterOp))

scalars = st.sampled_from(_SCALARS)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.just([[1, 2]]),  # a list inside a list: opaque to SQL, as to Python's ==
)
metadata = st.dictionaries(st.sampled_from(_FIELDS[:5]), values, min_size=1, max_size=4)
conditions = st.builds(
    Condition,
    # Mostly the fields documents have, so that filters split them.
    field=st.one_of(st.sampled_from(_FIELDS[:3]), st.sampled_from(_FIELDS)),
    op=st.sampled_from(_OPS),
    value=st.one_of(scalars, st.lists(scalars, max_size=3), st.sampled_from(["", "東", "cm"])),
)
filters = st.builds(
    Filter,
    logic=st.sampled_from(["and", "or"]),
    conditions=st.lists(conditions, min_size=1, max_size=3).map(tuple),
)


def _database(docs: list[dict[str, Any]]) -> sqlite3.Connection:
    """The store's own tables, holding `docs`: two chunks each; every other document
    has a page table, so `page` is a chunk's own field there."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(DDL + FIELDS_DDL)
    import json

    for doc, meta in enumerate(docs, start=1):
        meta = dict(meta)
        if doc % 2:
            meta.pop("page", None)
            meta["page_starts"] = [0, 5]
        conn.execute(
            "INSERT INTO documents (id, doc_id, title, hash, metadata, n_chunks) "
            "VALUES (?, ?, ?, '', ?, 2)",
            (doc, f"d{doc}", ["東京", "Acme report", ""][doc % 3], json.dumps(meta)),
        )
        conn.executemany(
            "INSERT INTO chunks (doc, idx, text, start, end, tokens) VALUES (?, ?, '', ?, ?, 1)",
            [(doc, 0, 0, 5), (doc, 1, 5, 10)],
        )
        conn.executemany(
            "INSERT INTO fields (doc, name, ord, kind, value, text, listed) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            field_rows(doc, meta),
        )
    return conn


def _expected(conn: sqlite3.Connection, spec: Filter) -> set[int]:
    import json

    rows = conn.execute(
        "SELECT c.id, c.start, c.end, d.doc_id, d.title, d.metadata "
        "FROM chunks c JOIN documents d ON d.id = c.doc"
    )
    return {
        rowid
        for rowid, start, end, doc_id, title, meta in rows
        if matches(
            spec,
            {**chunk_metadata(json.loads(meta), start, end), "doc_id": doc_id, "title": title},
        )
    }


@settings(max_examples=400, deadline=None)
@given(docs=st.lists(metadata, min_size=1, max_size=12), spec=filters)
def test_the_chunks_a_filter_allows_are_those_matches_allows(
    docs: list[dict[str, Any]], spec: Filter
) -> None:
    conn = _database(docs)
    allowed = _allowed(conn, spec)
    # None: a filter its SQL cannot say (per-chunk fields under `or`, a list inside a
    # list as a value); the store then judges each result with `matches` itself.
    note(f"translated: {allowed is not None}")
    if allowed is not None:
        assert set(allowed.rowids.tolist()) == _expected(conn, spec)
        assert list(allowed.rowids) == sorted(allowed.rowids)
        _check_terms_cover(conn, allowed)


def _check_terms_cover(conn: sqlite3.Connection, allowed: Any) -> None:
    """The BM25 index keeps only the allowed among what its terms match: every allowed
    chunk's document must hold one of each field's term values."""
    import json

    for name, values in allowed.terms:
        for rowid in allowed.rowids.tolist():
            (meta,) = conn.execute(
                "SELECT d.metadata FROM chunks c JOIN documents d ON d.id = c.doc WHERE c.id = ?",
                (rowid,),
            ).fetchone()
            held = json.loads(meta).get(name)
            items = held if isinstance(held, list) else [held]
            assert any(isinstance(i, str) and i in values for i in items), (name, held)


def test_a_text_range_is_said_as_the_allowed_documents_values() -> None:
    """tantivy-py ranges no text terms: a text range becomes the values the allowed
    documents hold on its field, when each holds one the index keeps as a term."""
    conn = _database([{"day": f"2010-{m:02d}-01"} for m in range(1, 13)])
    allowed = _allowed(conn, Filter.of({"day": {"gte": "2010-03-01", "lt": "2010-06-01"}}))
    assert allowed is not None and len(allowed) == 3 * 2  # March to May, two chunks each
    [(name, values)] = allowed.terms
    assert name == "day" and sorted(values) == ["2010-03-01", "2010-04-01", "2010-05-01"]
    _check_terms_cover(conn, allowed)
    ja = _database([{"時代": "令和2"}, {"時代": "平成3"}, {"時代": "令和5"}, {"時代": "昭和"}])
    allowed = _allowed(ja, Filter.of({"時代": {"gte": "令和", "lt": "令和9"}}))
    assert allowed is not None and sorted(allowed.terms[0][1]) == ["令和2", "令和5"]
    # Each condition holds for some item of a list: [2010-01, 2019-12] is "from 2012-01"
    # by one and "before 2013-01" by the other, so its items are terms too.
    spans = _database([{"span": ["2010-01", "2019-12"]}, {"span": "2012-06"}, {"span": "2016-06"}])
    allowed = _allowed(spans, Filter.of({"span": {"gte": "2012-01", "lt": "2013-01"}}))
    assert allowed is not None and len(allowed) == 2 * 2
    assert sorted(allowed.terms[0][1]) == ["2010-01", "2012-06", "2019-12"]
    _check_terms_cover(spans, allowed)
    # A value the index keeps no term of (too long), a number range, `or`: no terms.
    for docs, spec in (
        ([{"day": "2010-03-01" + "x" * 300}, {"day": "2010-04-01"}], {"day": {"gte": "2010-03"}}),
        ([{"day": 3}, {"day": 4}], {"day": {"gte": 3}}),
    ):
        found = _allowed(_database(docs), Filter.of(spec))
        assert found is not None and len(found) and found.terms == ()
    either = Filter(
        logic="or",
        conditions=(
            Condition(field="day", op="gte", value="2010-11"),
            Condition(field="day", op="lt", value="2010-02"),
        ),
    )
    found = _allowed(conn, either)
    assert found is not None and len(found) == 3 * 2 and found.terms == ()


def test_most_filters_are_said_in_sql() -> None:
    """The fallback is the exception: the common shapes all translate."""
    conn = _database([{"tenant": "acme", "year": 2024, "tags": ["a", "東京"]}])
    for spec in (
        Filter.of({"tenant": "acme"}),
        Filter.of({"tenant": ["acme", "beta"], "year": {"gte": 2000, "lt": 2030}}),
        Filter.of({"tags": "東京", "page": {"gte": 1}}),
        Filter(conditions=(Condition(field="tenant", op="ne", value=None),)),
        Filter(
            logic="or",
            conditions=(
                Condition(field="tenant", op="starts_with", value="ac"),
                Condition(field="title", op="contains", value="東京"),
            ),
        ),
    ):
        assert spec is not None
        allowed = _allowed(conn, spec)
        assert allowed is not None, spec
        assert set(allowed.rowids.tolist()) == _expected(conn, spec)


# --- every search mode, on a real store -------------------------------------------------

_WORDS = ["river", "bridge", "castle", "harbour", "東京", "大阪", "港", "橋", "invoice", "report"]


def _documents() -> list[Document]:
    rng = np.random.default_rng(7)
    docs = []
    for i in range(80):
        words = rng.choice(_WORDS, size=12).tolist()
        docs.append(
            Document(
                id=f"doc{i}",
                title=f"文書 {i}" if i % 3 == 0 else f"Doc {i}",
                text=" ".join(words) + f" marker{i % 7}",
                metadata={
                    "tenant": ["acme", "beta", "東京商事", "gamma"][i % 4] if i % 10 else "rare",
                    "year": 1990 + i % 30,
                    "tags": [["a"], ["b", "東京"], []][i % 3],
                    **({"score": 0.5 * i} if i % 5 else {}),
                },
            )
        )
    return docs


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteCorpus]:
    path: Path = tmp_path_factory.mktemp("filters") / "store"
    with SqliteCorpus(path, embedder="hash") as corpus:
        corpus.upsert(_documents())
        yield corpus


def _record(hit: Any) -> dict[str, Any]:
    return {**hit.chunk.metadata, "doc_id": hit.chunk.doc_id, "title": hit.chunk.title}


store_filters = st.builds(
    Filter,
    logic=st.sampled_from(["and", "or"]),
    conditions=st.lists(
        st.builds(
            Condition,
            field=st.sampled_from(["tenant", "year", "tags", "score", "title"]),
            op=st.sampled_from(_OPS),
            value=st.sampled_from(
                ["acme", "rare", "東京商事", "東京", "b", "Doc", 1995, 2010, 10.0, ["acme", "rare"]]
            ),
        ),
        min_size=1,
        max_size=2,
    ).map(tuple),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    spec=store_filters,
    query=st.sampled_from(["river castle", "東京 港", "invoice marker3", "橋 report"]),
)
def test_each_mode_returns_the_top_k_of_the_matching_chunks(
    store: SqliteCorpus, spec: Filter, query: str
) -> None:
    for mode in ("bm25", "dense", "hybrid"):
        got = store.search(query, k=5, mode=mode, filters=spec)
        assert all(matches(spec, _record(h)) for h in got), mode
        everything = store.search(query, k=200, mode=mode)
        matching = [h for h in everything if matches(spec, _record(h))]
        assert len(got) == min(5, len(matching)), mode
        if mode != "hybrid":
            # Exact: the same chunks with the same scores as ranking the matching ones
            # alone (hybrid fuses two lists cut at their own depth, so only its purity
            # and count are fixed).
            assert [h.chunk.chunk_id for h in got] == [h.chunk.chunk_id for h in matching[:5]]
            assert [h.score for h in got] == pytest.approx([h.score for h in matching[:5]])
    hits = store.grep(r"marker[0-6]", k=7, filters=spec).hits
    every = [h for h in store.grep(r"marker[0-6]", k=200).hits if matches(spec, _record(h))]
    assert [h.chunk.chunk_id for h in hits] == [h.chunk.chunk_id for h in every[:7]]


def test_a_filter_follows_writes(store: SqliteCorpus, tmp_path: Path) -> None:
    """The chunks a filter allows are worked out again after a write: a new document
    under the tenant is found, a deleted one is gone."""
    spec = Filter.of({"tenant": "rare"})
    before = {h.chunk.doc_id for h in store.search("river", k=50, mode="bm25", filters=spec)}
    store.upsert([Document(id="late", text="river river", metadata={"tenant": "rare"})])
    after = {h.chunk.doc_id for h in store.search("river", k=50, mode="bm25", filters=spec)}
    assert after == before | {"late"}
    store.delete(["late"])
    again = {h.chunk.doc_id for h in store.search("river", k=50, mode="bm25", filters=spec)}
    assert again == before


@pytest.mark.parametrize(
    "spec",
    [
        {"tenant": "half"},  # wide: the ranking asked deeper, the rest dropped
        {"tenant": "few"},  # a text equality: tantivy's meta terms
        {"tenant": ["few", "東京"]},  # the same, one of two values
        {"n": {"gte": 100, "lt": 160}},  # no text equality, few chunks: a rowid term set
        {"n": {"gte": 0, "lt": 400}},  # no text equality, many: asked deeper
        {"tenant": "half", "n": {"lt": 300}},  # terms too wide: asked deeper, then checked
        {"day": {"gte": "2012-01-01", "lt": "2013-01-01"}},  # a text range: its values
        {"span": {"gte": "2012-01", "lt": "2013-01"}},  # a list may straddle the range
        {"era": {"gte": "令和1", "lt": "令和2"}},  # Japanese values
        {"day": {"gte": "2012-05-01", "lt": "2012-05-02"}},  # one value holds no term
    ],
    ids=[
        "wide",
        "terms",
        "terms-in",
        "rowid-set",
        "deeper",
        "mixed",
        "range",
        "range-list",
        "range-ja",
        "range-long",
    ],
)
def test_every_bm25_path_returns_the_top_k_of_the_matching_chunks(
    tmp_path: Path, spec: dict[str, Any]
) -> None:
    docs = [
        Document(
            id=f"p{i}",
            text=f"river {'castle ' * (i % 7)}harbour {i}",
            metadata={
                "tenant": "half" if i % 2 else ("few" if i % 20 == 0 else "東京"),
                "n": i,
                "day": f"20{10 + i % 10}-{i % 12 + 1:02d}-01" + ("x" * 300 if i == 52 else ""),
                "span": (
                    [f"20{10 + i % 10}-01", f"20{19 - i % 10}-12"]
                    if i % 10 == 0
                    else f"20{10 + i % 10}-06"
                ),
                "era": ["令和", "平成", "昭和"][i % 3] + str(i % 30),
            },
        )
        for i in range(1000)  # every chunk within one search of k 1000
    ]
    with SqliteCorpus(tmp_path / "s", embedder="hash") as corpus:
        corpus.upsert(docs)
        parsed = Filter.of(spec)
        for k in (5, 30):
            got = corpus.search("castle river", k=k, mode="bm25", filters=spec)
            every = corpus.search("castle river", k=1000, mode="bm25")
            want = [h for h in every if matches(parsed, _record(h))][:k]
            assert [h.chunk.chunk_id for h in got] == [h.chunk.chunk_id for h in want]
            assert [h.score for h in got] == pytest.approx([h.score for h in want])


def test_a_version_2_store_gains_its_filter_rows_when_opened_for_writing(tmp_path: Path) -> None:
    """A store written before the `fields` table (schema 2): opened read-only it filters
    as before (after ranking); opened for writing it is migrated, its rows filled from
    the documents' metadata, and filters run inside the index."""
    import sqlite3

    path = tmp_path / "old"
    with SqliteCorpus(path, embedder="hash") as corpus:
        corpus.upsert(_documents())
        expected = [
            h.chunk.chunk_id for h in corpus.search("river", k=8, filters={"tenant": "rare"})
        ]
    conn = sqlite3.connect(path / "sift.db")
    conn.execute("DROP TABLE fields")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with SqliteCorpus(path, writer=False) as reader:
        assert reader.stats().schema_version == 2  # read as it is, not migrated
        got = reader.search("river", k=8, filters={"tenant": "rare"})
        assert [h.chunk.chunk_id for h in got] == expected
    with SqliteCorpus(path) as writer:
        assert writer.stats().schema_version == 3
        got = writer.search("river", k=8, filters={"tenant": "rare"})
        assert [h.chunk.chunk_id for h in got] == expected
    conn = sqlite3.connect(path / "sift.db")
    (rows,) = conn.execute("SELECT count(*) FROM fields WHERE name = 'tenant'").fetchone()
    conn.close()
    assert rows == 80


@pytest.mark.parametrize("share", ["few", "many"])
def test_the_hnsw_graph_ranks_inside_a_filter(
    tmp_path: Path, share: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the approximate index: a filter's few chunks are scored exactly from the
    graph's vectors, many are found by walking deeper (past `_EXACT_FILTERED`, here made
    small, where an exact pass would cost more: `_ROWS_PER_STEP` made 1); either way only
    matching chunks, k of them, and the few ranked as an exact pass over them ranks them."""
    from sift.integrations.stores.sqlite import _ann

    monkeypatch.setattr(_ann, "_EXACT_FILTERED", 100)
    monkeypatch.setattr(_ann, "_ROWS_PER_STEP", 1)
    docs = [
        Document(
            id=f"v{i}",
            text=f"harbour bridge {i} " + ("東京 " if i % 3 else "river ") * (i % 5),
            metadata={"group": "few" if i % 40 == 0 else "many"},
        )
        for i in range(600)
    ]
    with SqliteCorpus(
        tmp_path / "ann", embedder="hash", vector_index="ann", ann_threshold=1
    ) as corpus:
        corpus.upsert(docs)
        assert corpus.stats().extra["vector_index"] == "ann"
        got = corpus.search("harbour river", k=8, mode="dense", filters={"group": share})
        assert len(got) == 8 and all(h.chunk.metadata["group"] == share for h in got)
        scores = [h.score for h in got]
        assert scores == sorted(scores, reverse=True)
        if share == "few":
            # Scored from the graph's own (bfloat16) vectors in float32: the scores the
            # graph gives, to its rounding, and the best of them (ties in any order).
            every = corpus.search("harbour river", k=600, mode="dense")
            graph = {h.chunk.chunk_id: h.score for h in every if h.chunk.metadata["group"] == "few"}
            scores = [h.score for h in got]
            assert scores == pytest.approx([graph[h.chunk.chunk_id] for h in got], abs=1e-2)
            assert scores == pytest.approx(sorted(graph.values(), reverse=True)[:8], abs=1e-2)


@pytest.mark.parametrize(
    ("rows_per_step", "cap", "walked"),
    [(70, 64 << 20, False), (1, 64 << 20, True), (70, 1024, True)],
    ids=["exact-pays", "walk-is-cheaper", "over-the-memory-cap"],
)
def test_a_wide_filter_is_scored_exactly_where_the_walk_costs_more(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rows_per_step: int,
    cap: int,
    walked: bool,
) -> None:
    """Past `_EXACT_FILTERED` chunks, a filter's chunks are still scored exactly, alone,
    while that scores fewer than `_ROWS_PER_STEP` chunks a step of the walk it replaces
    and their matrix fits `_EXACT_FILTERED_BYTES`; otherwise the graph is walked deeper.
    The exact pass gives the graph's own scores of the best allowed chunks."""
    from sift.integrations.stores.sqlite import _ann

    monkeypatch.setattr(_ann, "_EXACT_FILTERED", 100)
    monkeypatch.setattr(_ann, "_ROWS_PER_STEP", rows_per_step)
    monkeypatch.setattr(_ann, "_EXACT_FILTERED_BYTES", cap)
    walks: list[int] = []
    walk = _ann.AnnVectors._search

    def counted(self: Any, query: Any, limit: int, exclude: Any = ()) -> Any:
        walks.append(limit)
        return walk(self, query, limit, exclude)

    monkeypatch.setattr(_ann.AnnVectors, "_search", counted)
    docs = [
        Document(
            id=f"w{i}",
            text=f"港の橋 harbour {i} " + ("東京 " if i % 3 else "river ") * (i % 5),
            metadata={"group": "wide" if i % 4 else "narrow"},
        )
        for i in range(600)
    ]
    with SqliteCorpus(
        tmp_path / "ann", embedder="hash", vector_index="ann", ann_threshold=1
    ) as corpus:
        corpus.upsert(docs)
        got = corpus.search("東京 river", k=8, mode="dense", filters={"group": "wide"})
        assert bool(walks) is walked
        assert len(got) == 8 and all(h.chunk.metadata["group"] == "wide" for h in got)
        if not walked:
            walks.clear()
            every = corpus.search("東京 river", k=600, mode="dense")
            graph = {
                h.chunk.chunk_id: h.score for h in every if h.chunk.metadata["group"] == "wide"
            }
            assert len(graph) == 450
            assert [h.score for h in got] == pytest.approx(
                sorted(graph.values(), reverse=True)[:8], abs=1e-2
            )
