"""`sift index` on real files of every kind: the summary and exit code of a mixed folder,
ids across path spellings, --sync, --source-prefix, --json, long PDFs, Ctrl-C."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..ingest.conftest import numbered_pages, write_docx, write_pdf, write_pptx


def _mixed_folder(root: Path) -> Path:
    folder = root / "mixed"
    folder.mkdir(parents=True)
    write_pdf(folder / "決算短信.pdf", numbered_pages(3), font="HeiseiMin-W3")
    write_docx(folder / "report.docx")
    write_pptx(folder / "deck.pptx")
    (folder / "tickets.csv").write_text("id,subject\nT-1,ログインできない\n", encoding="utf-8")
    (folder / "notes.md").write_text("# Notes\n\nBasalt bridge notes.", encoding="utf-8")
    (folder / "random.txt").write_bytes(os.urandom(50_000))
    (folder / "program.md").write_bytes(b"\x7fELF\x02\x01\x01\x00" + os.urandom(3_000))
    (folder / "scan.pdf").write_bytes(write_pdf(root / "scan.pdf", [None]).read_bytes())
    (folder / "sheet.xlsx").write_bytes(b"PK\x03\x04")
    (folder / "[red]empty.txt").write_text("", encoding="utf-8")  # not rich markup
    return folder


def test_a_mixed_folder_says_what_was_skipped_and_why(sift, tmp_path: Path) -> None:
    folder = _mixed_folder(tmp_path)
    store = tmp_path / "store"
    run = sift("index", "--store", str(store), "--embedder", "hash", "--json", str(folder))
    assert run.returncode == 1, run.stderr  # something was skipped
    summary = json.loads(run.stdout)
    assert summary["added"] == 5 and summary["files"] == 9
    reasons = {Path(p["source"]).name: p["reason"] for p in summary["skipped"]}
    assert reasons == {
        "random.txt": "binary content",
        "program.md": "binary content",
        "scan.pdf": "no text layer",
        "sheet.xlsx": "unsupported type",
        "[red]empty.txt": "empty",
    }
    assert summary["pages"] == 3 + 3  # the PDF's pages and the deck's slides
    # The root is the folder holding the folder given: ids start with its name.
    assert summary["exit_code"] == 1 and summary["source_root"] == str(tmp_path.resolve())
    for name in reasons:
        assert f"skipped {folder / name}" in run.stderr
    assert "skipped" in run.stderr and "binary content 2" in run.stderr
    assert "\x7f" not in run.stderr
    # The same folder again: nothing new, the same skips, the same exit code.
    again = sift("index", "--store", str(store), "--json", "-q", str(folder))
    assert again.returncode == 1
    assert json.loads(again.stdout)["unchanged"] == 5


def test_a_clean_folder_exits_zero_and_a_japanese_pdf_is_searchable_by_page(
    sift, tmp_path: Path
) -> None:
    folder = tmp_path / "reports"
    write_pdf(folder / "annual.pdf", numbered_pages(12), font="HeiseiMin-W3")
    store = str(tmp_path / "store")
    run = sift("index", "--store", store, "--embedder", "hash", "-q", str(folder))
    assert run.returncode == 0, run.stderr
    grep = sift("grep", "--store", store, "--json", "9ページ目")
    (hit,) = json.loads(grep.stdout)["hits"]
    assert hit["chunk"]["doc_id"] == "reports/annual.pdf"
    assert hit["chunk"]["metadata"]["pages"][0] <= 9 <= hit["chunk"]["metadata"]["pages"][1]
    found = sift("search", "--store", store, "--json", "--single-shot", "Marker page 7")
    top = json.loads(found.stdout)["evidence"][0]
    assert "page" in top["metadata"] and top["metadata"]["source"].endswith("annual.pdf")


def test_ids_survive_every_spelling_of_the_path(
    sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = tmp_path / "parent"
    (parent / "docs").mkdir(parents=True)
    (parent / "docs" / "a.md").write_text("# A\n\nalpha text", encoding="utf-8")
    (parent / "top.txt").write_text("top text", encoding="utf-8")
    store = str(tmp_path / "store")
    monkeypatch.chdir(tmp_path)
    first = sift("index", "--store", store, "--embedder", "hash", "--json", "-q", "parent/docs")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["source_root"] == str(tmp_path.resolve())
    # The parent folder, spelled absolutely, from another working folder.
    monkeypatch.chdir(parent / "docs")
    second = sift("index", "--store", store, "--json", "-q", str(parent))
    summary = json.loads(second.stdout)
    assert (summary["added"], summary["unchanged"]) == (1, 1)  # only top.txt is new
    listed = sift("ls", "--store", store, "--json")
    assert [json.loads(line)["doc_id"] for line in listed.stdout.splitlines()] == [
        "parent/docs/a.md",
        "parent/top.txt",
    ]
    third = sift("index", "--store", store, "--json", "-q", "../docs/./a.md")
    assert json.loads(third.stdout)["unchanged"] == 1


def test_source_prefix_names_documents_wherever_the_files_are(sift, tmp_path: Path) -> None:
    for place in ("here", "there"):
        (tmp_path / place).mkdir()
        (tmp_path / place / "q1.md").write_text("# Q1\n\nquarter one", encoding="utf-8")
    store = str(tmp_path / "store")
    args = ("index", "--store", store, "--embedder", "hash", "--json", "-q")
    one = json.loads(sift(*args, "--source-prefix", "ir/", str(tmp_path / "here")).stdout)
    two = json.loads(sift(*args, "--source-prefix", "ir/", str(tmp_path / "there")).stdout)
    # The same document, moved: its source changes, its id does not.
    assert one["added"] == 1 and two["updated"] == 1 and one["source_prefix"] == "ir/"
    shown = json.loads(sift("show", "--store", store, "--json", "ir/q1.md").stdout)
    assert shown["document"]["source"] == str((tmp_path / "there" / "q1.md").resolve())
    assert sift("stats", "--store", store, "--json").stdout.count('"documents": 1,') == 1


def test_sync_removes_only_what_is_gone_from_the_folders_given(sift, tmp_path: Path) -> None:
    docs, other = tmp_path / "docs", tmp_path / "other"
    for folder, names in ((docs, ("keep.md", "gone.md", "sub/gone.txt")), (other, ("o.md",))):
        for name in names:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(f"# {name}\n\ntext of {name}", encoding="utf-8")
    store = str(tmp_path / "store")
    base = ("index", "--store", store, "--embedder", "hash", "-q", "--json")
    assert sift(*base, str(docs), str(other)).returncode == 0
    (docs / "gone.md").unlink()
    (docs / "sub" / "gone.txt").unlink()
    (other / "o.md").unlink()
    plain = json.loads(sift(*base, str(docs)).stdout)
    assert plain["removed"] == []  # nothing is ever deleted implicitly
    synced = sift(*base, "--sync", str(docs))
    assert synced.returncode == 0, synced.stderr
    assert sorted(json.loads(synced.stdout)["removed"]) == ["docs/gone.md", "docs/sub/gone.txt"]
    assert "removed docs/gone.md" in synced.stderr
    listed = sift("ls", "--store", store, "--json").stdout.splitlines()
    ids = [json.loads(line)["doc_id"] for line in listed]
    assert ids == ["docs/keep.md", "other/o.md"]  # other/ was not given: untouched


def test_a_long_pdf_shows_per_file_progress_and_keeps_its_pages(
    sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sift.integrations.cli import _index

    events = []
    real = _index._FileProgress.file_read
    monkeypatch.setattr(
        _index._FileProgress, "file_read", lambda self, e: (events.append(e), real(self, e))
    )
    folder = tmp_path / "long"
    write_pdf(folder / "long.pdf", numbered_pages(40, marker="Long", filler=36))
    (folder / "short.md").write_text("# Short\n\nshort text", encoding="utf-8")
    store = str(tmp_path / "store")
    run = sift("index", "--store", store, "--embedder", "hash", "--json", str(folder))
    assert run.returncode == 0, run.stderr
    assert [(Path(e.source).name, e.pages) for e in events] == [("long.pdf", 40), ("short.md", 0)]
    shown = json.loads(sift("show", "--store", store, "--json", "long/long.pdf").stdout)
    for chunk in shown["chunks"]:
        first, last = chunk["metadata"]["pages"]
        for n in range(1, 41):
            if f"Long page {n} " in chunk["text"]:
                assert first <= n <= last
    # Pages longer than a chunk: a chunk from the middle of page 37 says page 37.
    (middle,) = [c for c in shown["chunks"] if "Line 20 of page 37 " in c["text"]]
    assert middle["metadata"]["page"] == 37 and middle["metadata"]["pages"] == [37, 37]


def test_ctrl_c_says_what_was_kept(sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sift.integrations.cli import _index

    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(6):
        (folder / f"{n}.md").write_text(f"# Doc {n}\n\ntext {n}", encoding="utf-8")
    real = _index.read_files

    def interrupted(files, sink, **options):
        for count, document in enumerate(real(files, sink, **options)):
            if count == 4:
                raise KeyboardInterrupt
            yield document

    monkeypatch.setattr(_index, "read_files", interrupted)
    store = tmp_path / "store"
    run = sift("index", "--store", str(store), "--embedder", "hash", "-q", str(folder))
    assert run.returncode == 130
    assert "interrupted" in run.stderr and "run the same command again" in run.stderr
    assert "Traceback" not in run.stderr
    monkeypatch.setattr(_index, "read_files", real)
    again = sift("index", "--store", str(store), "--json", "-q", str(folder))
    assert json.loads(again.stdout)["added"] + json.loads(again.stdout)["unchanged"] == 6


def _ids(sift, store: str) -> list[str]:
    listed = sift("ls", "--store", store, "--json")
    return [json.loads(line)["doc_id"] for line in listed.stdout.splitlines()]


def test_files_outside_the_recorded_root_are_named_by_the_folder_given(
    sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's store: its first input a JSONL in another folder, later files got ids
    like `../b/notes/sub/kestrel.md`. Now they are named by the folder given, and every
    face prints the id the same way."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "seed.jsonl").write_text(
        json.dumps({"id": "seed-1", "text": "A seed passage."}) + "\n", encoding="utf-8"
    )
    notes = tmp_path / "b" / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "sub" / "kestrel.md").write_text("# Kestrel\n\nThe kestrel hovers.", "utf-8")
    ja = tmp_path / "c" / "d" / "notes-ja"
    ja.mkdir(parents=True)
    (ja / "梅雨.md").write_text("# 梅雨\n\n梅雨入りは六月です。", encoding="utf-8")
    store = str(tmp_path / "store")
    monkeypatch.chdir(tmp_path / "a")
    assert sift("index", "--store", store, "--embedder", "hash", "-q", "seed.jsonl").returncode == 0
    run = sift("index", "--store", store, "--json", "-q", "../b/notes", str(ja))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["source_root"] == str((tmp_path / "a").resolve())
    assert _ids(sift, store) == ["notes-ja/梅雨.md", "notes/sub/kestrel.md", "seed-1"]
    found = json.loads(sift("search", "--store", store, "--json", "梅雨入り").stdout)
    assert found["evidence"][0]["doc_id"] == "notes-ja/梅雨.md"
    shown = sift("show", "--store", store, "notes/sub/kestrel.md")
    assert shown.returncode == 0 and "notes/sub/kestrel.md" in shown.stdout
    # Spelled another way, the same files keep their ids.
    monkeypatch.chdir(tmp_path / "b")
    again = json.loads(sift("index", "--store", store, "--json", "-q", "notes").stdout)
    assert (again["added"], again["unchanged"]) == (0, 1)


def _outside_folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    """`a/` to run from; `b/notes/sub/kestrel.md` and `c/アイデア/梅雨.md` outside it."""
    (tmp_path / "a").mkdir()
    notes = tmp_path / "b" / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "sub" / "kestrel.md").write_text("# Kestrel\n\nThe kestrel hovers.", "utf-8")
    ideas = tmp_path / "c" / "アイデア"
    ideas.mkdir(parents=True)
    (ideas / "梅雨.md").write_text("# 梅雨\n\n梅雨入りは六月です。", encoding="utf-8")
    return tmp_path / "a", notes, ideas


def test_a_folder_from_outside_is_named_by_its_name_first_or_later(
    sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's rule (docs/decisions/0019): `sift index ../b/notes` stores
    `notes/sub/kestrel.md` on a new store too, and two folders indexed in turn get the
    same ids in either order; a file given directly is named by its folder and its own."""
    here, notes, ideas = _outside_folders(tmp_path)
    monkeypatch.chdir(here)
    expected = ["notes/sub/kestrel.md", "アイデア/梅雨.md"]
    for store, order in (("one", ("../b/notes", str(ideas))), ("two", (str(ideas), "../b/notes"))):
        location = str(tmp_path / store)
        first = sift("index", "--store", location, "--embedder", "hash", "--json", "-q", order[0])
        assert first.returncode == 0, first.stderr
        assert sift("index", "--store", location, "-q", order[1]).returncode == 0
        assert _ids(sift, location) == expected, store
    # The first run's root is the folder holding the folder given.
    stats = json.loads(sift("stats", "--store", str(tmp_path / "one"), "--json").stdout)
    assert stats["source_root"] == str(notes.parent.resolve())
    single = str(tmp_path / "single")
    given = sift("index", "--store", single, "--embedder", "hash", "-q", str(ideas / "梅雨.md"))
    assert given.returncode == 0 and _ids(sift, single) == ["アイデア/梅雨.md"]
    found = json.loads(sift("search", "--store", single, "--json", "梅雨入り").stdout)
    assert found["evidence"][0]["doc_id"] == "アイデア/梅雨.md"


