"""`sift.paths` reads SIFT_HOME and SIFT_STORE; `sift.open_store` finds back-ends through
the `sift.stores` entry-point group and names the registered schemes when one is unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

import sift
from sift import open_store, paths
from sift.errors import CorpusError
from sift.integrations.stores import open_store as integrations_open_store
from sift.integrations.stores.weaviate.testing import FakeWeaviate
from sift.types import Document


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SIFT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SIFT_STORE", raising=False)
    return tmp_path / "home"


def test_every_folder_derives_from_sift_home(home: Path) -> None:
    assert paths.sift_home() == home
    assert paths.default_store_path() == home / "store"
    assert paths.demo_store_path() == home / "demo"
    assert paths.eval_cache_path() == home / "eval-cache"
    assert paths.collections_path() == home / "collections"


def test_sift_store_wins_and_empty_variables_count_as_unset(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIFT_STORE", "~/elsewhere/store")
    assert paths.default_store_path() == Path("~/elsewhere/store").expanduser()
    monkeypatch.setenv("SIFT_STORE", "")
    monkeypatch.setenv("SIFT_HOME", "")
    assert paths.sift_home() == Path("~/.sift").expanduser()
    assert paths.default_store_path() == Path("~/.sift/store").expanduser()


def test_a_url_in_sift_store_is_kept_as_given(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = "weaviate://db.internal:8080?grpc=50051&collection=Docs"
    monkeypatch.setenv("SIFT_STORE", url)
    assert paths.default_store_location() == url
    with pytest.raises(ValueError, match="SIFT_STORE names a weaviate:// store"):
        paths.default_store_path()
    folder = home / "ストア store"
    monkeypatch.setenv("SIFT_STORE", folder.as_uri())
    assert paths.default_store_path() == folder
    monkeypatch.setenv("SIFT_STORE", "~/elsewhere/store")
    assert paths.default_store_location() == str(Path("~/elsewhere/store").expanduser())


def test_open_store_opens_the_url_sift_store_names(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeWeaviate() as fake:
        monkeypatch.setenv("SIFT_STORE", fake.url(collection="Default"))
        corpus = open_store(embedder="hash")
        try:
            corpus.upsert([Document(id="d1", title="Szeged", text="Szeged lies on the Tisza.")])
        finally:
            corpus.close()
        assert len(fake.objects("Default")) == 1
    assert not home.exists()  # nothing was created as a folder


def test_readers_follow_sift_paths(home: Path) -> None:
    from sift.integrations.eval import default_store_cache
    from sift.integrations.http import ServerSettings

    assert default_store_cache() == home / "eval-cache"
    assert ServerSettings().store_root() == str(home / "collections")


def test_open_store_defaults_to_the_configured_store(home: Path) -> None:
    corpus = open_store(embedder="hash")
    try:
        corpus.upsert([Document(id="d1", title="Szeged", text="Szeged lies on the Tisza.")])
    finally:
        corpus.close()
    assert (home / "store").is_dir()
    again = integrations_open_store(home / "store", create=False)
    try:
        assert again.read("d1")[0].text == "Szeged lies on the Tisza."
    finally:
        again.close()


def test_file_urls_open_the_embedded_store(tmp_path: Path) -> None:
    folder = tmp_path / "ストア store"
    corpus = open_store(folder.as_uri(), embedder="hash")
    # The store is made by its first write: a path only read from is never created.
    assert corpus.upsert([Document(id="d1", text="Szeged lies on the Tisza.")]).added == 1
    corpus.close()
    assert (folder / "sift.db").is_file()


def test_unknown_scheme_lists_the_registered_ones(tmp_path: Path) -> None:
    with pytest.raises(CorpusError) as info:
        open_store("elastic://localhost:9200/docs")
    message = str(info.value)
    assert "no store for elastic://" in message
    assert "registered schemes: file, sqlite, weaviate, weaviates" in message


def test_the_package_root_loads_no_adapter_until_a_store_is_opened() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, sift; "
        "print(sorted(m for m in sys.modules if m.startswith(('sift.integrations', "
        "'sift.graphs', 'sift.nodes'))))"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert run.stdout.strip() == "[]"
    assert sift.open_store is open_store


def test_every_registered_back_end_loads() -> None:
    from importlib.metadata import entry_points

    loaded = {entry.name: entry.load() for entry in entry_points(group="sift.stores")}
    assert {"file", "weaviate", "weaviates"} <= set(loaded)
    assert all(callable(factory) for factory in loaded.values())
