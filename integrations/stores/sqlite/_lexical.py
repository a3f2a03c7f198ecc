"""The BM25 index: tantivy over chunk titles and texts, derived from SQLite.

tantivy commits atomically on its own; a sidecar file written after each commit records
the change sequence the commit covers. A crash between the two leaves the sidecar behind,
and replaying changes is idempotent (every replayed chunk is deleted by id before it is
added again), so the index never loses or duplicates a chunk.

Additions and deletions run on a thread of their own (`sift-lexical`), in the order they
were asked for, at most `_QUEUED` batches behind the caller: the terms of a batch's
chunks are worked out there (`TantivyAnalysis.fill`) while the store's writer goes on
with the next batch; it was the writer thread's largest part after SQLite. `commit`
waits for them first. A failure there is raised by the next call that queues or commits,
and from then on the index refuses to write or commit (its sidecar must never claim a
sequence whose chunks it lost): the store is reopened, and what was not committed is,
like any uncommitted addition, replayed from SQLite's change log.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import shutil
import struct
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import tantivy

from sift.errors import CorpusError, StoreLockedError
from sift.integrations.stores.locations import LOCATION_KEYS
from sift.integrations.stores.sqlite._analysis import TOKENIZER, TantivyAnalysis
from sift.integrations.stores.sqlite._damage import engine_calls, engine_failure, index_damaged
from sift.integrations.stores.sqlite._filtering import (
    Allowed,
    deepen,
    depth_for,
    first_passing,
    meta_term,
)
from sift.integrations.stores.sqlite._sidecar import read_seq, write_seq
from sift.integrations.stores.sqlite._worker import OrderedWorker
from sift.text import Analyzer

__all__ = ["LexicalIndex", "footer_mismatch"]

log = logging.getLogger("sift.integrations.stores")

# Bump when the tantivy schema or the way text is handed to it changes: forces a rebuild.
# 1 was tantivy's en_stem analysis; 2 is sift.text (the analyzer's spec is recorded
# beside the format, and a different one forces a rebuild too). Handing tantivy the terms
# joined by spaces (a C part since removed) rather than the text did not bump it: the
# index holds the same terms either way.
_FORMAT = 3
_FIELDS = ("title", "text")
# 3 added `meta`: the text values of each chunk's document metadata, one raw term each
# (`meta_term`: name, unit separator, value), for filters' text equalities.
META = "meta"
# Batches queued for the lexical thread at most: one being added, one waiting. More would
# only hold more texts in memory; the writer cannot get further ahead than its own pace.
_QUEUED = 2
# A filter's m allowed chunks join the query as a term set of their rowids (its cost
# grows with m), unless m^2 > _SWITCH * k * n: then asking for about k * n / m results
# and keeping the allowed ones costs less. Measured at 100k chunks (k 10 and 100; term
# set against deeper asking): 500 chunks 1.3 against 5.0 ms, 5,000 chunks 3.3 against
# 2.0 ms at k 10 and even at k 100 (benchmarks/filters.py). Below _TERM_SET_MIN the term
# set always wins.
_SWITCH = 2
_TERM_SET_MIN = 256
# A filter's text equalities join the query as terms when they allow less than this
# share of the chunks; a wider filter costs less asked a little deeper (a 50 % filter
# at 100k chunks: 1.0 ms by terms, the unfiltered 0.5 ms asked 41 deep).
_TERMS_BELOW = 0.25
# The terms cost about this many hits of asking deeper, a value: a text range said as its
# 365 values (a year of ISO days, 5 % of 100k chunks) cost 1.4 ms at k 10 where asking
# 271 deep cost 0.9 (0.44 unfiltered), and a hybrid search's k 100 (2,516 deep) 2.8 ms
# against 3.4 (an A/B on filters.py's 100k data, 4 alternated rounds, 60 questions; the
# script was not kept). So terms are said only when they are fewer than the depth over
# this.
_DEPTH_PER_VALUE = 1.6


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("cid", indexed=True, fast=True)
    for name in _FIELDS:
        builder.add_text_field(name, tokenizer_name=TOKENIZER, index_option="freq")
    builder.add_text_field(META, stored=False, tokenizer_name="raw", index_option="basic")
    return builder.build()


def meta_terms(metadata: Mapping[str, Any] | str) -> list[str]:
    """The `meta` terms of a document's metadata (a dict, or as stored: JSON): one per
    text value (`meta_term`), location tables aside."""
    parsed = json.loads(metadata) if isinstance(metadata, str) else metadata
    terms: list[str] = []
    for name, value in parsed.items() if isinstance(parsed, Mapping) else ():
        if name in LOCATION_KEYS:
            continue
        for item in value if isinstance(value, list) else (value,):
            term = meta_term(name, item)
            if term is not None:
                terms.append(term)
    return terms


class LexicalIndex:
    """A tantivy index keyed by chunk rowid (`cid`). Not thread-safe for writes: the
    store calls add/delete/commit under its write lock; search is safe from any thread."""

    def __init__(
        self,
        directory: Path,
        analyzer: Analyzer,
        *,
        heap_bytes: int = 64_000_000,
        writable: bool = True,
        in_memory: bool = False,
        rebuild: bool = False,
    ) -> None:
        """`rebuild`: the files on disk are damaged (a query failed in tantivy): the
        index starts empty, to be rebuilt from SQLite, on disk when it may be written,
        else in memory (another process writes the store, or this one only reads it)."""
        if rebuild and not writable:
            in_memory = True
        self._dir = directory
        # True: the folder cannot be written (a read-only mount), where tantivy cannot
        # even open an index for reading (it takes a lock file): the index is built in
        # memory from SQLite, and nothing is written to disk.
        self.in_memory = in_memory
        # False: another process writes this index; this one must never reset or write
        # it (a reset deletes the folder).
        self._writable = writable or in_memory
        self._sidecar = directory.with_suffix(".json")
        self._heap = heap_bytes
        self._schema = _schema()
        self._analysis = TantivyAnalysis(analyzer)
        self._recorded = {"analyzer": analyzer.spec}
        self._writer: tantivy.IndexWriter | None = None
        self._index: tantivy.Index | None = None
        self._pristine = False  # True while the index is a freshly made, untouched one
        self._worker = OrderedWorker("sift-lexical", _QUEUED)
        # What failed on the lexical thread, as text: an exception would keep its frames,
        # and with them tantivy's writer and its lock, alive.
        self._failure: str | None = None
        self.seq = -1  # -1: no usable index on disk; the store rebuilds it
        # An index made with another analysis (or by a sift before it recorded one) reads
        # as absent, so the store rebuilds it from SQLite.
        if in_memory:
            self._fresh_in_memory()
            return
        seq = None if rebuild else read_seq(self._sidecar, _FORMAT, self._recorded)
        if seq is not None and directory.is_dir() and tantivy.Index.exists(str(directory)):
            damaged = footer_mismatch(directory)
            if damaged is not None:
                log.warning(
                    "the BM25 index at %s is damaged (%s): rebuilding it from SQLite%s",
                    directory,
                    damaged,
                    "" if writable else " in memory (this process only reads the store)",
                )
                self._rebuild_damaged()
                return
            try:
                index = _manual(tantivy.Index(self._schema, path=str(directory), reuse=True))
                self._analysis.register(index)
                self._index = index
                self.seq = seq
            except BaseException as exc:  # a panic too: the files are unreadable
                if not engine_failure(exc):
                    raise
                self._rebuild_damaged()
        else:
            self._reset()

    def _rebuild_damaged(self) -> None:
        """Damaged files found on open: a writer clears them for a rebuild; a reader,
        which must not touch them, rebuilds in memory (as after a query that failed)."""
        if self._writable:
            self._reset()
            return
        self.in_memory = True
        self._writable = True  # its own in-memory index, never the files
        self._fresh_in_memory()

    def _fresh_in_memory(self) -> None:
        index = _manual(tantivy.Index(self._schema))
        self._analysis.register(index)
        self._index = index
        self.seq = -1
        self._pristine = True

    def _reset(self) -> None:
        """An empty index; callers then add every chunk and commit."""
        if self.in_memory:
            self._close_writer()
            self._fresh_in_memory()
            return
        if not self._writable:
            # IndexDamagedError: a service whose search processes read the store opens
            # its own, writing, store again on it, which rebuilds the index.
            raise index_damaged(
                "lexical",
                f"the BM25 index at {self._dir} is missing or was built differently, and a "
                "store opened for reading cannot rebuild it; open the store for writing "
                "once (the index is rebuilt from SQLite)",
            )
        with contextlib.suppress(Exception):  # the index is deleted next: nothing to undo
            self._settle()
        with contextlib.suppress(Exception):
            self._close_writer()
        # Drop tantivy's handles on the old files first: its directory watcher may still
        # write there, which made a single rmtree leave the folder behind (seen on an
        # idle machine, where that thread wins the race).
        self._index = None
        self._failure = None  # the index is rebuilt whole from here
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
        index = _manual(tantivy.Index(self._schema, path=str(self._dir), reuse=False))
        self._analysis.register(index)
        self._index = index
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
        if not self._writable:
            raise CorpusError(f"the BM25 index at {self._dir} is opened for reading")
        if self._writer is None:
            try:
                self._writer = self._live().writer(heap_size=self._heap, num_threads=1)
            except ValueError as exc:
                if not (self._dir / "meta.json").is_file():
                    # Not another writer: the index's files were removed under this
                    # process (which tantivy reports as a lock it could not take).
                    raise index_damaged(
                        "lexical", f"the BM25 index at {self._dir} is gone ({exc})"
                    ) from None
                # tantivy allows one writer per index: another process is writing.
                raise StoreLockedError(
                    f"the store's BM25 index at {self._dir} is locked by another process "
                    f"that is writing to this store; write from one process at a time ({exc})"
                ) from None
        return self._writer

    @property
    def writing(self) -> bool:
        """Whether this process holds tantivy's writer (and with it, its lock)."""
        return self._writer is not None

    def lock(self) -> None:
        """Takes tantivy's writer lock now, so a second writing process is refused before
        anything is written rather than after; so is any write after a failure here."""
        self._check_failure()
        self._w()

    def add(self, rows: Iterable[tuple[int, str, str, Mapping[str, Any] | str]]) -> None:
        """Queues the chunks (cid, title, text, their document's metadata: a dict, or
        JSON as stored) for the lexical thread."""
        self._pristine = False
        self._w()
        self._queue(self._add, list(rows))

    # The lexical thread's work reaches the writer through self, never holds it in a
    # frame: a failure's traceback must not keep the writer (and its lock) alive.
    def _add(self, rows: list[tuple[int, str, str, Mapping[str, Any] | str]]) -> None:
        docs = []
        # A document's chunks share its metadata (the same object, or the same JSON).
        terms_of: dict[int | str, list[str]] = {}
        for cid, _, _, metadata in rows:
            doc = tantivy.Document()
            doc.add_unsigned("cid", cid)
            key = metadata if isinstance(metadata, str) else id(metadata)
            if key not in terms_of:
                terms_of[key] = meta_terms(metadata)
            for term in terms_of[key]:
                doc.add_text(META, term)
            docs.append(doc)
        self._analysis.fill(docs, "title", [title for _, title, _, _ in rows])
        self._analysis.fill(docs, "text", [text for _, _, text, _ in rows])
        for doc in docs:
            self._w().add_document(doc)

    def delete(self, cids: Collection[int]) -> None:
        """Queues the deletion of these chunks, after every addition queued before."""
        self._pristine = False
        if cids:
            query = tantivy.Query.term_set_query(self._schema, "cid", list(cids))
            self._w()
            self._queue(self._delete, query)

    def _delete(self, query: tantivy.Query) -> None:
        self._w().delete_documents_by_query(query)

    def _queue(self, work: Callable[..., Any], *args: Any) -> None:
        self._check_failure()
        try:
            self._worker.submit(work, *args)
        except BaseException as exc:
            self._failure = repr(exc)
            raise

    def _check_failure(self) -> None:
        if self._failure is not None:
            raise CorpusError(
                f"the BM25 index at {self._dir} failed to add chunks earlier "
                f"({self._failure}); close the store and open it again: it replays from "
                "SQLite what the index had not committed"
            )

    def _settle(self) -> None:
        """Waits for everything queued; raises the first failure, once every piece of
        work has ended (none is left running behind the caller)."""
        try:
            self._worker.wait()
        except BaseException as exc:
            self._failure = self._failure or repr(exc)
            raise

    def commit(self, seq: int) -> None:
        """Publishes pending changes (once the queued ones are done), then records that
        the index covers `seq`."""
        self._settle()
        self._check_failure()
        self._w().commit()
        self._live().reload()
        if not self.in_memory:
            write_seq(self._sidecar, _FORMAT, seq, self._recorded)
        self.seq = seq

    def count(self) -> int:
        index = self._live()
        with engine_calls("lexical", self._what()):
            return int(index.searcher().num_docs)

    def _what(self) -> str:
        return "the BM25 index" + ("" if self.in_memory else f" at {self._dir}")

    def search(
        self,
        text: str,
        limit: int,
        exclude: Collection[int] = (),
        allowed: Allowed | None = None,
    ) -> list[tuple[int, float]]:
        """(cid, BM25 score) best first. The query is built from the analyzer's terms as
        term queries: no query parser ever reads the text. `allowed` (a filter's chunks):
        only those. A filter whose conditions include text equalities (`Allowed.terms`)
        and allow under a quarter of the chunks joins the query as those `meta` terms,
        which tantivy intersects with the text's postings; otherwise a few allowed chunks
        join it as a term set of their rowids, and many are found by asking deep enough
        for their share (`_SWITCH`). Filter clauses score nothing: scores are those of
        the whole index."""
        total = self.count() if allowed is not None and len(allowed) else 0
        if (
            allowed is not None
            and allowed.terms
            and len(allowed) < _TERMS_BELOW * total
            and _DEPTH_PER_VALUE * sum(len(v) for _, v in allowed.terms)
            < depth_for(limit, allowed, total)
        ):
            terms = self._terms_query(allowed.terms)
            # The terms keep the ranking to a superset of the allowed: `limit` deep first.
            return first_passing(
                lambda n: self._ranked(text, n, exclude, terms), limit, allowed.keep, limit
            )
        wide = allowed is not None and len(allowed) > _TERM_SET_MIN
        if wide and allowed is not None and len(allowed) ** 2 > _SWITCH * limit * total:
            return deepen(lambda n: self.search(text, n, exclude), limit, allowed, total)
        if allowed is not None and not len(allowed):
            return []
        inside = None
        if allowed is not None:
            inside = tantivy.Query.term_set_query(self._schema, "cid", allowed.rowids.tolist())
        return self._ranked(text, limit, exclude, inside)

    def _terms_query(self, terms: tuple[tuple[str, tuple[str, ...]], ...]) -> tantivy.Query:
        """Every (name, values) of a filter's text equalities: one of the values."""
        clauses = []
        for name, values in terms:
            said = [meta_term(name, v) for v in values]
            # One term set: a boolean of 365 term queries cost twice as much.
            one = (
                tantivy.Query.term_query(self._schema, META, said[0])
                if len(said) == 1
                else tantivy.Query.term_set_query(self._schema, META, said)
            )
            clauses.append((tantivy.Occur.Must, one))
        return clauses[0][1] if len(clauses) == 1 else tantivy.Query.boolean_query(clauses)

    def _ranked(
        self,
        text: str,
        limit: int,
        exclude: Collection[int],
        inside: tantivy.Query | None,
    ) -> list[tuple[int, float]]:
        """The text's best `limit`, among the chunks `inside` matches (None: all)."""
        query = self._analysis.query(self._schema, text, _FIELDS)
        if query is None:
            return []
        index = self._live()
        clauses = [(tantivy.Occur.Must, query)]
        if inside is not None:
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(inside, 0.0)))
        if exclude:
            blocked = tantivy.Query.term_set_query(self._schema, "cid", list(exclude))
            clauses.append((tantivy.Occur.MustNot, blocked))
        if len(clauses) > 1:
            query = tantivy.Query.boolean_query(clauses)
        # Damaged files fail here, as an error or a panic: IndexDamagedError, on which
        # the store rebuilds the index from SQLite and asks again.
        with engine_calls("lexical", self._what()):
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
        # So are queued ones, once they end, and their failures with them.
        with contextlib.suppress(Exception):
            self._settle()
        try:
            self._close_writer()
        finally:
            self._worker.close()  # nothing is queued any more: it only ends the thread


