"""`sift index` and `sift grep` with a weaviate:// store, against the loopback server."""

from __future__ import annotations

import json

from sift.integrations.cli import main


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
