"""Real episodes over a small Japanese and English store, and the headless browser."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sift.graphs import HarnessConfig, ScriptedPolicy, search
from sift.integrations.stores import open_store
from sift.integrations.traceview.browser import browser_problem, chromium
from sift.types import Document, SearchResult, ToolCallTrace

QUESTION_JA = "金閣寺を建てた人物はどこで生まれたか？"

DOCS = [
    Document(
        id="kinkakuji",
        title="金閣寺",
        text="金閣寺は室町幕府の第三代将軍、足利義満が建てた寺院で、京都市北区にある。",
    ),
    Document(
        id="yoshimitsu",
        title="足利義満",
        text="足利義満は室町幕府の第三代将軍である。1358年に京都で生まれた。",
    ),
    Document(id="kyoto", title="京都", text="京都は日本の古都で、清水寺や金閣寺で知られる。"),
    Document(
        id="eiffel",
        title="Eiffel Tower",
        text="The Eiffel Tower in Paris was completed in 1889 by the company of Gustave Eiffel.",
    ),
    Document(
        id="gustave",
        title="Gustave Eiffel",
        text="Gustave Eiffel was a French civil engineer born in Dijon in 1832.",
    ),
    # Markup in stored text must stay text on every page.
    Document(
        id="markup",
        title="<img src=x onerror=window.__xss=1>",
        text="</script><script>window.__xss=1</script><!-- 金閣寺 --> & more",
    ),
]

# Turn 1: a search and a grep whose pattern is invalid; turn 2: a read of a missing
# document, a read of a real one, a prune; turn 3: the final list with justifications.
SCRIPT: list[Any] = [
    [
        {"name": "search_corpus", "arguments": {"query": "金閣寺"}},
        {"name": "grep_corpus", "arguments": {"pattern": "(unclosed"}},
    ],
    [
        {"name": "read_document", "arguments": {"doc_id": "nowhere"}},
        {"name": "read_document", "arguments": {"doc_id": "yoshimitsu"}},
        {"name": "prune_chunks", "arguments": {"chunk_ids": ["kyoto_0"]}},
    ],
    {
        "final": [
            {"id": "yoshimitsu_0", "justification": "義満は1358年に京都で生まれた。"},
            {"id": "kinkakuji_0", "justification": "金閣寺を建てたのは足利義満。"},
            {"id": "markup_0", "justification": "<b>not bold</b> & not markup"},
        ]
    },
]


@pytest.fixture(scope="session")
def question_ja() -> str:
    return QUESTION_JA


def build_store(path: Path) -> Path:
    corpus = open_store(path, embedder="hash")
    try:
        corpus.upsert(DOCS)
    finally:
        corpus.close()
    return path


@pytest.fixture(scope="session")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collections root: `wiki` (the documents above) and `private` (same documents)."""
    root = tmp_path_factory.mktemp("collections")
    for name in ("wiki", "private"):
        build_store(root / name)
    return root


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of its own for `sift search` processes (no other process has it open)."""
    return build_store(tmp_path_factory.mktemp("cli") / "store")


@pytest.fixture(scope="session")
def corpus(store_root: Path) -> Iterator[Any]:
    store = open_store(store_root / "wiki", create=False)
    yield store
    store.close()


@pytest.fixture(scope="session")
def scripted_result(corpus: Any) -> SearchResult:
    """A real episode with failing calls, reads, a prune and a final list; plus the call
    the harness records when it prunes on its own (a budget this small corpus never hits)."""
    # The script's own final list (not the harness's plain-search picks) is drawn.
    config = HarnessConfig(keep_plain_search=False)
    result = search(QUESTION_JA, corpus, policy=ScriptedPolicy(SCRIPT), top_k=5, config=config)
    harness_prune = ToolCallTrace(
        tool="prune_chunks", arguments={"by": "harness"}, pruned=["eiffel_0"]
    )
    turn2 = result.trace[1]
    trace = [result.trace[0], turn2.model_copy(update={"calls": [*turn2.calls, harness_prune]})]
    return result.model_copy(update={"trace": trace + result.trace[2:]})


@pytest.fixture(scope="session")
def planner_rollouts(corpus: Any) -> list[SearchResult]:
    """Three rollouts of the heuristic planner on the Japanese question."""
    from sift.graphs.policies import HeuristicPlanner

    planner = HeuristicPlanner()
    return [search(QUESTION_JA, corpus, policy=planner.fork(seed), top_k=5) for seed in range(3)]


# Files whose passages know where they sit (issue 44): a PDF's page, a Markdown section
# whose Japanese title sits under an English heading; and a JSONL line, which has neither.
LOCATED_QUESTION = "How did revenue move?"


def write_located_files(folder: Path) -> Path:
    import json

    from ..ingest.conftest import write_pdf

    folder.mkdir(parents=True, exist_ok=True)
    write_pdf(
        folder / "report.pdf",
        [["Cover of the annual report."], ["Revenue rose by twelve percent in the year."]],
        title="Annual Report",
    )
    (folder / "guide.md").write_text(
        "# Results\n\nAn overview of the year.\n\n## 売上高\n\n"
        "Revenue grew in every region. 売上高は全地域で伸びた。\n",
        encoding="utf-8",
    )
    memo = {"id": "memo", "title": "Memo", "text": "Revenue was discussed at length."}
    (folder / "notes.jsonl").write_text(json.dumps(memo) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def located_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collections root whose one collection, `reports`, holds the files above as
    `sift index` reads them."""
    from sift.integrations.ingest import read_inputs

    # Read from elsewhere, a folder is named by its name: ids start with `docs/`.
    folder = write_located_files(tmp_path_factory.mktemp("located-files") / "docs")
    root = tmp_path_factory.mktemp("located")
    corpus = open_store(root / "reports", embedder="hash")
    try:
        corpus.upsert(list(read_inputs([folder])))
    finally:
        corpus.close()
    return root


def japanese_font_problem() -> str | None:
    """Why Japanese text cannot draw here (the pages are checked to draw it), or None."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return "fc-list is missing: apt-get install fontconfig fonts-ipafont-gothic"
    found = subprocess.run([fc_list, ":lang=ja"], capture_output=True, text=True, check=False)
    if not found.stdout.strip():
        return "no Japanese font (fc-list :lang=ja): apt-get install fonts-ipafont-gothic"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium that can draw Japanese. Without one the browser tests skip,
    saying what to install; under .ci/run (SIFT_REQUIRE_BROWSER=1) they fail instead."""
    problem = browser_problem()
    if problem is None:
        problem = japanese_font_problem()
    if problem:
        if os.environ.get("SIFT_REQUIRE_BROWSER") == "1":
            pytest.fail(f"SIFT_REQUIRE_BROWSER=1 but no browser can run: {problem}")
        pytest.skip(f"no headless browser that draws Japanese: {problem}")
    with chromium(1280, 1000) as driver:
        yield driver
