"""The tool nodes: search_corpus, grep_corpus and read_document run one call on the store;
prune_chunks resolves the ids a policy asked to prune (DESIGN "Tools").

Each receives its call through a `Send` (a `ToolTask`) and writes its `ToolOutcome` under
the call's index; the calls of a turn run concurrently, and the budget node then renders
their outcomes in call order. Store calls run on the graph's own bounded pool, and one
that outlives the deadline becomes an error observation; a tool node never raises.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, cast

from langgraph.runtime import Runtime

from sift.config import HarnessConfig
from sift.entities import fuse_search_with_walk
from sift.errors import SiftError
from sift.filters import Filter
from sift.nodes._services import Services
from sift.nodes._state import ToolOutcome, ToolTask
from sift.protocols import Corpus, EntityGraphCorpus
from sift.types import Chunk, Hit, SearchMode, split_chunk_id

__all__ = ["grep_corpus", "prune_chunks", "read_document", "search_corpus"]

Outcomes = dict[str, dict[int, ToolOutcome]]


def _outcome(task: ToolTask, **fields: Any) -> Outcomes:
    outcome = cast(ToolOutcome, {"index": task["index"], **fields})
    return {"outcomes": {task["index"]: outcome}}


def _failure(tool: str, exc: BaseException) -> str:
    if isinstance(exc, SiftError):
        return f"Error: {exc}"
    return f"Error: {tool} failed: {type(exc).__name__}: {exc}"


async def _on_store(task: ToolTask, services: Services, work: Callable[[], Any]) -> Any:
    """Runs `work` on the graph's store pool, bounded by the episode's deadline."""
    deadline = task["deadline"]
    timeout = None if deadline is None else max(0.0, deadline - time.time())
    future = asyncio.get_running_loop().run_in_executor(services.executor, work)
    return await asyncio.wait_for(future, timeout)


async def _run(
    task: ToolTask, services: Services, work: Callable[[], Any], done: Callable[[Any], Outcomes]
) -> Outcomes:
    tool = task["tool"]
    try:
        return done(await _on_store(task, services, work))
    except TimeoutError:
        return _outcome(task, error=f"Error: {tool} did not finish before the deadline.")
    except Exception as exc:  # a store failure is an observation, never a crashed episode
        return _outcome(task, error=_failure(tool, exc))


def _filter(task: ToolTask) -> Filter | None:
    data = task.get("filters")
    return None if data is None else Filter.model_validate(data)


async def search_corpus(
    task: ToolTask, runtime: Runtime[HarnessConfig], *, services: Services
) -> Outcomes:
    """One hybrid search, excluding every chunk an earlier search of the episode returned;
    over a corpus that keeps the entity graph and with `search_graph_weight` set, fused
    with the walk from the query's entities and the search's best hits."""
    alpha = task.get("alpha")
    corpus, filters = services.corpus, _filter(task)
    mode = cast(SearchMode, task.get("mode", "hybrid"))
    weight = task.get("graph_weight", 0.0)

    def work() -> tuple[list[Hit], dict[str, str]]:
        query, k, exclude = task["argument"], task["fetch"], frozenset(task.get("exclude", ()))
        if alpha is None:
            # alpha only when set, so a Corpus written before the per-call weight works.
            hits = corpus.search(query, k=k, mode=mode, filters=filters, exclude=exclude)
        else:
            hits = corpus.search(
                query, k=k, mode=mode, filters=filters, exclude=exclude, alpha=alpha
            )
        if weight <= 0 or not isinstance(corpus, EntityGraphCorpus) or not corpus.entity_graph:
            return hits, {}
        return fuse_search_with_walk(
            corpus,
            corpus,
            query,
            hits,
            k=k,
            # Set with the weight by the policy node, from the episode's configuration.
            seeds=task["graph_seeds"],
            weight=weight,
            rrf_k=task["graph_rrf_k"],
            exclude=exclude,
            filters=filters,
        )

    def done(found: tuple[list[Hit], dict[str, str]]) -> Outcomes:
        hits, via = found
        return _outcome(task, chunks=[h.chunk for h in hits], via=via)

    return await _run(task, services, work, done)


async def grep_corpus(
    task: ToolTask, runtime: Runtime[HarnessConfig], *, services: Services
) -> Outcomes:
    """One regular-expression scan (RE2, linear time) over the chunks."""
    corpus, filters = services.corpus, _filter(task)

    def work() -> Any:
        return corpus.grep(task["argument"], k=task["fetch"], filters=filters)

    return await _run(
        task,
        services,
        work,
        lambda found: _outcome(task, chunks=[h.chunk for h in found.hits], note=found.note),
    )


def _read(corpus: Corpus, doc_id: str) -> tuple[str, list[Chunk]]:
    chunks = corpus.read(doc_id)
    if not chunks and "_" in doc_id:
        # Models often pass a chunk id (`<doc_id>_<index>`) where a document id is due.
        parts = split_chunk_id(doc_id)
        if parts is not None:
            head = parts[0]
            chunks = corpus.read(head)
            if chunks:
                return head, chunks
    return doc_id, chunks


async def read_document(
    task: ToolTask, runtime: Runtime[HarnessConfig], *, services: Services
) -> Outcomes:
    """A document's chunks in order (a chunk id stands for its document)."""
    corpus = services.corpus

    def done(found: tuple[str, list[Chunk]]) -> Outcomes:
        return _outcome(task, chunks=found[1], doc_id=found[0])

    return await _run(task, services, lambda: _read(corpus, task["argument"]), done)


def prune_chunks(
    task: ToolTask, runtime: Runtime[HarnessConfig], *, services: Services
) -> Outcomes:
    """Maps the ids to prune to surfaced chunk ids; a document id stands for its chunks."""
    surfaced = task.get("surfaced", {})
    known: list[str] = []
    unknown: list[str] = []
    by_doc: dict[str, list[str]] | None = None
    for wanted in task.get("prune_ids", []):
        if wanted in surfaced:
            known.append(wanted)
            continue
        if by_doc is None:
            by_doc = {}
            for chunk_id, doc_id in surfaced.items():
                by_doc.setdefault(doc_id, []).append(chunk_id)
        if wanted in by_doc:
            known += by_doc[wanted]
        else:
            unknown.append(wanted)
    return _outcome(task, pruned=known, unknown=unknown)