def _manual(index: tantivy.Index) -> tantivy.Index:
    """The index with a reader that reloads only when told (`commit` does, after its own
    commit). tantivy's default follows every commit on disk through a watcher thread, so a
    store opened for reading saw another process's writes in BM25 a moment after they
    were committed, but not in its vectors or grep index: its hybrid results changed
    under it, depending on timing (a flaky test showed it). A reader sees the store as it
    was when opened; opened again, as it is then."""
    index.config_reader(reload_policy="Manual")
    return index


# tantivy ends every segment file with a footer: its JSON ({"version": ..., "crc": ...}),
# the JSON's length and a magic number, both u32 little-endian. The crc is CRC-32 (IEEE,
# as zlib computes it) of the bytes before the footer. tantivy never checks it when it
# reads, so most flipped bytes went unnoticed and changed results without a word; read
# through a memory map, the check costs about 1.5 ms a megabyte on open (21k chunks of
# manuals: 4 MB, 6 ms).
_FOOTER_MAGIC = 1337
_FOOTER_TAIL = 8
_FOOTER_MAX = 50_000
# Segment files are written once. A search process of `sift serve` opens its reader again
# after every write of the service, so each live file this process has verified is
# remembered, by (name, inode, size, mtime, ctime: any write to the file moves ctime), and
# not read again while it stays so; per index folder, only its live files are kept.
_verified: dict[Path, frozenset[tuple[str, int, int, int, int]]] = {}


