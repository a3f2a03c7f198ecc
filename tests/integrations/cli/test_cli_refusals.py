"""No silent nothing, one error style (issue 43): inputs with nothing to index, a store
path with nothing there, a question with no word in it and every usage error are one
`sift: error: ...` line on stderr with exit code 2, and leave no store made or changed.
`--set help` lists the settings; a mistyped setting suggests the nearest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sift.graphs import HarnessConfig
from sift.graphs.policies import HeuristicPlannerConfig
from sift.integrations.stores.sqlite import EmbeddedSettings


def _one_line(run) -> str:
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    assert run.stderr.startswith("sift: error: ") and run.stderr.count("\n") == 1, run.stderr
    assert "Traceback" not in run.stderr and "╭" not in run.stderr
    return run.stderr.removeprefix("sift: error: ").strip()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    folder.joinpath("bridge.md").write_text(
        "# Basalt Bridge\n\nThe Basalt Bridge was designed by Ilse Varga.", encoding="utf-8"
    )
    folder.joinpath("橋.md").write_text(
        "# 玄武岩橋\n\n玄武岩橋はイルゼ・ヴァルガが設計した。", encoding="utf-8"
    )
    return folder


@pytest.fixture
def store(sift, docs: Path, tmp_path: Path) -> Path:
    path = tmp_path / "store"
    run = sift("index", "--store", str(path), "--embedder", "hash", "-q", str(docs))
    assert run.returncode == 0, run.stderr
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# ----------------------------------------------------------------- index: nothing to index


def test_an_empty_folder_is_an_error_naming_it_and_makes_no_store(
    sift, tmp_path: Path, store: Path
) -> None:
    empty = tmp_path / "空のフォルダ"  # an empty folder with a Japanese name / 空フォルダ
    empty.mkdir()
    (empty / ".hidden").write_text("not read", encoding="utf-8")
    new_store = tmp_path / "new-store"
    message = _one_line(sift("index", "--store", str(new_store), str(empty)))
    assert message == f"nothing to index in {empty}: no files (1 hidden entry not read)"
    assert not new_store.exists()
    # Into a store that exists: it is left exactly as it was.
    before = _files(store)
    message = _one_line(sift("index", "--store", str(store), "--json", str(empty)))
    assert str(empty) in message
    assert _files(store) == before


def test_a_folder_whose_every_file_is_skipped_says_so(sift, tmp_path: Path) -> None:
    unread = tmp_path / "unread"
    unread.mkdir()
    (unread / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0")
    (unread / "写真.png").write_bytes(b"\x89PNG\r\n")
    new_store = tmp_path / "store"
    run = sift("index", "--store", str(new_store), str(unread))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    # Each skipped file with its reason, then the one error line.
    assert sum(line.startswith("skipped ") for line in lines) == 2
    assert "photo.jpg: unsupported type (.jpg)" in run.stderr
    assert "写真.png: unsupported type (.png)" in run.stderr
    assert lines[-1] == (
        f"sift: error: nothing indexed from {unread}: everything was skipped (unsupported type 2)"
    )
    assert "indexed\n" not in run.stderr  # no summary table pretending something was
    assert not new_store.exists()


def test_files_all_skipped_as_they_are_read_are_an_error_too(sift, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "empty.md").write_text("", encoding="utf-8")
    (bad / "空.txt").write_bytes(b"PK\x03\x04\x00\x00binary\x00\x00")
    new_store = tmp_path / "store"
    run = sift("index", "--store", str(new_store), "--json", "-q", str(bad))
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        f"sift: error: nothing indexed from {bad}: everything was skipped "
        "(binary content 1, empty 1)"
    )
    assert json.loads(run.stdout) == {
        "error": f"nothing indexed from {bad}: everything was skipped (binary content 1, empty 1)",
        "exit_code": 2,
    }
    assert not new_store.exists()


def test_sync_over_an_emptied_folder_still_removes_its_documents(
    sift, docs: Path, store: Path
) -> None:
    for path in docs.iterdir():
        path.unlink()
    run = sift("index", "--store", str(store), "--sync", "--json", "-q", str(docs))
    assert run.returncode == 0, run.stderr
    assert sorted(json.loads(run.stdout)["removed"]) == ["docs/bridge.md", "docs/橋.md"]
    # With no store there, there is nothing to remove: an error naming the store.
    missing = docs.parent / "no-store"
    assert str(missing) in _one_line(sift("index", "--store", str(missing), "--sync", str(docs)))
    assert not missing.exists()


# ------------------------------------------------------------ serve / mcp: missing stores


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_a_store_path_with_nothing_there_is_refused(sift, tmp_path: Path, command: str) -> None:
    missing = tmp_path / "ストア" / "nowhere"  # a path with Japanese in it / 日本語のパス
    message = _one_line(sift(command, "--store", str(missing), "--port", "0"))
    assert str(missing) in message
    assert not missing.exists() and not missing.parent.exists()


def test_serve_refuses_a_missing_store_from_the_environment(
    sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "typo"
    monkeypatch.setenv("SIFT_SERVER_STORE", str(missing))
    assert str(missing) in _one_line(sift("serve", "--port", "0"))


# ------------------------------------------------------------- a question without a word


@pytest.mark.parametrize("question", ["?!?...", "。、！？", "   ", ""])
@pytest.mark.parametrize("mode", [(), ("--single-shot",)])
def test_a_question_without_a_word_is_refused(
    sift, store: Path, question: str, mode: tuple[str, ...]
) -> None:
    run = sift("search", "--store", str(store), "-q", *mode, question)
    message = _one_line(run)
    assert run.stdout == ""
    if question.strip():
        assert message == (
            f"the question {question!r} has no word to search for (only punctuation, "
            "symbols or spaces); ask with at least one word"
        )
    else:
        assert message == "the question is empty"
    # A word in either language is enough (英語でも日本語でも一語あれば検索する).
    for asked in ("Basalt Bridge?!", "玄武岩橋？"):
        found = sift("search", "--store", str(store), "-q", "--json", *mode, asked)
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["evidence"]


# ------------------------------------------------------------------------ usage errors


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--top-k", "0", "x"), "Invalid value for '--top-k': Input should be greater than or"),
        (("--mode", "fuzzy", "x"), "--mode 'fuzzy': valid modes are hybrid, bm25, dense"),
        (("--filter", "{bad", "x"), "--filter"),
        (("--no-such-option", "x"), "No such option: --no-such-option"),
        (("--rollouts", "many", "橋"), "Invalid value for '--rollouts'"),
        ((), "give either a QUESTION or --questions FILE"),
    ],
)
def test_usage_errors_are_one_line(sift, store: Path, args: tuple[str, ...], expected: str) -> None:
    run = sift("search", "--store", str(store), *args)
    assert expected in _one_line(run)
    assert run.stdout == ""


def test_a_missing_argument_or_command_points_at_the_help(sift) -> None:
    assert _one_line(sift("index")) == "Missing argument 'inputs'; see `sift index --help`"
    assert _one_line(sift("検索")) == "No such command '検索'; see `sift --help`"


def test_help_still_prints_in_full(sift) -> None:
    run = sift("search", "--help")
    assert run.returncode == 0 and "Usage: sift search" in run.stdout and "--top-k" in run.stdout
    bare = sift()  # `sift` alone: the help, with the usage exit code
    assert bare.returncode == 2 and "sift: error" not in bare.stderr
    assert "index" in bare.stdout + bare.stderr


def test_mcp_without_its_extra_is_one_line(
    sift, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if `pip install sift-harness` had been run without the mcp extra.
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)
    for name in [m for m in sys.modules if m.startswith("sift.integrations.mcp")]:
        monkeypatch.delitem(sys.modules, name)
    message = _one_line(sift("mcp", "--store", str(store)))
    assert message.startswith("sift mcp needs the mcp extra (mcp")
    assert message.endswith("pip install 'sift-harness[mcp]'")


def test_a_multi_line_message_is_joined_on_one_line(sift, tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text('{"keys": [{"key": "short", "collections": ["文書"]}]}', encoding="utf-8")
    root = tmp_path / "root"
    root.mkdir()
    message = _one_line(sift("serve", "--store", str(root), "--keys-file", str(keys)))
    assert "at least 8 characters" in message


# --------------------------------------------------------------------------- --set


def test_a_mistyped_setting_suggests_the_nearest(sift, store: Path) -> None:
    run = sift("search", "--store", str(store), "--set", "planner.max_anchor=3", "橋")
    assert _one_line(run) == (
        "unknown setting 'planner.max_anchor'; did you mean 'planner.max_anchors'? "
        "(sift search --set help lists them)"
    )
    far = _one_line(sift("search", "--store", str(store), "--set", "zzzz=1", "bridge"))
    assert far == "unknown setting 'zzzz' (sift search --set help lists them)"
    assert len(far) < 120


@pytest.mark.parametrize("command", [("search",), ("eval",)])
def test_set_help_lists_every_key_one_a_line(sift, command: tuple[str, ...]) -> None:
    run = sift(*command, "--set", "help")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    keys = [line.split(" (", 1)[0] for line in lines]
    store = [f"store.{name}" for name in EmbeddedSettings.model_fields]
    store.append("store.<field> of WeaviateSettings for a weaviate:// store")
    assert keys == [
        *HarnessConfig.model_fields,
        *(f"planner.{name}" for name in HeuristicPlannerConfig.model_fields),
        *(store if command == ("search",) else []),  # eval makes its own stores
    ]
    assert "max_turns (int, default 10)" in lines
    assert "search_mode (hybrid|bm25|dense, default hybrid)" in lines
    assert any(line.startswith("planner.max_anchors (int, default ") for line in lines)
