"""`sift stats`, `ls`, `show` and `delete` on a real store, each also with --json; and a
store path that does not exist, named in a one-line error."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ..ingest.conftest import numbered_pages, write_pdf


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, sift_code: Callable[..., int]) -> Path:
    root = tmp_path_factory.mktemp("library")
    folder = root / "docs"
    write_pdf(folder / "決算.pdf", numbered_pages(3), font="HeiseiMin-W3", title="決算説明資料")
    (folder / "guide.md").write_text(
        "# Basalt Guide\n\nThe bridge was designed in 1931.\n\n## Care\n\nOil the hinges.",
        encoding="utf-8",
    )
    (folder / "notes.txt").write_text("Plain notes about [bold]markup[/bold].", encoding="utf-8")
    store = root / "store"
    assert sift_code("index", "--store", str(store), "--embedder", "hash", "-q", str(folder)) == 0
    return store


def test_stats_says_what_the_store_holds(sift, library: Path) -> None:
    run = sift("stats", "--store", str(library), "--json")
    assert run.returncode == 0, run.stderr
    stats = json.loads(run.stdout)
    assert (stats["documents"], stats["backend"], stats["embedder"]) == (3, "sqlite", "hash:256")
    assert stats["chunks"] >= 3 and stats["size_bytes"] > 10_000
    # Each file's `lang`, as `sift index` tagged it (English by its function words).
    assert stats["languages"] == {"en": 2, "ja": 1} and stats["languages_sampled"] == 3
    # The folder holding the folder given (decision 0019): ids read `docs/guide.md`.
    assert stats["analyzer"] and stats["source_root"] == str(library.parent.resolve())
    # Whether the static embedder's C part runs: its module is there when it was built.
    built = importlib.util.find_spec("sift.integrations.embedders._pieces") is not None
    assert stats["native_embedder"] is built
    table = sift("stats", "--store", str(library))
    for word in ("documents", "3", "ja 1", "en 2", "size on disk", "KiB", "hash:256"):
        assert word in table.stdout
    assert "embedder's C part" in table.stdout
    assert ("built" if built else "not built") in table.stdout
    # Indexed without --entity-graph: no graph, and the table says how to get one.
    assert stats["entity_graph_chunks"] is None
    assert "sift index --entity-graph" in table.stdout


# A fresh interpreter in which the C part's module cannot be imported, as after an
# install without a C compiler (setup.py lets it go on).
WITHOUT_C_PART = textwrap.dedent(
    """
    import sys
    from importlib.abc import MetaPathFinder

    class NotBuilt(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "sift.integrations.embedders._pieces":
                raise ImportError("No module named 'sift.integrations.embedders._pieces'")
            return None

    sys.meta_path.insert(0, NotBuilt())
    from sift.integrations.cli import main

    main(sys.argv[1:])
    """
)


def _without_c_part(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIFT_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("SIFT_STORE", None)
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_C_PART, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_without_the_c_part_stats_say_so_and_the_embedder_warns_how_to_build_it(
    library: Path, tmp_path: Path
) -> None:
    run = _without_c_part(tmp_path / "home", "stats", "--store", str(library), "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["native_embedder"] is False
    # The warning names what is missing and how to fix it, once.
    assert run.stderr.count("RuntimeWarning") == 1, run.stderr
    assert "without its C part" in run.stderr and "install a C compiler" in run.stderr
    assert "reinstall sift" in run.stderr
    table = _without_c_part(tmp_path / "home", "stats", "--store", str(library))
    assert table.returncode == 0, table.stderr
    assert "not built (numpy, slower): install a C compiler and reinstall sift" in table.stdout


def test_ls_lists_titles_sources_and_chunks_and_filters(sift, library: Path) -> None:
    lines = sift("ls", "--store", str(library), "--json").stdout.splitlines()
    listed = [json.loads(line) for line in lines]
    assert [d["doc_id"] for d in listed] == ["docs/guide.md", "docs/notes.txt", "docs/決算.pdf"]
    pdf = listed[2]
    assert pdf["title"] == "決算説明資料" and pdf["chunks"] >= 1
    assert pdf["source"].endswith("決算.pdf") and pdf["metadata"]["page_count"] == 3
    by_format = sift("ls", "--store", str(library), "--json", "--filter", "format=pdf")
    assert [json.loads(x)["doc_id"] for x in by_format.stdout.splitlines()] == ["docs/決算.pdf"]
    by_prefix = sift("ls", "--store", str(library), "--prefix", "docs/g", "--limit", "5")
    assert "guide.md" in by_prefix.stdout and "notes.txt" not in by_prefix.stdout
    assert "1 document(s)" in by_prefix.stderr
    plain = sift("ls", "--store", str(library))
    assert "Basalt Guide" in plain.stdout and "[bold]markup" not in plain.stdout


@pytest.mark.parametrize("spec", ["page=2", '{"section": "Care"}', '{"section": "決算"}'])
def test_ls_refuses_a_filter_on_what_chunks_have(sift, library: Path, spec: str) -> None:
    # A page or section is a chunk's: ls lists documents, so such a filter would match
    # nothing and read as "no such page".
    run = sift("ls", "--store", str(library), "--filter", spec)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sift: error: --filter on ")
    assert "sift search --filter" in lines[0]
    # The same filter searches fine.
    found = sift("search", "--store", str(library), "--single-shot", "--filter", spec, "決算 Care")
    assert found.returncode in (0, 1), found.stderr


def test_show_gives_metadata_and_chunks_with_pages_and_sections(sift, library: Path) -> None:
    shown = json.loads(sift("show", "--store", str(library), "--json", "docs/決算.pdf").stdout)
    assert shown["document"]["metadata"]["format"] == "pdf"
    assert all("page" in c["metadata"] for c in shown["chunks"])
    guide = json.loads(sift("show", "--store", str(library), "--json", "docs/guide.md").stdout)
    assert guide["chunks"][0]["metadata"]["section"] == "Basalt Guide"
    text = sift("show", "--store", str(library), "docs/決算.pdf").stdout
    assert "決算説明資料" in text and "p. 1" in text and "page_count" in text
    missing = sift("show", "--store", str(library), "nope.md")
    assert missing.returncode == 2 and "no document 'nope.md'" in missing.stderr


def test_delete_removes_documents_and_names_unknown_ids(sift, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (folder / name).write_text(f"# {name}\n\ntext", encoding="utf-8")
    store = str(tmp_path / "store")
    sift("index", "--store", store, "--embedder", "hash", "-q", str(folder))
    run = sift("delete", "--store", store, "--json", "docs/a.md", "zz.md", "docs/c.md")
    assert run.returncode == 1  # one id was not found; the others are gone
    assert json.loads(run.stdout) == {"deleted": ["docs/a.md", "docs/c.md"], "not_found": ["zz.md"]}
    listed = sift("ls", "--store", store, "--json").stdout.splitlines()
    assert [json.loads(line)["doc_id"] for line in listed] == ["docs/b.md"]
    assert sift("delete", "--store", store, "docs/b.md").returncode == 0
    assert json.loads(sift("stats", "--store", store, "--json").stdout)["documents"] == 0


@pytest.mark.parametrize(
    "command",
    [("stats",), ("ls",), ("show", "x"), ("delete", "x"), ("search", "q"), ("grep", "q")],
)
def test_a_store_that_does_not_exist_is_named(sift, tmp_path: Path, command: tuple) -> None:
    missing = tmp_path / "stroe"
    run = sift(*command, "--store", str(missing))
    assert run.returncode == 2
    assert run.stderr.startswith("sift: error:") and str(missing) in run.stderr
    assert run.stderr.count("\n") == 1 and not missing.exists()
