"""Every document read from a file carries `lang` and `format`, what files are filtered
on; a JSONL line's own `lang` or `format` is kept as given. Japanese beside English."""

from __future__ import annotations

import json
from pathlib import Path

from sift.integrations.ingest import InputProblem, read_inputs

from .conftest import numbered_pages, write_docx, write_pdf


def _metadata(tmp_path: Path) -> dict[str, dict[str, object]]:
    problems: list[InputProblem] = []
    docs = {d.id: dict(d.metadata) for d in read_inputs([tmp_path / "in"], problems)}
    assert problems == []
    return docs


def test_each_file_gets_its_language_and_format(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "kestrel.md").write_text(
        "# Kestrel\n\nThe kestrel hovers over the north tower at dawn.\n", encoding="utf-8"
    )
    (folder / "梅雨.md").write_text(
        "# 梅雨\n\n梅雨は初夏の東アジアで雨の多い時期である。\n", encoding="utf-8"
    )
    (folder / "notes.txt").write_text("Notes on the bridge and its hinges.", encoding="utf-8")
    (folder / "page.html").write_text(
        "<html><head><title>富士山</title></head><body><h1>富士山</h1>"
        "<p>富士山は静岡県と山梨県にまたがる日本最高峰の火山である。</p></body></html>",
        encoding="utf-8",
    )
    write_pdf(folder / "決算.pdf", numbered_pages(2), font="HeiseiMin-W3", title="決算説明資料")
    write_docx(folder / "report.docx")
    docs = _metadata(tmp_path)
    got = {doc_id.split("/")[-1]: (m["lang"], m["format"]) for doc_id, m in docs.items()}
    assert got == {
        "kestrel.md": ("en", "markdown"),
        "梅雨.md": ("ja", "markdown"),
        "notes.txt": ("en", "text"),
        "page.html": ("ja", "html"),
        "決算.pdf": ("ja", "pdf"),
        # Its title and first heading are Japanese (統合報告書 2024): the opening decides.
        "report.docx": ("ja", "docx"),
    }


def test_a_jsonl_line_keeps_its_own_lang_and_format(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    lines = [
        # Told: kept as given, even where the text would say otherwise.
        {"id": "told", "text": "The kestrel hovers.", "metadata": {"lang": "ja"}},
        {"id": "format", "text": "梅雨の時期。", "metadata": {"format": "pdf", "page": 3}},
        # Not told: guessed from the text, and `format` says the file was JSONL.
        {"id": "guessed-ja", "text": "富士山は日本最高峰の火山である。"},
        {"id": "guessed-en", "text": "Mount Fuji is the highest mountain in Japan."},
    ]
    (folder / "c.jsonl").write_text(
        "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n",
        encoding="utf-8",
    )
    docs = _metadata(tmp_path)
    assert docs == {
        "told": {"lang": "ja", "format": "jsonl"},
        "format": {"format": "pdf", "page": 3, "lang": "ja"},
        "guessed-ja": {"lang": "ja", "format": "jsonl"},
        "guessed-en": {"lang": "en", "format": "jsonl"},
    }
