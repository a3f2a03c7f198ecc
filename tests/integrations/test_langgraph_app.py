"""langgraph.json and the factory it names, as a LangGraph server loads them.

A real `langgraph dev` needs the `langgraph-server` extra, whose pins clash with the dev
environment's (see pyproject.toml); checks/langgraph_dev.py runs that check in
a venv of its own. Here: the configuration resolves, the factory serves a working graph
over the store it is told, and a missing store is refused by name.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest

from sift.errors import NotAStoreError
from sift.integrations.langgraph_app import ServedGraphSettings, build_served_graph, make_graph
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    corpus = SqliteCorpus(tmp_path / "store", embedder="hash")
    corpus.upsert(
        [
            Document(id="etna", title="Mount Etna", text="Mount Etna is a volcano on Sicily."),
            Document(id="fuji", title="富士山", text="富士山は日本一高い山です。"),
        ]
    )
    corpus.close()
    return tmp_path / "store"


def test_langgraph_json_names_the_factory() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    assert config["dependencies"] == ["."]
    spec = config["graphs"]["sift"]
    module_name, variable = spec["path"].split(":")
    factory = getattr(importlib.import_module(module_name), variable)
    assert factory is make_graph
    # A zero-argument coroutine: LangGraph servers await it inside their event loop.
    assert inspect.iscoroutinefunction(factory)
    assert not inspect.signature(factory).parameters


async def test_the_factory_serves_the_store_it_is_told(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIFT_STORE", str(store))
    graph = await make_graph()
    assert await make_graph() is graph  # the store is opened once per process
    assert "question" in graph.get_input_jsonschema()["properties"]
    assert "evidence" in graph.get_output_jsonschema()["properties"]
    out = await graph.ainvoke({"question": "Which volcano is on Sicily?", "max_turns": 2})
    assert out["evidence"][0].doc_id == "etna"
    assert out["usage"].turns <= 2


def test_a_missing_store_is_refused_by_name(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(NotAStoreError, match=f"no sift store at {missing}"):
        build_served_graph(ServedGraphSettings(), store=str(missing))
    assert not missing.exists()


def test_the_policy_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIFT_GRAPH_POLICY", "gpt")
    with pytest.raises(ValueError, match="heuristic"):
        ServedGraphSettings()


async def test_the_served_graph_answers_japanese(
    tmp_path: Path, japanese_sample, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = SqliteCorpus(tmp_path / "ja")  # the default embedder
    corpus.upsert(japanese_sample.documents)
    corpus.close()
    graph = build_served_graph(ServedGraphSettings(), store=str(tmp_path / "ja"))
    question = "日本で梅雨がないのは北海道とどこか。"
    out = await graph.ainvoke({"question": question})
    assert japanese_sample.gold(question) in [e.doc_id for e in out["evidence"][:10]]
