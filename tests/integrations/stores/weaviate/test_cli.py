"""`sift index` and `sift grep` with a weaviate:// store, against the loopback server."""

from __future__ import annotations

import json

from sift.integrations.cli import main
from sift.integrations.stores import open_store
from sift.types import Document


def run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:  # the CLI exits even on success
        return int(exc.code or 0)
    return 0


def test_index_then_grep_through_a_weaviate_url(fake, tmp_path, capsys) -> None:
    source = tmp_path / "corpus.jsonl"
    lines = [
        {"id": "d0", "title": "Otters", "text": "Otters hold hands while sleeping."},
        {"id": "d1", "title": "Falcons", "text": "Falcons dive at great speed."},
    ]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    url = fake.url(collection="CliDocs")
    assert run(["index", "--store", url, "--embedder", "hash", "--quiet", str(source)]) == 0
    printed = capsys.readouterr()
    assert "2 added" in printed.out + printed.err
    assert len(fake.objects("CliDocs")) == 2

    assert run(["grep", "--store", url, "--json", r"dive\w*"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [h["chunk"]["chunk_id"] for h in result["hits"]] == ["d1_0"]

    assert run(["grep", "--store", fake.url(collection="Missing"), "x"]) == 2
    assert "'Missing'" in capsys.readouterr().err


def test_files_list_show_and_sync_through_a_weaviate_url(fake, tmp_path, capsys) -> None:
    """Weaviate records no source root: ids are relative to the folder holding the
    inputs, so start with the folder's name (the CLI says so), and listing, showing pages
    and --sync work as on the embedded store."""
    from reportlab.pdfgen import canvas

    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = canvas.Canvas(str(docs / "report.pdf"))
    for page in (1, 2, 3):
        pdf.drawString(72, 720, f"Quarterly revenue page {page} grew.")
        pdf.showPage()
    pdf.save()
    (docs / "gone.md").write_text("# Gone\n\nSoon deleted.", encoding="utf-8")
    url = fake.url(collection="CliFiles")
    assert run(["index", "--store", url, "--embedder", "hash", "-q", str(docs)]) == 0
    assert "does not record a source root" in capsys.readouterr().err

    assert run(["ls", "--store", url, "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # One chunk per page: a chunk never spans two pages.
    assert [(d["doc_id"], d["chunks"]) for d in listed] == [
        ("docs/gone.md", 1),
        ("docs/report.pdf", 3),
    ]
    assert listed[1]["source"] == str((docs / "report.pdf").resolve())

    assert run(["show", "--store", url, "--json", "docs/report.pdf"]) == 0
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert [(c["metadata"]["page"], c["metadata"]["pages"]) for c in chunks] == [
        (1, [1, 1]),
        (2, [2, 2]),
        (3, [3, 3]),
    ]
    assert "revenue page 2 grew" in chunks[1]["text"]

    (docs / "gone.md").unlink()
    assert run(["index", "--store", url, "-q", "--sync", "--json", str(docs)]) == 0
    assert json.loads(capsys.readouterr().out)["removed"] == ["docs/gone.md"]
    assert {o.properties["doc_id"] for o in fake.objects("CliFiles").values()} == {
        "docs/report.pdf"
    }


def test_ids_an_earlier_sift_gave_without_the_folders_name_are_renamed(
    fake, tmp_path, capsys
) -> None:
    """Before docs/decisions/0019 a folder given from elsewhere was its own root in a
    store that records none (`sift index /x/ノート` stored `梅雨.md`): indexing it again
    renames those documents and says so, and never stores a file twice."""
    notes = tmp_path / "ノート"
    notes.mkdir()
    (notes / "梅雨.md").write_text("# 梅雨\n\n梅雨入りは六月です。", encoding="utf-8")
    (notes / "kestrel.md").write_text("# Kestrel\n\nThe kestrel hovers.", encoding="utf-8")
    url = fake.url(collection="CliFormer")
    corpus = open_store(url, embedder="hash")  # what an earlier sift stored
    try:
        corpus.upsert(
            [
                Document(id="梅雨.md", text="梅雨入りは六月です。"),
                Document(id="kestrel.md", text="The kestrel hovers."),
            ]
        )
    finally:
        corpus.close()
    assert run(["index", "--store", url, "--embedder", "hash", "--json", str(notes)]) == 0
    printed = capsys.readouterr()
    summary = json.loads(printed.out)
    assert summary["renamed"] == [
        {"former": "kestrel.md", "id": "ノート/kestrel.md"},
        {"former": "梅雨.md", "id": "ノート/梅雨.md"},
    ]
    assert "renamed 梅雨.md -> ノート/梅雨.md" in printed.err
    stored = sorted(o.properties["doc_id"] for o in fake.objects("CliFormer").values())
    assert stored == ["ノート/kestrel.md", "ノート/梅雨.md"]  # one chunk each, no doubles
    # Again: nothing to rename, nothing new.
    assert run(["index", "--store", url, "--json", "-q", str(notes)]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["renamed"] == [] and again["unchanged"] == 2


def test_index_with_entity_graph_through_a_weaviate_url_is_refused(fake, tmp_path, capsys) -> None:
    (tmp_path / "a.md").write_text("# Signmark\n\nSignmark is from Finland.", encoding="utf-8")
    url = fake.url(collection="GraphDocs")
    argv = ["index", "--store", url, "--embedder", "hash", "--entity-graph", str(tmp_path)]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert "--entity-graph" in err and "WeaviateCorpus" in err and "nothing was indexed" in err
    assert not fake.collections.get("GraphDocs") or fake.objects("GraphDocs") == {}
