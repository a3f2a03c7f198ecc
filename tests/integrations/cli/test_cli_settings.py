"""`--set KEY=VALUE` on `sift search`: every harness and planner setting from the command
line, validated by the settings models, each refusal a one-line error naming the key."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sift.graphs import HarnessConfig
from sift.graphs.policies import HeuristicPlannerConfig
from sift.integrations.stores.sqlite import EmbeddedSettings

QUESTION = "Where was the designer of the Basalt Bridge born?"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, sift_code: Callable[..., int]) -> Path:
    docs = tmp_path_factory.mktemp("inputs") / "docs"
    docs.mkdir()
    (docs / "bridge.md").write_text(
        "# Basalt Bridge\n\nThe Basalt Bridge was designed by Ilse Varga in 1931.",
        encoding="utf-8",
    )
    (docs / "varga.md").write_text(
        "# Ilse Varga\n\nIlse Varga was born in the town of Szeged.", encoding="utf-8"
    )
    (docs / "szeged.md").write_text("# Szeged\n\nSzeged lies on the Tisza.", encoding="utf-8")
    (docs / "橋.md").write_text(
        "# 玄武岩橋\n\n玄武岩橋はイルゼ・ヴァルガが設計した。", encoding="utf-8"
    )
    folder = tmp_path_factory.mktemp("store") / "store"
    assert sift_code("index", "--store", str(folder), "--embedder", "hash", "-q", str(docs)) == 0
    return folder


def _episode(sift, store: Path, *args: str, question: str = QUESTION) -> dict:
    run = sift("search", "--store", str(store), "--json", "-q", *args, question)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _error(sift, store: Path, *args: str) -> str:
    run = sift("search", "--store", str(store), "-q", *args, QUESTION)
    assert run.returncode == 2, run.stdout
    assert run.stderr.startswith("sift: error: ") and run.stderr.count("\n") == 1, run.stderr
    return run.stderr


def test_harness_settings_change_the_episode(sift, store: Path) -> None:
    default = _episode(sift, store)
    assert default["usage"]["turns"] > 1 and len(default["evidence"]) > 2
    limited = _episode(sift, store, "--set", "max_turns=1", "--set", "top_k=2")
    assert limited["usage"]["turns"] == 1 and limited["stopped_because"] == "max_turns"
    assert len(limited["evidence"]) == 2
    japanese = _episode(sift, store, "--set", "top_k=1", question="玄武岩橋を設計したのは誰?")
    assert [e["doc_id"] for e in japanese["evidence"]] == ["docs/橋.md"]


def test_planner_settings_reach_the_planner(sift, store: Path) -> None:
    default = _episode(sift, store)
    assert max(len(turn["calls"]) for turn in default["trace"]) > 1
    narrow = _episode(sift, store, "--set", "planner.max_calls_per_turn=1")
    assert all(len(turn["calls"]) <= 1 for turn in narrow["trace"])


def test_a_dedicated_flag_and_a_setting_must_agree(sift, store: Path) -> None:
    assert _episode(sift, store, "--max-turns", "1", "--set", "max_turns=1")["usage"]["turns"] == 1
    err = _error(sift, store, "--max-turns", "2", "--set", "max_turns=3")
    assert "--max-turns 2 and --set max_turns=3 disagree" in err
    err = _error(sift, store, "--top-k", "2", "--set", "top_k=3")
    assert "--top-k 2 and --set top_k=3 disagree" in err


def test_unknown_keys_suggest_the_nearest_and_set_help_lists_every_one(sift, store: Path) -> None:
    err = _error(sift, store, "--set", "max_turn=6")
    assert err == (
        "sift: error: unknown setting 'max_turn'; did you mean 'max_turns'? "
        "(sift search --set help lists them)\n"
    )
    # A key under the wrong prefix: the same key where it is.
    err = _error(sift, store, "--set", "planner.max_turns=6")
    assert "unknown setting 'planner.max_turns'; did you mean 'max_turns'?" in err
    err = _error(sift, store, "--set", "max_anchors=2")
    assert "unknown setting 'max_anchors'; did you mean 'planner.max_anchors'?" in err
    listed = sift("search", "--set", "help")
    assert listed.returncode == 0, listed.stderr
    keys = [line.split(" (", 1)[0] for line in listed.stdout.splitlines()]
    assert keys == [
        *HarnessConfig.model_fields,
        *(f"planner.{name}" for name in HeuristicPlannerConfig.model_fields),
        *(f"store.{name}" for name in EmbeddedSettings.model_fields),
        "store.<field> of WeaviateSettings for a weaviate:// store",
    ]


def test_store_options_reach_the_store(sift, store: Path) -> None:
    """`--set store.<option>` opens the store with it: a query limit of 10 characters
    refuses the question, naming the limit; a key this kind of store lacks, or a value
    it refuses, is one line naming it."""
    run = sift(
        "search",
        "--store",
        str(store),
        "--single-shot",
        "--set",
        "store.max_query_chars=10",
        QUESTION,
    )
    assert run.returncode != 0 and "10" in run.stderr, run.stderr
    assert run.stderr.count("\n") == 1, run.stderr
    assert _episode(sift, store, "--single-shot", "--set", "store.max_query_chars=200")["evidence"]
    err = _error(sift, store, "--set", "store.hybrid_candidate=5")
    assert (
        "store.hybrid_candidate: not an option of this store (EmbeddedSettings); did you mean "
        "'store.hybrid_candidates'?" in err
    )
    err = _error(sift, store, "--set", "store.vector_index=faiss")
    assert "--set store.vector_index='faiss': Input should be 'auto', 'exact' or 'ann'" in err
    # A Weaviate option on an embedded store is not one of its options.
    assert "not an option of this store" in _error(sift, store, "--set", "store.tenant=t1")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("max_turns=many", "--set max_turns='many': Input should be a valid integer"),
        ("max_turns=0", "--set max_turns='0': Input should be greater than or equal to 1"),
        ("search_mode=fuzzy", "--set search_mode='fuzzy': Input should be 'hybrid', 'bm25'"),
        ("planner.prune_at=2", "--set planner.prune_at='2': Input should be less than or equal"),
        ("threshold_tokens=99999", "--set: token tiers must satisfy threshold_tokens <="),
        ("max_turns", "--set 'max_turns': expected KEY=VALUE"),
    ],
)
def test_bad_values_name_the_key_and_the_value(sift, store: Path, item: str, message: str) -> None:
    assert message in _error(sift, store, "--set", item)


def test_none_clears_an_optional_setting(sift, store: Path, monkeypatch) -> None:
    monkeypatch.setenv("SIFT_DEADLINE_S", "0.000001")
    assert _episode(sift, store)["stopped_because"] == "deadline"
    assert _episode(sift, store, "--set", "deadline_s=none")["stopped_because"] != "deadline"


def test_a_bad_environment_value_names_its_variable(sift, store: Path, monkeypatch) -> None:
    monkeypatch.setenv("SIFT_MAX_TURNS", "lots")
    err = _error(sift, store)
    assert "setting max_turns (from $SIFT_MAX_TURNS): Input should be a valid integer" in err


def test_planner_settings_need_the_planner(sift, store: Path) -> None:
    err = _error(sift, store, "--policy", "ollama", "--set", "planner.max_anchors=3")
    assert "planner settings apply to --policy heuristic, not ollama" in err


def test_the_cli_passes_set_to_single_shot(sift, tmp_path: Path) -> None:
    """`--single-shot` takes `--set` like an episode (it read only the environment)."""
    from sift.integrations.stores.sqlite import SqliteCorpus
    from tests.graphs.test_single_shot_graph import EN, PAGES

    path = tmp_path / "cli"
    with SqliteCorpus(path, embedder="hash", entity_graph=True) as corpus:
        corpus.upsert(PAGES)

    def run(*args: str) -> dict:
        done = sift("search", "--store", str(path), "--single-shot", "--json", "-q", *args, EN)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    default = run("--top-k", "5")
    assert [c["tool"] for c in default["trace"][0]["calls"]] == ["search_corpus", "entity_graph"]
    off = run("--set", "single_shot_graph_weight=0", "--set", "top_k=2")
    assert [c["tool"] for c in off["trace"][0]["calls"]] == ["search_corpus"]
    assert len(off["evidence"]) == 2
    bm25 = run("--set", "search_mode=bm25")
    assert "single bm25 search" in bm25["evidence"][0]["justification"]