def footer_mismatch(directory: Path) -> str | None:
    """The first file of the index's live segments (those `meta.json` lists) whose bytes
    do not match the checksum of its footer, as "<file>: <what>"; None when all match.
    A file that is not there is left to tantivy's own open (a reader may race the
    writer's cleanup of an old segment); `meta.json` itself has no footer."""
    try:
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        segments = meta["segments"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"meta.json: unreadable ({type(exc).__name__})"
    known = _verified.get(directory, frozenset())
    checked: set[tuple[str, int, int, int, int]] = set()
    for segment in segments:
        try:
            prefix = str(segment["segment_id"]).replace("-", "") + "."
            deletes = segment.get("deletes")
            live_del = f"{prefix}{deletes['opstamp']}.del" if deletes else None
        except (KeyError, TypeError, AttributeError):
            return "meta.json: a segment without its id"
        for path in sorted(directory.glob(f"{prefix}*")):
            if path.suffix == ".del" and path.name != live_del:
                continue  # an older tombstone file, not yet removed
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            except OSError:
                return f"{path.name}: unreadable footer"  # as reading it would say
            key = (path.name, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            if key in known:
                checked.add(key)
                continue
            problem = _file_mismatch(path)
            if problem is not None:
                return f"{path.name}: {problem}"
            checked.add(key)
    _verified[directory] = frozenset(checked)
    return None


def _file_mismatch(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            if handle.seek(0, 2) < _FOOTER_TAIL:
                return "shorter than a footer"
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                length, magic = struct.unpack("<II", data[-_FOOTER_TAIL:])
                body_end = len(data) - _FOOTER_TAIL - length
                if magic != _FOOTER_MAGIC or length > _FOOTER_MAX or body_end < 0:
                    return "no footer"
                crc = json.loads(data[body_end : len(data) - _FOOTER_TAIL])["crc"]
                with memoryview(data) as view:  # no copy of the file's bytes
                    if zlib.crc32(view[:body_end]) != crc:
                        return "its bytes do not match its checksum"
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return "unreadable footer"
    return None
