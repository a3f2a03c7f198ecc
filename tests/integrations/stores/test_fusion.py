"""Hybrid fusion strategies and the alpha defaults (sift.fusion)."""

from __future__ import annotations

import pytest

from sift.fusion import (
    check_alpha,
    fuse,
    fusion_names,
    relative_score_fusion,
    rrf_fusion,
)

DENSE = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
LEXICAL = [("c", 12.0), ("d", 6.0), ("a", 3.0)]


def test_relative_score_fusion_matches_weaviate() -> None:
    fused = dict(relative_score_fusion(DENSE, LEXICAL, 0.5))
    # dense normalised: a 1, b 0.875, c 0; lexical: c 1, d 1/3, a 0
    assert fused["a"] == pytest.approx(0.5)
    assert fused["b"] == pytest.approx(0.4375)
    assert fused["c"] == pytest.approx(0.5)
    assert fused["d"] == pytest.approx(1 / 6)
    order = [key for key, _ in relative_score_fusion(DENSE, LEXICAL, 0.5)]
    assert order == ["c", "a", "b", "d"]  # tie a/c broken by lexical rank


def test_rrf_fusion_is_weighted() -> None:
    fused = dict(rrf_fusion(DENSE, LEXICAL, 0.25))
    assert fused["a"] == pytest.approx(0.25 / 61 + 0.75 / 63)
    assert fused["d"] == pytest.approx(0.75 / 62)


@pytest.mark.parametrize("name", ["relative_score", "rrf"])
def test_alpha_extremes_reproduce_one_list(name: str) -> None:
    assert [k for k, _ in fuse(name, DENSE, LEXICAL, 0.0)][:3] == ["c", "d", "a"]
    assert [k for k, _ in fuse(name, DENSE, LEXICAL, 1.0)][:3] == ["a", "b", "c"]


def test_unknown_fusion_lists_names() -> None:
    assert fusion_names() == ("relative_score", "rrf")
    with pytest.raises(ValueError, match="valid names: relative_score, rrf"):
        fuse("borda", DENSE, LEXICAL, 0.5)


@pytest.mark.parametrize("alpha", [-0.1, 1.5, True, "0.5", None])
def test_alpha_outside_zero_one_is_refused(alpha: object) -> None:
    with pytest.raises(ValueError, match="alpha must be a number between 0 and 1"):
        check_alpha(alpha)
