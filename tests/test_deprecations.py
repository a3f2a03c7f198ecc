"""Names that moved keep working for one release, each with a DeprecationWarning that
says where the thing lives now."""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType

import pytest

from sift.entities import EntityGraphConfig, build_entity_graph
from sift.fusion import rrf_scores


def _old_module(name: str, new_home: str) -> ModuleType:
    sys.modules.pop(name, None)
    with pytest.warns(DeprecationWarning, match=f"{name} moved to {new_home}"):
        return importlib.import_module(name)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("sift.analysis", "sift.text"),
        ("sift.tokens", "sift.text"),
        ("sift.languages", "sift.text"),
        ("sift.entity_graph", "sift.entities"),
    ],
)
def test_the_moved_text_and_entity_modules_keep_their_names(old: str, new: str) -> None:
    module = _old_module(old, new)
    home = importlib.import_module(new)
    moved = [name for name in module.__all__ if name not in ("build_graph", "rrf_scores")]
    assert moved and all(getattr(module, name) is getattr(home, name) for name in moved)


def test_the_old_names_of_the_text_functions_still_work_in_japanese() -> None:
    analysis = _old_module("sift.analysis", "sift.text")
    tokens = _old_module("sift.tokens", "sift.text")
    languages = _old_module("sift.languages", "sift.text")
    assert analysis.has_cjk("金沢タワー") and not analysis.has_cjk("Kanazawa Tower")
    assert tokens.estimate_tokens("金沢タワーは兼六園の近くにあります。") > 0
    assert languages.guess_language("金沢タワーは兼六園の近くにあります。") == "ja"


def test_the_entity_graph_builder_answers_to_its_old_name() -> None:
    build_graph = _old_module("sift.entity_graph", "sift.entities").build_graph
    passages = [("a_0", "Kyoto", "Kyoto is in Japan."), ("b_0", "Osaka", "Osaka and Kyoto.")]
    with pytest.warns(DeprecationWarning, match="build_entity_graph"):
        old = build_graph(passages)
    new = build_entity_graph(passages)
    assert old.walk(["kyoto"]).chunks == new.walk(["kyoto"]).chunks
    assert old.chunk_ids == new.chunk_ids == ["a_0", "b_0"]


def test_the_entity_graph_settings_read_their_old_variables(monkeypatch) -> None:
    monkeypatch.setenv("SIFT_GRAPH_STEPS", "3")
    with pytest.warns(DeprecationWarning, match="SIFT_GRAPH_STEPS"):
        assert EntityGraphConfig().steps == 3
    # The new name wins over the old one.
    monkeypatch.setenv("SIFT_ENTITY_GRAPH_STEPS", "1")
    with pytest.warns(DeprecationWarning):
        assert EntityGraphConfig().steps == 1
    # The served graph's SIFT_GRAPH_POLICY is no entity graph setting: no warning.
    monkeypatch.delenv("SIFT_GRAPH_STEPS")
    monkeypatch.setenv("SIFT_GRAPH_POLICY", "heuristic")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert EntityGraphConfig().steps == 1


def test_the_stores_fusion_module_moved_to_sift_fusion() -> None:
    sys.modules.pop("sift.integrations.stores.fusion", None)
    with pytest.warns(DeprecationWarning, match="sift.fusion"):
        old = importlib.import_module("sift.integrations.stores.fusion")
    assert old.rrf_scores is rrf_scores
