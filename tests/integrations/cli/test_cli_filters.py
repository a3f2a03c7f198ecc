"""`--filter` on what files have: `lang` and `format` on every file `sift index` reads,
`page` and `section` on every passage; and a bad filter is one `sift: error:` line (exit
code 2) on every command that takes one, never a search that finds nothing. Japanese
beside English."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ..ingest.conftest import numbered_pages, write_pdf


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, sift_code: Callable[..., int]) -> Path:
    root = tmp_path_factory.mktemp("filters")
    folder = root / "docs"
    write_pdf(folder / "決算.pdf", numbered_pages(4), font="HeiseiMin-W3", title="決算説明資料")
    (folder / "guide.md").write_text(
        "# Basalt Guide\n\nThe annual report of the bridge was written in 1931.\n\n"
        "## Care\n\nOil the hinges of the annual report's bridge.",
        encoding="utf-8",
    )
    store = root / "store"
    assert sift_code("index", "--store", str(store), "--embedder", "hash", "-q", str(folder)) == 0
    return store


def _evidence(sift, store: Path, *args: str) -> list[dict]:
    run = sift("search", "--store", str(store), "--single-shot", "--json", *args)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["evidence"]


def test_lang_picks_the_japanese_file_and_not_the_english_one(sift, library: Path) -> None:
    for lang, name in (("ja", "決算.pdf"), ("en", "guide.md")):
        found = _evidence(sift, library, "--filter", f"lang={lang}", "annual report 売上高")
        assert found and {e["doc_id"].split("/")[-1] for e in found} == {name}, lang
        assert all(e["metadata"]["lang"] == lang for e in found)


def test_format_and_page_range_select_pdf_pages(sift, library: Path) -> None:
    spec = '{"page": {"gte": 2, "lte": 3}}'
    found = _evidence(sift, library, "--filter", "format=pdf", "--filter", spec, "annual report")
    assert sorted(e["metadata"]["page"] for e in found) == [2, 3]
    grep = sift("grep", "--store", str(library), "--json", "--filter", spec, "ページ目")
    assert grep.returncode == 0, grep.stderr
    pages = [h["chunk"]["metadata"]["page"] for h in json.loads(grep.stdout)["hits"]]
    assert sorted(pages) == [2, 3]
    one = _evidence(sift, library, "--filter", "page=4", "売上高")
    assert [e["metadata"]["page"] for e in one] == [4]


def test_section_selects_the_passage_under_a_heading(sift, library: Path) -> None:
    found = _evidence(sift, library, "--filter", "section=Basalt Guide > Care", "bridge")
    assert [e["metadata"]["section"] for e in found] == ["Basalt Guide > Care"]
    assert "Oil the hinges" in found[0]["text"]


ALLOWED = "the operators are eq, ne, gt, gte, lt, lte"


@pytest.mark.parametrize(
    ("command", "spec", "said"),
    [
        (
            ["search", "annual"],
            '{"year": {"gt_e": 2000}}',
            "year: unknown operator 'gt_e'; " + ALLOWED,
        ),
        (["grep", "annual"], 'ページ={"以上": 3}', "ページ: unknown operator '以上'; " + ALLOWED),
        (
            ["ls"],
            '{"conditions": [{"field": "lang", "op": "like", "value": "ja"}]}',
            "conditions[0].op: unknown operator 'like'; the operators are eq, ne, in,",
        ),
        (["search", "annual"], '{"year": ', "is not valid JSON"),
        (["search", "annual"], "lang", "expected KEY=VALUE or a JSON object"),
    ],
)
def test_a_bad_filter_is_one_error_line(
    sift, library: Path, command: list[str], spec: str, said: str
) -> None:
    run = sift(command[0], "--store", str(library), "--filter", spec, *command[1:])
    assert run.returncode == 2
    assert run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"sift: error: --filter {spec!r}") and said in line
    # With --json the same error is also on stdout, for a program reading it.
    as_json = sift(command[0], "--store", str(library), "--json", "--filter", spec, *command[1:])
    assert as_json.returncode == 2
    assert said in json.loads(as_json.stdout)["error"]


def test_a_bad_filter_is_refused_before_the_store_is_opened(sift, tmp_path: Path) -> None:
    run = sift("grep", "--store", str(tmp_path / "none"), "--filter", '{"y": {"gt_e": 1}}', "x")
    assert run.returncode == 2 and "unknown operator 'gt_e'" in run.stderr
