"""The embedded store's options from the environment, the store URL and `open_store`'s
arguments, in that order of precedence, as the Weaviate store's are."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift import open_store
from sift.integrations.stores.sqlite import EmbeddedSettings, SqliteCorpus, split_location
from sift.types import Document


def test_the_url_beats_the_environment_and_arguments_beat_the_url(monkeypatch) -> None:
    monkeypatch.setenv("SIFT_EMBEDDED_HYBRID_CANDIDATES", "7")
    monkeypatch.setenv("SIFT_EMBEDDED_BATCH_DOCS", "9")
    path, options = split_location("sqlite:///data/東京?batch_docs=3&vector_index=ann", {})
    assert path == "/data/東京"
    assert (options["hybrid_candidates"], options["batch_docs"]) == (7, 3)
    assert options["vector_index"] == "ann"
    _, options = split_location("file:///data/s?batch_docs=3", {"batch_docs": 1, "create": False})
    assert options["batch_docs"] == 1 and options["create"] is False
    # A plain path is a path, even with a question mark in it.
    assert split_location("notes?v=1", {})[0] == "notes?v=1"


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("sqlite:///s?bogus=1", "store URL option 'bogus' does not exist"),
        ("sqlite:///s?batch_docs=0", "store option batch_docs: Input should be greater"),
        ("sqlite:///s?alpha=2", "store option alpha: Input should be less than or equal to 1"),
    ],
)
def test_bad_options_are_named(location: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        split_location(location, {})


def test_a_bad_variable_is_named(monkeypatch) -> None:
    monkeypatch.setenv("SIFT_EMBEDDED_VECTOR_INDEX", "faiss")
    with pytest.raises(ValueError, match="store option vector_index"):
        split_location("/tmp/s", {})


def test_open_store_opens_with_them(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SIFT_EMBEDDED_MAX_QUERY_CHARS", "12")
    url = f"sqlite://{tmp_path / 'store'}?vector_index=exact"
    store = open_store(url, embedder="hash", create=True)
    assert isinstance(store, SqliteCorpus)
    try:
        store.upsert([Document(id="a", text="梅雨は初夏の雨の季節。")])
        assert store.search("梅雨", k=1)
        with pytest.raises(ValueError, match="12"):
            store.search("a question longer than twelve characters", k=1)
    finally:
        store.close()


def test_the_settings_hold_the_constructors_defaults() -> None:
    """One set of defaults: the settings' are `SqliteCorpus`'s."""
    import inspect

    parameters = inspect.signature(SqliteCorpus).parameters
    for name, field in EmbeddedSettings.model_fields.items():
        assert parameters[name].default == field.default, name
