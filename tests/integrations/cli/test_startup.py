"""The `sift` command starts quickly because it imports only what a command uses: a guard
on the heavy modules each call may load, checked in a fresh interpreter (the timings
are in benchmarks/cli_startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Imported by what only some commands need: the graph (LangGraph, LangChain, LangSmith),
# model servers and their HTTP clients, the HTTP service, MCP, the trace viewer's browser
# tests, plots, the store's engines and the embedder's model.
GRAPH = ("langgraph", "langchain_core", "langchain", "langsmith")
SERVERS = ("ollama", "weaviate", "httpx", "grpc", "fastapi", "starlette", "uvicorn", "mcp")
TOOLS = ("selenium", "matplotlib", "bm25s", "prometheus_client", "schemathesis")
STORE = ("numpy", "tantivy", "usearch", "tokenizers", "safetensors", "model2vec", "re2")
NEVER_FOR_HELP = GRAPH + SERVERS + TOOLS + STORE
NEVER_FOR_ONE_SHOT = GRAPH + SERVERS + TOOLS + ("usearch", "model2vec")

PROBE = textwrap.dedent(
    """
    import json, sys
    from sift.integrations.cli import main
    try:
        main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
    """
)


def _loaded(*argv: str, env: dict[str, str] | None = None) -> tuple[int, set[str]]:
    """Runs `sift argv...` in a fresh interpreter: its exit code and the top-level
    packages it imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], {name.split(".")[0] for name in report["modules"]}


def test_importing_the_cli_and_its_help_load_nothing_heavy() -> None:
    for argv in ((), ("--help",), ("search", "--help"), ("index", "--help")):
        code, modules = _loaded(*argv)
        assert code in (0, 2), argv  # no arguments: the help, with a usage exit code
        assert not modules & set(NEVER_FOR_HELP), (argv, sorted(modules & set(NEVER_FOR_HELP)))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    path = tmp_path_factory.mktemp("startup") / "store"
    with SqliteCorpus(path, embedder="static") as corpus:
        corpus.upsert(
            Document(id=f"d{i}", title=f"Town {i}", text=f"Town {i} lies on river {i % 5}.")
            for i in range(50)
        )
    return path


def test_a_one_shot_search_loads_no_graph_and_no_model_client(store: Path) -> None:
    for question in ("Which town lies on river 3?", "川の町はどこ?"):
        code, modules = _loaded(
            "search", "--single-shot", "--json", "--store", str(store), question
        )
        assert code == 0
        assert not modules & set(NEVER_FOR_ONE_SHOT), sorted(modules & set(NEVER_FOR_ONE_SHOT))
        assert {"numpy", "tantivy", "tokenizers"} <= modules  # it did search the store
