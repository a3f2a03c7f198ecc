"""Settings, keys and the collection scheme, without a server."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sift.integrations.http import ServerSettings
from sift.integrations.http._auth import Authenticator
from sift.integrations.http._collections import Collections
from sift.integrations.http._errors import ApiError
from sift.integrations.http._settings import parse_api_keys


def test_keys_from_the_environment(monkeypatch):
    monkeypatch.setenv("SIFT_SERVER_API_KEYS", "alpha-key-1=docs,faq; beta-key-22\nomega-key-3=")
    keys = ServerSettings().load_keys()
    assert [k.key.get_secret_value() for k in keys] == ["alpha-key-1", "beta-key-22", "omega-key-3"]
    assert keys[0].collections == ("docs", "faq") and keys[0].allows("faq")
    assert not keys[0].allows("other")
    assert keys[1].allows("anything") and keys[2].allows("anything")
    assert "alpha-key-1" not in repr(keys[0])  # secrets stay out of logs


def test_short_or_spaced_keys_are_refused():
    with pytest.raises(ValueError, match="at least 8 characters"):
        parse_api_keys("short")


def test_keys_file_errors_name_the_file_and_entry(tmp_path: Path):
    bad = tmp_path / "keys.toml"
    bad.write_text('[[keys]]\nkey = "good-key-123"\n[[keys]]\nkey = "tiny"\n')
    with pytest.raises(ValueError, match=r"keys.toml: key #2"):
        ServerSettings(keys_file=bad).load_keys()
    broken = tmp_path / "keys.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        ServerSettings(keys_file=broken).load_keys()


def test_collections_file_is_validated(tmp_path: Path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"collections": {"../up": {}}}))
    with pytest.raises(ValueError, match="bad collection name"):
        ServerSettings(collections_file=path).load_collections()
    path.write_text(json.dumps({"collections": {"docs": {"mode": "fast"}}}))
    with pytest.raises(ValueError, match="collection 'docs'"):
        ServerSettings(collections_file=path).load_collections()


def test_collection_scheme(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    config = tmp_path / "c.toml"
    config.write_text(
        '[collections.wiki]\nlocation = "/data/wiki"\ndeadline_s = 2.5\nmode = "single_shot"\n'
    )
    collections = Collections(ServerSettings(store=str(tmp_path), collections_file=config))
    assert collections.names() == ["docs", "wiki"]
    docs = collections.get("docs")
    assert docs.location == str(tmp_path / "docs") and docs.mode == "agentic"
    assert docs.retrieval_deadline_s == 4.0
    wiki = collections.get("wiki")
    assert (wiki.location, wiki.mode, wiki.retrieval_deadline_s) == (
        "/data/wiki",
        "single_shot",
        2.5,
    )
    with pytest.raises(ApiError) as missing:
        collections.get("nope")
    assert missing.value.code == 2001 and missing.value.status == 404
    assert collections.get("nope", create=True).location == str(tmp_path / "nope")
    for bad in ("..", "a/b", "", ".x", "x" * 129):
        with pytest.raises(ApiError) as refused:
            collections.get(bad, create=True)
        assert refused.value.status == 422


def test_weaviate_root_maps_names_to_collections(tmp_path: Path):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"collections": {"Papers": {"tenant": "acme"}}}))
    collections = Collections(
        ServerSettings(store="weaviate://10.0.0.5:8080?grpc=50051", collections_file=config)
    )
    papers = collections.get("Papers")
    assert papers.location == "weaviate://10.0.0.5:8080?grpc=50051&collection=Papers"
    assert papers.config.tenant == "acme"
    with pytest.raises(ApiError):
        collections.get("Unlisted")


def test_anonymous_mode_accepts_any_caller():
    auth = Authenticator([], anonymous=True)
    assert auth.identify(None) is None
    assert auth.identify("Bearer whatever-they-send") is None
    closed = Authenticator(parse_api_keys("the-only-key-1"))
    with pytest.raises(ApiError) as wrong:
        closed.identify("Bearer the-only-key-2")
    assert wrong.value.code == 1002
    assert closed.identify("Bearer the-only-key-1").name == "env#1"


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([], []),
        ([0.9, 0.4, 0.1], [0.9, 0.4, 0.1]),  # already in [0, 1]: kept
        ([3.0, 1.5, 0.75], [1.0, 0.5, 0.25]),  # ratio to the best
        ([2.0, -1.0], [1.0, 0.005]),  # a negative: its floor, above 0
        ([0.5, 0.8, 0.2], [0.5, 0.499999, 0.2]),  # under a better-ranked record
        ([0.5, 0.5, 0.0], [0.5, 0.499999, 0.01 / 3]),  # a tie split; a 0 kept in place
        ([-2.0, -3.0], [0.01, 0.005]),
    ],
)
def test_unit_scores(scores, expected):
    from sift.integrations.http._dify import unit_scores

    assert unit_scores(scores) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@given(
    st.lists(
        st.one_of(
            st.floats(-5, 5, allow_nan=False),
            st.sampled_from([0.0, 0.5, 1.0]),  # ties and zeros, as rankings hold them
        ),
        max_size=200,
    )
)
def test_unit_scores_keep_the_ranking_above_zero(scores):
    """Dify drops records under its threshold and sorts by score: every record sent
    scores in (0, 1], each strictly under the one ranked above it."""
    from sift.integrations.http._dify import unit_scores

    mapped = unit_scores(scores)
    assert len(mapped) == len(scores)
    assert all(0.0 < s <= 1.0 for s in mapped)
    assert all(a > b for a, b in itertools.pairwise(mapped))
    assert sorted(range(len(mapped)), key=lambda i: -mapped[i]) == list(range(len(mapped)))
