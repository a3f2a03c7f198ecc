"""Every filter example the documentation gives matches what it says it matches, on the
stores the README's own commands build from the README's own files (issue 43).

The examples are found, not listed: each `--filter` line of a shell block, and each JSON
object in backquotes in a paragraph (or table row) about filters, of README.md, docs/,
the n8n node's and Dify plugin's READMEs and examples/; and the JSON objects of the MCP
tools' description of `filters`. Each must be in EXPECTED below with the documents it
selects, so a new example is checked the day it is written.

The stores: the README's shell blocks that make files and index them (the walkthrough's
notes into ~/.sift/store, the Japanese notes into ./store-ja), run as written in an empty
folder with an empty home. The README's files have no pages, so an example on `page` is
checked on the same stores built with one more file in the walkthrough's folder: a
Japanese PDF of six pages (the README cannot write one in a shell line).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sift.errors import InvalidFilterError
from sift.filters import Filter, matches, parse_filter
from sift.integrations.stores import open_store
from sift.integrations.subagent import FILTERS_DESCRIPTION

from .integrations.ingest.conftest import numbered_pages, write_pdf
from .test_readme import readme_blocks, readme_env

ROOT = Path(__file__).resolve().parents[1]
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "examples").rglob("*.md")),
    ROOT / "integrations" / "n8n-node" / "README.md",
    ROOT / "integrations" / "dify-plugin" / "README.md",
]
PDF = "決算.pdf"
# What stands for "your question" in the README's reference lines, and what is asked
# instead: words of the README's notes and of the PDF's pages.
PLACEHOLDER = "..."
QUESTION = "Where does the kestrel hover? annual report"

ALL_NOTES = {"kestrel.md", "梅雨.md", "富士山.md"}
# The documents (file names) each example selects; "error" for one shown as refused.
EXPECTED: dict[str, set[str] | str] = {
    # JSON examples, as `json.dumps(..., sort_keys=True)`.
    '{"lang": "en"}': {"kestrel.md"},
    '{"lang": ["en", "ja"]}': ALL_NOTES,
    '{"format": ["markdown", "pdf"]}': ALL_NOTES,
    '{"section": "梅雨"}': {"梅雨.md"},
    '{"page": {"gte": 3, "lte": 5}}': {PDF},
    '{"page": {"gt_e": 3}}': "error",
    '{"conditions": [{"field": "lang", "op": "eq", "value": "ja"}, {"field": "section", '
    '"op": "eq", "value": "Kestrel"}], "logic": "or"}': ALL_NOTES,
    # Command lines, as the command and its --filter values.
    "search --filter format=pdf": set(),  # the README says: nothing matches
    "search --filter lang=en --filter format=markdown": {"kestrel.md"},
    'search --filter {"page": {"gte": 3, "lte": 5}}': {PDF},
    "ls --filter format=markdown": {"kestrel.md"},
    # The n8n node's and the Dify plugin's forms and messages.
    '{"format": "markdown", "lang": "en"}': {"kestrel.md"},
    '{"format": "pdf", "lang": "ja", "page": {"gte": 3, "lte": 5}}': {PDF},
    '{"conditions": [{"field": "lang", "op": "eq", "value": "en"}], "logic": "and"}': {
        "kestrel.md"
    },
}


@dataclass(frozen=True)
class Example:
    where: str  # file and line, for messages
    key: str  # its entry in EXPECTED
    spec: Any  # the filter: JSON data, or the merged --filter values of a command line
    argv: tuple[str, ...] = ()  # a command line's arguments (empty for a JSON example)
    says_nothing_matches: bool = False

    @property
    def on_pages(self) -> bool:
        return "page" in self.key


def _inline_json(path: Path) -> list[Example]:
    text = path.read_text(encoding="utf-8")
    # Prose only: a shell block's lines are commands (kept as blank lines, so that line
    # numbers still point into the file).
    text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group().count("\n"), text, flags=re.M | re.S)
    found = []
    # A table row is a paragraph of its own; other paragraphs end at a blank line.
    for para in re.split(r"\n\s*\n|\n(?=\|)|(?<=\|)\n", text):
        if not re.search(r"filter", para, re.I):
            continue
        for span in re.findall(r"`(\{[^`]*\})`", para):
            try:
                data = json.loads(span)
            except json.JSONDecodeError:
                continue  # a shape in words (`{"id", "error"}`), not an example
            line = text[: text.find(para)].count("\n") + 1
            key = json.dumps(data, sort_keys=True, ensure_ascii=False)
            found.append(Example(f"{path.relative_to(ROOT)}:{line}", key, data))
    return found


def _objects(text: str) -> list[Any]:
    """The JSON objects written in `text`, outermost only."""
    decoder, out, at = json.JSONDecoder(), [], 0
    while (at := text.find("{", at)) >= 0:
        try:
            data, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at += 1
            continue
        out.append(data)
        at = end
    return out


def _command_lines(path: Path) -> list[Example]:
    text = path.read_text(encoding="utf-8")
    found = []
    for block in re.finditer(r"^```(?:bash|sh|shell)\n(.*?)^```", text, re.M | re.S):
        first = text[: block.start(1)].count("\n") + 1
        for offset, line in enumerate(block.group(1).splitlines()):
            if "--filter" not in line:
                continue
            argv = shlex.split(line, comments=True)
            assert argv[0] == "sift", line
            values = [argv[i + 1] for i, a in enumerate(argv) if a == "--filter"]
            key = " ".join([argv[1], *(f"--filter {v}" for v in values)])
            comment = line.split(" # ", 1)[1] if " # " in line else ""
            found.append(
                Example(
                    f"{path.relative_to(ROOT)}:{first + offset}",
                    key,
                    values,
                    tuple(argv[1:]),
                    "nothing matches" in comment,
                )
            )
    return found


# The examples the n8n node and the Dify plugin show in their forms and error messages.
CODE = [
    ROOT / "integrations" / "n8n-node" / "nodes" / "Sift" / "Sift.node.ts",
    ROOT / "integrations" / "n8n-node" / "nodes" / "Sift" / "properties.ts",
    ROOT / "integrations" / "dify-plugin" / "tools" / "search.yaml",
    ROOT / "integrations" / "dify-plugin" / "sift_api.py",
]


def _code_examples(path: Path) -> list[Example]:
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not re.search(r"filter|metadata|placeholder|short form|条件", line, re.I):
            continue
        for data in _objects(line):
            # `{"field": value}` is the shape in words, not an example.
            if isinstance(data, dict) and data and "field" not in data:
                key = json.dumps(data, sort_keys=True, ensure_ascii=False)
                found.append(Example(f"{path.relative_to(ROOT)}:{number}", key, data))
    return found


def examples() -> list[Example]:
    found = [e for path in DOCS for e in _inline_json(path) + _command_lines(path)]
    found += [e for path in CODE for e in _code_examples(path)]
    for data in _objects(FILTERS_DESCRIPTION):
        key = json.dumps(data, sort_keys=True, ensure_ascii=False)
        found.append(Example("sift.integrations.subagent.FILTERS_DESCRIPTION", key, data))
    return found


def test_the_examples_are_found_and_each_is_expected() -> None:
    found = examples()
    keys = {e.key for e in found}
    # The README's own, the MCP tools' and the n8n node's are all there.
    assert "search --filter lang=en --filter format=markdown" in keys
    assert {e.where.split(":")[0] for e in found} >= {
        "README.md",
        "docs/subagent.md",
        "integrations/n8n-node/README.md",
        "sift.integrations.subagent.FILTERS_DESCRIPTION",
    }
    unknown = sorted(f"{e.where}: {e.key}" for e in found if e.key not in EXPECTED)
    assert not unknown, f"filter examples with nothing expected of them: {unknown}"
    stale = sorted(set(EXPECTED) - keys)
    assert not stale, f"expected examples no longer in the documentation: {stale}"


# --------------------------------------------------------------------------- the stores


def _store_lines() -> list[str]:
    """The README's lines that write its files and index them (not `sift demo`, whose
    store is the demo's: no filter example is about it)."""
    lines = []
    for block in readme_blocks():
        runs = block.skipped_because is None or "test_readme_japanese" in block.skipped_because
        if block.language != "bash" or not runs:
            continue
        lines += [
            line
            for line in block.code.splitlines()
            if re.match(r"(mkdir|printf) |sift index ", line)
        ]
    return lines


