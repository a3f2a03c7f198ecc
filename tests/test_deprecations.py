"""Names that moved keep working for one release, each with a DeprecationWarning that
says where the thing lives now."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from sift.entity_graph import EntityGraphConfig, build_entity_graph, build_graph
from sift.fusion import rrf_scores


def test_the_entity_graph_builder_answers_to_its_old_name() -> None:
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
