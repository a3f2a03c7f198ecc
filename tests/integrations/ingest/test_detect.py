"""Text or not, and in which encoding: real files under text names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sift.integrations.ingest import InputProblem, read_inputs

JAPANESE = (
    "第3四半期の売上高は前年同期比12.5%増の4,820億円となりました。\n営業利益は改善しました。\n"
)


def _read(path: Path) -> tuple[list[str], list[InputProblem]]:
    problems: list[InputProblem] = []
    texts = [d.text for d in read_inputs([path], problems)]
    return texts, problems


@pytest.mark.parametrize(
    ("codec", "reported"),
    [
        ("utf-8", "utf-8"),
        ("utf-8-sig", "utf-8-sig"),
        ("utf-16", "utf-16"),  # with its byte-order mark
        ("utf-16-be", None),  # written with a BOM below
        ("cp932", "shift_jis"),
        ("euc_jp", "euc-jp"),
    ],
)
def test_japanese_text_in_every_common_encoding(
    tmp_path: Path, codec: str, reported: str | None
) -> None:
    path = tmp_path / "決算.txt"
    data = JAPANESE.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    path.write_bytes(data)
    problems: list[InputProblem] = []
    (document,) = read_inputs([path], problems)
    assert problems == []
    assert document.text == JAPANESE
    assert document.metadata["encoding"] == (reported or "utf-16")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (os.urandom(50_000), "binary content"),
        (b"\x7fELF\x02\x01\x01\x00" + os.urandom(4_000), "ELF executable"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "a PDF document"),
        (b"PK\x03\x04" + bytes(64), "ZIP archive"),
        (b"ok text " + bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 50, "control bytes"),
    ],
)
@pytest.mark.parametrize("name", ["data.txt", "notes.md", "page.html", "table.csv"])
def test_binary_content_under_a_text_name_is_refused(
    tmp_path: Path, content: bytes, says: str, name: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    texts, problems = _read(path)
    assert texts == []
    (problem,) = problems
    assert problem.reason == "binary content" and says in problem.error


def test_unknown_encodings_and_empty_files_are_refused_clearly(tmp_path: Path) -> None:
    latin = tmp_path / "café.txt"
    latin.write_bytes("Un café crème à la gare du Nord, s'il vous plaît.".encode("latin-1"))
    texts, problems = _read(latin)
    assert texts == [] and problems[0].reason == "encoding"
    assert "convert it to UTF-8" in problems[0].error
    bad_bom = tmp_path / "bom.txt"
    bad_bom.write_bytes(b"\xff\xfe" + b"\x00\xd8")  # UTF-16 BOM, then a lone surrogate
    assert _read(bad_bom)[1][0].reason == "encoding"
    for name, data in (("empty.txt", b""), ("blank.md", b"  \n\t\n")):
        (tmp_path / name).write_bytes(data)
        assert _read(tmp_path / name)[1][0].reason == "empty"


def test_a_jsonl_file_that_is_binary_is_one_problem_not_thousands(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b"\x7fELF" + os.urandom(20_000))
    texts, problems = _read(path)
    assert texts == [] and [p.reason for p in problems] == ["binary content"]