@dataclass(frozen=True)
class Built:
    home: Path
    work: Path

    def stores(self) -> list[Path]:
        """Every store the README's lines made: the default one and those by --store."""
        found = [self.home / ".sift" / "store"]
        found += [p.parent for p in self.work.glob("*/sift.db")]
        return [p for p in found if p.is_dir()]


def _build(root: Path, *, with_pdf: bool) -> Built:
    home, work = root / "home", root / "work"
    home.mkdir(parents=True)
    work.mkdir()
    lines = _store_lines()
    if with_pdf:
        index = next(line for line in lines if re.match(r"sift index \S+\s*(#|$)", line))
        folder = work / index.split()[2]
        write_pdf(folder / PDF, numbered_pages(6), font="HeiseiMin-W3", title="決算説明資料")
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", "\n".join(lines)],
        cwd=work,
        env=readme_env(home),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    return Built(home, work)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Built]:
    """The README's stores, and the same with the PDF (key: with pages)."""
    return {
        pages: _build(tmp_path_factory.mktemp("pdf" if pages else "readme"), with_pdf=pages)
        for pages in (False, True)
    }


def test_the_readme_builds_its_stores(built: dict[bool, Built]) -> None:
    assert len(built[False].stores()) == 2  # ~/.sift/store and ./store-ja


