"""Fixtures of the MCP tests: a real embedded store (hash embedder) with English and
Japanese documents, and the command that serves it (`python -m sift mcp ...`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

DOCS = [
    Document(
        id="vesuvius",
        title="Mount Vesuvius",
        text="Mount Vesuvius is a volcano near Naples in Italy. Its eruption in 79 AD "
        "buried the Roman town of Pompeii.",
        metadata={"region": "europe", "page": 3},
    ),
    Document(
        id="pompeii",
        title="Pompeii",
        text="Pompeii was an ancient Roman town near Naples, preserved under volcanic ash.",
        metadata={"region": "europe", "pages": [4, 5]},
    ),
    Document(
        id="pliny",
        title="Pliny the Younger",
        text="Pliny the Younger described the eruption of Vesuvius in two letters to the "
        "historian Tacitus.",
        metadata={"region": "europe"},
    ),
    Document(
        id="etna",
        title="Mount Etna",
        text="Mount Etna is an active volcano on the island of Sicily.",
        metadata={"region": "europe"},
    ),
    Document(
        id="rainier",
        title="Mount Rainier",
        text="Mount Rainier is a glaciated volcano near Seattle in Washington state.",
        metadata={"region": "america"},
    ),
    Document(
        id="fuji",
        title="富士山",
        text="富士山は静岡県と山梨県にまたがる活火山で、標高は3776メートル、日本一高い山です。",
        metadata={"region": "asia"},
    ),
    Document(
        id="biwa",
        title="琵琶湖",
        text="琵琶湖は滋賀県にある日本最大の湖です。",
        metadata={"region": "asia"},
    ),
]


def build_store(path: Path, documents: list[Document] = DOCS) -> Path:
    corpus = SqliteCorpus(path, embedder="hash")
    try:
        corpus.upsert(documents)
    finally:
        corpus.close()
    return path


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("mcp") / "store")


@pytest.fixture
def docs() -> list[Document]:
    return list(DOCS)


@pytest.fixture(scope="session")
def sift_mcp() -> Callable[..., list[str]]:
    """The command line of `sift mcp ARGS` in this interpreter."""

    def command(*args: str) -> list[str]:
        return [sys.executable, "-m", "sift", "mcp", *args]

    return command


@pytest.fixture(scope="session")
def stdio_server(sift_mcp: Callable[..., list[str]]) -> Callable[..., StdioServerParameters]:
    """What an MCP client launches: `sift mcp ARGS` over stdio."""

    def parameters(*args: str) -> StdioServerParameters:
        command = sift_mcp(*args)
        return StdioServerParameters(command=command[0], args=command[1:])

    return parameters
