"""The eval's cached store: built once, reused, rebuilt when what decides the index changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sift.integrations.eval import EvalError, load_dataset, open_cached_store

CORPUS = [
    {"id": "a", "title": "Alpha", "text": "The alpha passage mentions saffron."},
    {"id": "b", "title": "Beta", "text": "The beta passage mentions cobalt."},
]
QUESTIONS = [
    {
        "id": "q",
        "question": "Which passage mentions saffron?",
        "answers": ["alpha"],
        "supporting_doc_ids": ["a"],
    }
]


def _open(dataset_dir: Path, cache: Path) -> tuple[bool, list[str]]:
    corpus, rebuilt, _ = open_cached_store(load_dataset(dataset_dir), cache, "hash")
    try:
        ids = [hit.chunk.doc_id for hit in corpus.search("saffron", k=2, mode="bm25")]
    finally:
        corpus.close()
    return rebuilt, ids


def test_built_once_then_reused(tmp_path: Path, write_dataset) -> None:
    folder = write_dataset(tmp_path / "d", CORPUS, QUESTIONS)
    assert _open(folder, tmp_path / "cache") == (True, ["a"])
    assert _open(folder, tmp_path / "cache") == (False, ["a"])
    (manifest,) = (tmp_path / "cache").glob("d-hash-*/manifest.json")
    recorded = json.loads(manifest.read_text())
    assert recorded["complete"] is True and recorded["passages"] == 2


def test_rebuilt_when_the_indexing_code_changes(tmp_path: Path, write_dataset) -> None:
    folder = write_dataset(tmp_path / "d", CORPUS, QUESTIONS)
    assert _open(folder, tmp_path / "cache")[0] is True
    # A store built by other code (stores, chunking, embedders) records another fingerprint.
    (manifest,) = (tmp_path / "cache").glob("d-hash-*/manifest.json")
    recorded = json.loads(manifest.read_text())
    assert len(recorded["index_code"]) == 16
    manifest.write_text(json.dumps({**recorded, "index_code": "0" * 16}))
    assert _open(folder, tmp_path / "cache") == (True, ["a"])
    assert json.loads(manifest.read_text())["index_code"] == recorded["index_code"]


def test_interrupted_build_is_redone(tmp_path: Path, write_dataset) -> None:
    folder = write_dataset(tmp_path / "d", CORPUS, QUESTIONS)
    _open(folder, tmp_path / "cache")
    (manifest,) = (tmp_path / "cache").glob("d-hash-*/manifest.json")
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "complete": False}))
    assert _open(folder, tmp_path / "cache")[0] is True


def test_a_foreign_folder_is_never_removed(tmp_path: Path, write_dataset) -> None:
    folder = write_dataset(tmp_path / "d", CORPUS, QUESTIONS)
    cache = tmp_path / "cache"
    _open(folder, cache)
    (manifest,) = cache.glob("d-hash-*/manifest.json")
    manifest.unlink()
    keep = manifest.parent / "precious.txt"
    keep.write_text("not ours")
    with pytest.raises(EvalError, match="is not an eval store cache"):
        _open(folder, cache)
    assert keep.read_text() == "not ours"
