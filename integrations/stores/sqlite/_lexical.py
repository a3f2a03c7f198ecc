"""The BM25 index: tantivy over chunk titles and texts, derived from SQLite.

tantivy commits atomically on its own; a sidecar file written after each commit records
the change sequence the commit covers. A crash between the two leaves the sidecar behind,
and replaying changes is idempotent (every replayed chunk is deleted by id before it is
added again), so the index never loses or duplicates a chunk.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import time
from collections.abc import Collection, Iterable
from pathlib import Path

import tantivy

from sift.errors import CorpusError
from sift.integrations.stores.sqlite._sidecar import read_seq, write_seq

__all__ = ["LexicalIndex"]

_FORMAT = 1  # bump when the tantivy schema or tokenisation changes: forces a rebuild
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
# Keep queries bounded: BM25 over a thousand OR-ed terms is slow and no better.
_MAX_TERMS = 256


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("cid", indexed=True, fast=True)
    builder.add_text_field("title", tokenizer_name="en_stem", index_option="freq")
    builder.add_text_field("text", tokenizer_name="en_stem", index_option="freq")
    return builder.build()


class LexicalIndex:
    """A tantivy index keyed by chunk rowid (`cid`). Not thread-safe for writes: the
    store calls add/delete/commit under its write lock; search is safe from any thread."""

    def __init__(self, directory: Path, *, heap_bytes: int = 64_000_000) -> None:
        self._dir = directory
        self._sidecar = directory.with_suffix(".json")
        self._heap = heap_bytes
        self._schema = _schema()
        self._writer: tantivy.IndexWriter | None = None
        self._index: tantivy.Index | None = None
        self._pristine = False  # True while the index is a freshly made, untouched one
        self.seq = -1  # -1: no usable index on disk; the store rebuilds it
        seq = read_seq(self._sidecar, _FORMAT)
        if seq is not None and directory.is_dir() and tantivy.Index.exists(str(directory)):
            try:
                self._index = tantivy.Index(self._schema, path=str(directory), reuse=True)
                self.seq = seq
            except (OSError, ValueError):
                self._reset()
        else:
            self._reset()

    def _reset(self) -> None:
        """An empty index; callers then add every chunk and commit."""
        with contextlib.suppress(Exception):  # the index is deleted next: nothing to undo
            self._close_writer()
        # Drop tantivy's handles on the old files first: its directory watcher may still
        # write there, which made a single rmtree leave the folder behind (seen on an
        # idle machine, where that thread wins the race).
        self._index = None
        self._sidecar.unlink(missing_ok=True)
        for attempt in range(5):
            shutil.rmtree(self._dir, ignore_errors=True)
            if not self._dir.exists():
                break
            time.sleep(0.02 * (attempt + 1))
        else:
            raise CorpusError(
                f"cannot clear the BM25 index folder {self._dir}; remove it and reopen the "
                "store (the index is rebuilt from SQLite)"
            )
        self._dir.mkdir(parents=True)
        self._index = tantivy.Index(self._schema, path=str(self._dir), reuse=False)
        self.seq = -1
        self._pristine = True

    def _live(self) -> tantivy.Index:
        # None after a reset that failed half way: say so, rather than AttributeError.
        if self._index is None:
            raise CorpusError(
                f"the BM25 index at {self._dir} is unusable: clearing it for a rebuild "
                "failed; remove the folder and reopen the store (the index is rebuilt "
                "from SQLite)"
            )
        return self._index

    def reset(self) -> None:
        """Empties the index, unless it is the empty one `_reset` just made."""
        if not self._pristine:
            self._reset()

    def _w(self) -> tantivy.IndexWriter:
        if self._writer is None:
            try:
                self._writer = self._live().writer(heap_size=self._heap, num_threads=1)
            except ValueError as exc:
                # tantivy allows one writer per index: another process is writing.
                raise CorpusError(
                    f"the store's BM25 index at {self._dir} is locked by another process "
                    f"that is writing to this store; write from one process at a time ({exc})"
                ) from None
        return self._writer

    def lock(self) -> None:
        """Takes tantivy's writer lock now, so a second writing process is refused before
        anything is written rather than after."""
        self._w()

    def add(self, rows: Iterable[tuple[int, str, str]]) -> None:
        self._pristine = False
        writer = self._w()
        for cid, title, text in rows:
            doc = tantivy.Document()
            doc.add_unsigned("cid", cid)
            doc.add_text("title", title)
            doc.add_text("text", text)
            writer.add_document(doc)

    def delete(self, cids: Collection[int]) -> None:
        self._pristine = False
        if cids:
            query = tantivy.Query.term_set_query(self._schema, "cid", list(cids))
            self._w().delete_documents_by_query(query)

    def commit(self, seq: int) -> None:
        """Publishes pending changes, then records that the index covers `seq`."""
        self._w().commit()
        self._live().reload()
        write_seq(self._sidecar, _FORMAT, seq)
        self.seq = seq

    def count(self) -> int:
        return int(self._live().searcher().num_docs)

    def search(
        self, text: str, limit: int, exclude: Collection[int] = ()
    ) -> list[tuple[int, float]]:
        """(cid, BM25 score) best first; words only, so query syntax cannot leak in."""
        words = _WORDS.findall(text.lower())[:_MAX_TERMS]
        if not words:
            return []
        index = self._live()
        query = index.parse_query(" ".join(words), ["title", "text"])
        if exclude:
            blocked = tantivy.Query.term_set_query(self._schema, "cid", list(exclude))
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, query), (tantivy.Occur.MustNot, blocked)]
            )
        searcher = index.searcher()
        hits = searcher.search(query, limit, count=False).hits
        if not hits:
            return []
        cids = searcher.fast_field_values("cid", [address for _, address in hits])
        return [(int(cid or 0), float(score)) for (score, _), cid in zip(hits, cids, strict=True)]

    def _close_writer(self) -> None:
        """Rolls back and drops the writer (and its lock); a failed rollback is raised
        once the writer is dropped."""
        writer, self._writer = self._writer, None
        try:
            if writer is not None:
                writer.rollback()
        finally:
            del writer  # a traceback of the failure must not keep the lock alive

    def close(self) -> None:
        # Uncommitted additions are dropped on purpose: SQLite's change log replays them.
        self._close_writer()