def test_a_store_an_earlier_sift_made_keeps_its_ids_and_gains_no_doubles(
    sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before docs/decisions/0019 a first folder given from outside was its own root:
    such a store keeps that root, so indexing the folder again, from anywhere, finds
    every document unchanged under its old id instead of storing it a second time."""
    from sift.integrations.ingest import SourceNaming, read_inputs
    from sift.integrations.stores.sqlite import SqliteCorpus

    here, notes, ideas = _outside_folders(tmp_path)
    store = str(tmp_path / "store")
    corpus = SqliteCorpus(store, embedder="hash")  # what an earlier sift wrote
    try:
        corpus.record_source_root(str(notes.resolve()))
        corpus.upsert(read_inputs([notes], naming=SourceNaming(root=notes.resolve())))
    finally:
        corpus.close()
    assert _ids(sift, store) == ["sub/kestrel.md"]
    for where, given in ((here, "../b/notes"), (notes.parent, "notes"), (tmp_path, str(notes))):
        monkeypatch.chdir(where)
        run = json.loads(sift("index", "--store", store, "--json", "-q", given).stdout)
        assert (run["added"], run["unchanged"], run["renamed"]) == (0, 1, []), where
    # A folder outside that root is named by its name, as in a new store.
    assert sift("index", "--store", store, "-q", str(ideas)).returncode == 0
    assert _ids(sift, store) == ["sub/kestrel.md", "アイデア/梅雨.md"]


def test_ids_an_earlier_sift_gave_are_renamed_and_reported(
    sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import unicodedata

    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.md").write_text("# X\n\nx text", encoding="utf-8")
    notes = tmp_path / "b" / "notes"
    notes.mkdir(parents=True)
    (notes / "kestrel.md").write_text("# Kestrel\n\nThe kestrel hovers.", "utf-8")
    decomposed = unicodedata.normalize("NFD", "ガイド.md")  # as macOS spells names
    (tmp_path / "a" / decomposed).write_text("# ガイド\n\n設置は一行です。", "utf-8")
    store = str(tmp_path / "store")
    monkeypatch.chdir(tmp_path / "a")
    assert sift("index", "--store", store, "--embedder", "hash", "-q", "x.md").returncode == 0
    corpus = SqliteCorpus(store)  # what an earlier sift stored under the former ids
    try:
        corpus.upsert(
            [
                Document(id="../b/notes/kestrel.md", text="The kestrel hovers."),
                Document(id=decomposed, text="設置は一行です。"),
            ]
        )
    finally:
        corpus.close()
    run = sift("index", "--store", store, "--json", "-q", "../b/notes", decomposed)
    assert run.returncode == 0, run.stderr
    renamed = json.loads(run.stdout)["renamed"]
    assert renamed == [
        {"former": "../b/notes/kestrel.md", "id": "notes/kestrel.md"},
        {"former": decomposed, "id": "ガイド.md"},
    ]
    assert "renamed ../b/notes/kestrel.md -> notes/kestrel.md" in run.stderr
    assert _ids(sift, store) == ["notes/kestrel.md", "x.md", "ガイド.md"]


def test_entity_graph_is_kept_from_index_on_and_single_shot_reaches_the_second_hop(
    sift, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    pages = {
        "signmark.md": "# Signmark\n\nSignmark is a rapper from Finland.",
        "markka.md": "# Finnish markka\n\nMarkka: money in Finland until 2002.",
        "tower.md": "# 東京スカイツリー\n\n東京スカイツリーは墨田区にある電波塔。施工は大林組。",
        "obayashi.md": "# 大林組\n\n大林組、大阪市中央区。",
        **{f"other{i}.md": f"# Currency {i}\n\nThe country and its currency." for i in range(2)},
        **{f"ja{i}.md": f"# 会社{i}\n\nこの会社{i}の本社は大きい。" for i in range(2)},
    }
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    store = str(tmp_path / "store")
    run = sift("index", "--store", store, "--embedder", "hash", "--entity-graph", str(folder))
    assert run.returncode == 0, run.stderr
    stats = json.loads(sift("stats", "--store", store, "--json").stdout)
    assert stats["entity_graph_chunks"] == stats["chunks"] == len(pages)
    assert f"kept, {len(pages)} chunks" in sift("stats", "--store", store).stdout
    for question, bridge, entity in (
        ("What currency did the country of Signmark use?", "pages/markka.md", "finland"),
        ("東京スカイツリーを建てた会社の本社はどこか？", "pages/obayashi.md", "大林組"),
    ):
        # A later command opens the store without the flag and keeps the graph.
        args = ("search", "--store", store, "--single-shot", "--mode", "bm25", "--json")
        found = json.loads(sift(*args, "--top-k", "5", question).stdout)
        reached = [e for e in found["evidence"] if e["doc_id"] == bridge]
        assert reached, [e["doc_id"] for e in found["evidence"]]
        assert {"tool": "entity_graph", "argument": entity, "turn": 0} in reached[0]["found_by"]
        # Turned off for one search, the search alone cannot find the page.
        monkeypatch.setenv("SIFT_SINGLE_SHOT_GRAPH_WEIGHT", "0")
        alone = json.loads(sift(*args, "--top-k", "5", question).stdout)
        monkeypatch.delenv("SIFT_SINGLE_SHOT_GRAPH_WEIGHT")
        assert bridge not in [e["doc_id"] for e in alone["evidence"]]
