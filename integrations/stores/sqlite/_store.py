"""`SqliteCorpus`: the embedded corpus store, one SQLite file as the source of truth with
a tantivy BM25 index, a dense vector index (exact in memory, or HNSW) and grep's trigram
signatures derived from it.

This class holds the store's `State`, checks nothing itself, and hands each operation to
the module of its concern: `_open` (opening, creating, migrating, closing),
`_connections` (per-thread SQLite connections), `_derived` (keeping the derived indexes
in step with SQLite), `_ingest` (upsert and delete) and `_reads` (search, grep, reads,
statistics).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

import numpy as np

from sift.entities import WalkResult
from sift.filters import Filter
from sift.integrations.stores._closing import close_on_exit, released_on_failure
from sift.integrations.stores.catalog import DocumentInfo
from sift.integrations.stores.sqlite import _ingest, _open, _reads
from sift.integrations.stores.sqlite._connections import Connections
from sift.integrations.stores.sqlite._schema import DB_NAME, read_only, store_error, transaction
from sift.integrations.stores.sqlite._settings import EmbeddedSettings
from sift.integrations.stores.sqlite._state import State, read_meta
from sift.protocols import Embedder
from sift.text import Analyzer
from sift.types import Chunk, CorpusStats, Document, GrepResult, Hit, SearchMode, UpsertReport

__all__ = ["SqliteCorpus"]

_R = TypeVar("_R")
_P = ParamSpec("_P")


def _said(
    method: Callable[Concatenate[SqliteCorpus, _P], _R],
) -> Callable[Concatenate[SqliteCorpus, _P], _R]:
    """Decorates a public method: a SQLite failure on the store's file (a damaged page
    read half-way through a query, a lock) leaves it as the CorpusError that says what
    it is and what to do (`store_error`), never as sqlite3's own error: the CLI and the
    service print and answer those, where a DatabaseError was a traceback."""

    @functools.wraps(method)
    def call(self: SqliteCorpus, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store_error(exc, getattr(self, "_path", Path()) / DB_NAME) from None

    return call


def _said_each(items: Iterator[_R], db: Path) -> Iterator[_R]:
    """`_said` for an iterator read a page at a time (the failure comes at a `next`)."""
    try:
        yield from items
    except sqlite3.Error as exc:
        raise store_error(exc, db) from None


# The options' defaults, written once (EmbeddedSettings), not read from the environment:
# the constructor takes what its caller gives (open_store reads the environment).
_DEFAULTS = EmbeddedSettings.model_construct()


class SqliteCorpus:
    """A sift store in a directory (`sift.db` plus derived indexes beside it).

    Args:
        path: the store directory; created when absent (unless `create=False`).
        embedder: an Embedder, or a name for `get_embedder`; None uses the one recorded in
            the store, or `DEFAULT_EMBEDDER` for a new store.
        create: create a store when `path` is absent or an empty directory: True now,
            "on_write" at the first write (until then every read is NotAStoreError naming
            the path, so a mistyped path never reads as an empty store; `open_store`'s
            default), False never.
        fusion: hybrid fusion strategy, one of `fusion_names()` ("relative_score", "rrf").
        alpha: weight of dense scores in hybrid fusion; 0 is BM25 only, 1 dense only;
            None takes the tuned default of the embedder (`default_alpha`).
        chunk_tokens: chunk size for new stores (a store keeps the size it was made with).
        analyzer: how text becomes BM25 terms (`sift.text.Analyzer`); None uses the
            one recorded in the store, or `default_analyzer()` for a new store (or one
            made before analyzers were recorded). Another analyzer than the recorded one
            is recorded instead and the BM25 index rebuilt from SQLite (nothing else
            changes; see docs/languages.md).
        hybrid_candidates: how many results of each list hybrid search fuses.
        max_query_chars / max_pattern_chars: input limits for search and grep.
        batch_docs: documents per ingest transaction.
        lexical_commit_chunks: chunks an ingest writes between two commits of the BM25
            index (each makes them searchable there and lets the change log be pruned).
        vector_index: "exact" (in memory), "ann" (an HNSW graph on disk), or "auto":
            exact until the store holds `ann_threshold` chunks, then the graph.
        writer: False opens an existing store for reading beside the process that writes
            it (`sift serve`'s search processes): nothing on disk is written (no derived
            index is repaired or saved, the analyzer and schema are taken as recorded)
            and writes raise CorpusError. It sees the store as of its opening, up to the
            writer's last BM25 commit; open it again to see later writes.
        entity_graph: keep the entity graph of the chunks (docs/entity-graph.md) for
            `walk_entities` and `single_shot`: in memory, its rows recorded beside the
            store and read back on open (only chunks written since are extracted).
            None (the default): kept when the store kept it before (its record
            `entities.json` is in the folder), so a store made with it keeps it on
            every open, the CLI's and the server's too; False: not on this open. Off
            for a new store: extracting entities, in a worker process beside the
            writer, adds 30-36 % to an English ingest on 2 cores.
    """

    @released_on_failure
    @_said
    def __init__(
        self,
        path: str | Path,
        *,
        embedder: Embedder | str | None = None,
        create: bool | Literal["on_write"] = True,
        fusion: str = _DEFAULTS.fusion,
        alpha: float | None = _DEFAULTS.alpha,
        chunk_tokens: int | None = _DEFAULTS.chunk_tokens,
        analyzer: Analyzer | None = None,
        hybrid_candidates: int = _DEFAULTS.hybrid_candidates,
        max_query_chars: int = _DEFAULTS.max_query_chars,
        max_pattern_chars: int = _DEFAULTS.max_pattern_chars,
        batch_docs: int = _DEFAULTS.batch_docs,
        lexical_commit_chunks: int = _DEFAULTS.lexical_commit_chunks,
        vector_index: str = _DEFAULTS.vector_index,
        ann_threshold: int = _DEFAULTS.ann_threshold,
        writer: bool = _DEFAULTS.writer,
        entity_graph: bool | None = _DEFAULTS.entity_graph,
    ) -> None:
        options = _open.check_options(
            fusion=fusion,
            alpha=alpha,
            analyzer=analyzer,
            hybrid_candidates=hybrid_candidates,
            max_query_chars=max_query_chars,
            max_pattern_chars=max_pattern_chars,
            batch_docs=batch_docs,
            lexical_commit_chunks=lexical_commit_chunks,
            vector_index=vector_index,
            ann_threshold=ann_threshold,
            writer=writer,
            entity_graph=entity_graph,
        )
        self._path = Path(path).expanduser().resolve()
        # A store on a read-only mount (or a folder this process may not write) is
        # opened for reading: SQLite as immutable, no derived index written.
        folder_read_only = self._path.is_dir() and read_only(self._path)
        if folder_read_only:
            options = replace(options, writer=False)
        self._conns = Connections(self._path, read_only=folder_read_only)
        self._s: State = _open.open_state(
            self._path,
            self._conns,
            options,
            embedder=embedder,
            create=create,
            chunk_tokens=chunk_tokens,
        )

    def _release_after_failed_open(self) -> None:
        """What `__init__` opened before it failed (the derived indexes, their writer
        lock among them, release themselves): the SQLite connections."""
        _open.release_after_failed_open(
            getattr(self, "_path", Path()), getattr(self, "_conns", None)
        )

    # ------------------------------------------------------------------ writes

    @_said
    def upsert(
        self,
        documents: Iterable[Document],
        *,
        on_progress: Callable[[int], None] | None = None,
    ) -> UpsertReport:
        return _ingest.upsert(self._s, documents, on_progress)

    @_said
    def delete(self, doc_ids: Iterable[str]) -> int:
        return _ingest.delete(self._s, doc_ids)

    # ------------------------------------------------------------------ reads

    @_said
    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        vector: np.ndarray | None = None,
        filters: Filter | Mapping[str, Any] | None = None,
        exclude: Collection[str] = (),
        alpha: float | None = None,
    ) -> list[Hit]:
        return _reads.search(
            self._s,
            query,
            k=k,
            mode=mode,
            vector=vector,
            filters=filters,
            exclude=exclude,
            alpha=alpha,
        )

    @_said
    def grep(
        self,
        pattern: str,
        *,
        k: int = 5,
        filters: Filter | Mapping[str, Any] | None = None,
        exclude: Collection[str] = (),
    ) -> GrepResult:
        return _reads.grep(self._s, pattern, k=k, filters=filters, exclude=exclude)

    @_said
    def read(self, doc_id: str) -> list[Chunk]:
        return _reads.read(self._s, doc_id)

    @_said
    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return _reads.get_chunks(self._s, chunk_ids)

    @property
    @_said
    def entity_graph(self) -> bool:
        """Whether this open keeps the entity graph (`walk_entities` answers); for a
        store not made yet (made by its first write), whether it will."""
        if self._s.pending is not None:
            return self._s.options.entity_graph is True
        self._s.require()
        return self._s.indexes().entities is not None

    @_said
    def walk_entities(
        self,
        question: str,
        *,
        seeds: Sequence[str] = (),
        k: int = 10,
        exclude: Collection[str] = (),
        filters: Filter | Mapping[str, Any] | None = None,
    ) -> WalkResult:
        """The entity graph's walk from the question's entities and the `seeds` chunk
        ids (`EntityGraphCorpus`), keeping chunks that pass `filters`; CorpusError
        unless the store was opened with `entity_graph=True`."""
        return _reads.walk(self._s, question, seeds=seeds, k=k, exclude=exclude, filters=filters)

    @_said
    def stats(self) -> CorpusStats:
        return _reads.stats(self._s)

    # ------------------------------------------------------------------ catalog

    def documents(self, *, prefix: str | None = None) -> Iterator[DocumentInfo]:
        """Every stored document by id (`DocumentCatalog`), read a page at a time."""
        return _said_each(_reads.documents(self._s, prefix), self._path / DB_NAME)

    @_said
    def source_root(self) -> str | None:
        """The folder the ids of indexed files are relative to (`SourceRoots`)."""
        if self._s.pending is not None:
            return self._s.pending_root
        return read_meta(self._s.conn()).get("source_root")

    @_said
    def record_source_root(self, root: str) -> None:
        """Records the source root; the first one recorded stays."""
        state = self._s
        state.check_writer()
        if state.pending is not None:
            state.pending_root = state.pending_root or root
            return
        with state.write_lock, transaction(state.conn()) as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('source_root', ?)", (root,)
            )

    # ------------------------------------------------------------------ lifecycle

    @_said
    def close(self) -> None:
        """Saves what must be saved and releases every file and connection; when a step
        fails the others still run, then CorpusError says what failed."""
        _open.close(self._s)

    @property
    def location(self) -> str:
        """The store's folder."""
        return str(self._path)

    def __enter__(self) -> SqliteCorpus:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        close_on_exit(self.close, exc)

    @property
    def embedder(self) -> Embedder:
        """The embedder of this store's vectors (pass it to a later open of the same
        store to skip loading the model again)."""
        return self._s.embedder

    @property
    def analyzer(self) -> Analyzer:
        """How this store's text becomes BM25 terms (recorded in the store)."""
        return self._s.analyzer

    def __repr__(self) -> str:
        return f"SqliteCorpus({str(self._path)!r}, embedder={self._s.embedder.name!r})"