def _name(doc_id: str) -> str:
    return doc_id.rsplit("/", 1)[-1]


def _selected(built: Built, spec: Filter) -> tuple[set[str], list[dict[str, Any]]]:
    """The documents the filter selects in every store, and the records of the passages."""
    names: set[str] = set()
    records: list[dict[str, Any]] = []
    for path in built.stores():
        corpus = open_store(path, writer=False)
        try:
            for hit in corpus.grep("(?s).", k=1_000, filters=spec).hits:
                chunk = hit.chunk
                names.add(_name(chunk.doc_id))
                records.append({**chunk.metadata, "doc_id": chunk.doc_id, "title": chunk.title})
        finally:
            corpus.close()
    return names, records


@pytest.mark.parametrize("example", examples(), ids=lambda e: f"{e.where} {e.key}")
def test_each_example_selects_what_it_should(built: dict[bool, Built], example: Example) -> None:
    expected = EXPECTED.get(example.key)
    assert expected is not None, f"{example.where}: add {example.key!r} to EXPECTED"
    stores = built[example.on_pages]
    if example.argv:
        _check_command(stores, example, expected)
        return
    if expected == "error":
        with pytest.raises(InvalidFilterError, match="unknown operator"):
            parse_filter(example.spec)
        return
    spec = parse_filter(example.spec)
    assert spec is not None
    names, records = _selected(stores, spec)
    assert names == expected, example.where
    assert all(matches(spec, r) for r in records)
    if example.on_pages:
        assert {r["page"] for r in records} == {3, 4, 5}


def _check_command(built: Built, example: Example, expected: set[str] | str) -> None:
    assert isinstance(expected, set)
    # With --json (every command with --filter takes it), to read what it found.
    command, *rest = example.argv
    argv = [command, "--json", *(QUESTION if a == PLACEHOLDER else a for a in rest)]
    run = subprocess.run(
        ["sift", *argv],
        cwd=built.work,
        env=readme_env(built.home),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, f"{example.where}: {run.stderr}"
    if command == "ls":
        listed = [json.loads(line) for line in run.stdout.splitlines()]
        names = {_name(d["doc_id"]) for d in listed}
        records = [{**d["metadata"], "doc_id": d["doc_id"], "title": d["title"]} for d in listed]
    else:
        result = json.loads(run.stdout)
        items = result["evidence"] if command == "search" else [h["chunk"] for h in result["hits"]]
        names = {_name(e["doc_id"]) for e in items}
        records = [{**e["metadata"], "doc_id": e["doc_id"], "title": e["title"]} for e in items]
    assert names == expected, f"{example.where}: {run.stderr}"
    spec = Filter.of({k: v for item in example.spec for k, v in _short(item).items()})
    assert all(matches(spec, r) for r in records)
    if not expected:
        # An example that matches nothing says so, and so does sift.
        assert example.says_nothing_matches, f"{example.where}: say that nothing matches"
        assert "nothing found" in run.stderr
    if example.on_pages:
        assert {r["page"] for r in records} <= {3, 4, 5} and records


def _short(item: str) -> dict[str, Any]:
    """A --filter value as the CLI reads it (KEY=VALUE, the value JSON when it can be)."""
    if item.startswith("{"):
        data: dict[str, Any] = json.loads(item)
        return data
    key, _, raw = item.partition("=")
    try:
        return {key: json.loads(raw)}
    except json.JSONDecodeError:
        return {key: raw}
