"""Both stores refuse the same bad arguments with the same message (one checking layer).

Every case runs on every backend of `corpus_factory`, and the full messages of the embedded
store and of Weaviate (on the loopback fake) are compared, so a store that words a refusal
its own way fails here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sift.errors import InvalidPatternError, InvalidQueryError
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.integrations.stores.weaviate import WeaviateCorpus
from sift.integrations.stores.weaviate.testing import FakeWeaviate
from sift.protocols import Corpus
from sift.types import Document

Call = Callable[[Corpus], Any]

BAD_CALLS: dict[str, tuple[Call, type[Exception], str]] = {
    "empty query": (lambda c: c.search("  \n"), InvalidQueryError, "query is empty"),
    "query not a string": (
        lambda c: c.search(42),  # type: ignore[arg-type]
        InvalidQueryError,
        "query must be a string, got int",
    ),
    "huge query": (lambda c: c.search("otter " * 1000), InvalidQueryError, "the limit is 2000"),
    "k zero": (lambda c: c.search("otter", k=0), ValueError, "k must be an integer between"),
    "k too big": (lambda c: c.search("otter", k=5000), ValueError, "between 1 and 1000"),
    "k a bool": (lambda c: c.search("otter", k=True), ValueError, "got True"),
    "grep k": (lambda c: c.grep("otter", k=-1), ValueError, "k must be an integer between"),
    "unknown mode": (
        lambda c: c.search("otter", mode="fuzzy"),  # type: ignore[arg-type]
        ValueError,
        "unknown search mode 'fuzzy'; valid modes: hybrid, bm25, dense",
    ),
    "alpha too big": (
        lambda c: c.search("otter", alpha=1.5),
        ValueError,
        "alpha must be a number between 0 and 1, got 1.5",
    ),
    "alpha a string": (
        lambda c: c.search("otter", alpha="0.5"),  # type: ignore[arg-type]
        ValueError,
        "alpha must be a number between 0 and 1",
    ),
    "filters a list": (
        lambda c: c.search("otter", filters=["lang"]),  # type: ignore[arg-type]
        ValueError,
        "filters must be a Filter or a mapping",
    ),
    "filters with a bad condition": (
        lambda c: c.search("otter", filters={"conditions": [{"field": "", "op": "eq"}]}),
        ValueError,
        "invalid filters: conditions[0].field",
    ),
    "grep filters a string": (
        lambda c: c.grep("otter", filters="lang=en"),  # type: ignore[arg-type]
        ValueError,
        "filters must be a Filter or a mapping",
    ),
    "exclude a bare string": (
        lambda c: c.search("otter", exclude="doc-1_0"),
        ValueError,
        "exclude must be a list of strings, got str 'doc-1_0'",
    ),
    "exclude with a number": (
        lambda c: c.grep("otter", exclude=["doc-1_0", 3]),  # type: ignore[list-item]
        ValueError,
        "exclude must hold strings only, got int 3",
    ),
    "bad pattern": (lambda c: c.grep("(a)\\1"), InvalidPatternError, "backreferences"),
    "empty pattern": (lambda c: c.grep(""), InvalidPatternError, "pattern is empty"),
    "pattern not a string": (
        lambda c: c.grep(None),  # type: ignore[arg-type]
        InvalidPatternError,
        "pattern must be a string, got NoneType",
    ),
    "read a number": (
        lambda c: c.read(7),  # type: ignore[arg-type]
        ValueError,
        "doc_id must be a string, got int 7",
    ),
    "get_chunks a bare string": (
        lambda c: c.get_chunks("doc-1_0"),
        ValueError,
        "chunk_ids must be a list of strings, got str",
    ),
    "delete a bare string": (
        lambda c: c.delete("doc-1"),
        ValueError,
        "doc_ids must be a list of strings, got str 'doc-1'",
    ),
    "delete a number among ids": (
        lambda c: c.delete(["doc-1", None]),  # type: ignore[list-item]
        ValueError,
        "doc_ids must hold strings only, got NoneType None",
    ),
}

DOCS = [Document(id=f"doc-{i}", text=f"The otter number {i}.") for i in range(3)]


@pytest.fixture
def corpus(corpus_factory) -> Corpus:
    store = corpus_factory()
    store.upsert(DOCS)
    return store


def _refusals(corpus: Corpus) -> dict[str, str]:
    out = {}
    for name, (call, error, message) in BAD_CALLS.items():
        with pytest.raises(error) as caught:
            call(corpus)
        assert message in str(caught.value), name
        out[name] = str(caught.value)
    return out


def test_bad_arguments_are_refused_with_a_clear_message(corpus: Corpus) -> None:
    _refusals(corpus)
    # A refused delete removed nothing (a bare string is not read as single letters).
    assert corpus.stats().documents == 3
    assert [c.chunk_id for c in corpus.read("doc-1")] == ["doc-1_0"]


def test_both_stores_word_every_refusal_the_same(tmp_path: Path) -> None:
    with (
        FakeWeaviate() as fake,
        WeaviateCorpus(fake.settings(collection="Checks"), embedder="hash") as remote,
        SqliteCorpus(tmp_path / "store", embedder="hash") as local,
    ):
        remote.upsert(DOCS)
        local.upsert(DOCS)
        assert _refusals(remote) == _refusals(local)
