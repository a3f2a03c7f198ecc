"""The indexes derived from SQLite (BM25, dense vectors, grep's trigrams), kept in step
with it by one mechanism.

SQLite is the source of truth. Every write appends to its change log (`changes`: op,
chunk rowid, an AUTOINCREMENT sequence) in the transaction that writes the rows; only
after COMMIT is each derived index handed what changed (`apply`, a `Written`). An index
that lives on disk records beside it the change sequence it holds (`held`); `record`
makes every index durable up to SQLite's sequence (`commit`) and then prunes the log up
to what all of them hold, keeping `meta.log_floor` (the log holds every change past it).
On open each index catches up (`catch_up`, given the `ChangeLog`): it replays the
changes past what it holds while the log still covers them, or rebuilds itself from
SQLite when it does not (`ChangeLog.covers`). A crash at any point therefore costs a
replay, never data.

A new derived index is one more class with the `DerivedIndex` methods (in a module of
its own), passed to `Derived` where `Derived.open` builds it (`*more`): it gets the same
catch-up on open, the same writes after each commit, the same recording and log pruning,
and the same closing; a property here exposes it to `_reads`.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sift.errors import CorpusError
from sift.integrations.stores._closing import Step, release_quietly
from sift.integrations.stores.sqlite._changes import ChangeLog, DerivedIndex, Written
from sift.integrations.stores.sqlite._damage import IndexKind
from sift.integrations.stores.sqlite._lexical import LexicalIndex
from sift.integrations.stores.sqlite._schema import transaction
from sift.integrations.stores.sqlite._trigrams import TrigramIndex
from sift.integrations.stores.sqlite._vectors import ExactVectors
from sift.integrations.stores.sqlite._writer import WriterLock
from sift.text import Analyzer

if TYPE_CHECKING:
    # Imported when a store needs it (usearch takes a while to import).
    from sift.integrations.stores.sqlite._ann import AnnVectors
    from sift.integrations.stores.sqlite._entities import EntityIndex

__all__ = ["ENTITY_RECORD", "ChangeLog", "Derived", "DerivedIndex", "Written"]

# (ChangeLog, Written and DerivedIndex live in `_changes`, which the indexes import:
# the entity index imported them from here while this module imported it.)

log = logging.getLogger("sift.integrations.stores")

_ANN_FILE = "vectors.usearch"
_TRIGRAM_FILE = "trigrams.bin"
_ENTITY_FILE = "entities.rows"
# The entity index's record beside its file (`EntityIndex`: the file's name with .json):
# a store whose folder holds it keeps the graph on every open that does not say
# otherwise (`_open.keeps_entity_graph`).
ENTITY_RECORD = Path(_ENTITY_FILE).with_suffix(".json").name
# The HNSW graph is saved to disk at most this often during ingest (and on close); in
# between, a crash costs a replay of the change log, never data.
_ANN_SAVE_EVERY = 250_000
# What the BM25 index is given of a chunk: its title and text, and its document's
# metadata (JSON), whose text values it keeps as terms for filters (`_lexical`).
_CHUNK_ROWS = (
    "SELECT c.id, d.title, c.text, d.metadata FROM chunks c JOIN documents d ON d.id = c.doc"
)


class Derived:
    """Every derived index of one open store, in the order they catch up."""

    def __init__(
        self, lexical: _Lexical, vectors: _Vectors, trigrams: _Trigrams, *more: DerivedIndex
    ) -> None:
        self._lexical = lexical
        self._vectors = vectors
        self._trigrams = trigrams
        # The order they catch up, take writes and close in, but the BM25 index closes
        # last: it holds the store's write lock, which the others' saving checks.
        self.indexes: list[DerivedIndex] = [vectors, lexical, trigrams, *more]

    @classmethod
    def open(
        cls,
        path: Path,
        conn: Callable[[], sqlite3.Connection],
        *,
        dim: int,
        analyzer: Analyzer,
        writer: bool,
        vector_index: str,
        ann_threshold: int,
        lock: WriterLock,
        read_only: bool = False,
        entity_graph: bool = False,
        rebuild: Collection[IndexKind] = (),
    ) -> Derived:
        """Opens every index and catches it up with SQLite; on failure, closes what it
        opened (the BM25 index's writer lock among them) and raises. `writer`: the
        caller holds the store's writer lock (`lock`), and the indexes may be written.
        `read_only`: the folder cannot be written; the BM25 index is built in memory.
        `rebuild`: the indexes whose files are damaged, rebuilt from SQLite (in memory
        when they may not be written)."""
        lexical = _Lexical(
            LexicalIndex(
                path / "lexical",
                analyzer,
                writable=writer,
                in_memory=read_only,
                rebuild="lexical" in rebuild,
            ),
            path,
            lock,
        )
        more: list[DerivedIndex] = []
        if entity_graph:
            # Imported here: the entity index's module imports this one.
            from sift.integrations.stores.sqlite._entities import EntityIndex

            more.append(EntityIndex(path / _ENTITY_FILE, lambda: lexical.may_write(writer)))
        try:
            derived = cls(
                lexical,
                _Vectors(
                    path, conn, dim, writer, vector_index, ann_threshold, "vectors" in rebuild
                ),
                _Trigrams(
                    TrigramIndex(path / _TRIGRAM_FILE, lambda: lexical.may_write(writer)),
                    rebuild="trigrams" in rebuild,
                ),
                *more,
            )
            changes = ChangeLog.read(conn(), writer=writer)
            for index in derived.indexes:
                index.catch_up(changes)
            # Only then is the log pruned: every index has replayed what it needs of it.
            if writer:
                derived.record(conn(), changes.seq)
        except BaseException:
            release_quietly(f"store {path}", [("closing the BM25 index", lexical.index.close)])
            raise
        return derived

    # ------------------------------------------------------------------ for the write path

    def lock(self) -> None:
        """Takes the store's write lock (tantivy's writer lock): a second writing process
        is refused before anything is written."""
        self._lexical.index.lock()

    def apply(self, written: Written) -> None:
        for index in self.indexes:
            index.apply(written)

    def expect(self, chunks: int) -> None:
        """A write of at least `chunks` chunks is on its way: the entity index starts
        its worker process early (the other indexes need no notice)."""
        if (entities := self.entities) is not None:
            entities.expect(chunks)

    def discard(self) -> None:
        """Closes every index without saving anything (the store opens them again,
        caught up, from SQLite)."""
        release_quietly("derived indexes", [(index.closing, index.close) for index in self.indexes])

    def wait(self) -> None:
        for index in self.indexes:
            index.wait()

    def behind(self, seq: int) -> bool:
        """Whether `record(seq)` would make anything durable."""
        return any(index.pending(seq, final=False) for index in self.indexes)

    def record(self, conn: sqlite3.Connection, seq: int, *, final: bool = False) -> None:
        """Makes every index durable up to `seq` where it has something to, then prunes
        the change log up to what all of them hold."""
        if not any(index.pending(seq, final=final) for index in self.indexes):
            return
        for index in self.indexes:
            index.commit(seq, final=final)
        held = min((h for index in self.indexes if (h := index.held()) is not None), default=seq)
        with transaction(conn):
            conn.execute("DELETE FROM changes WHERE seq <= ?", (held,))
            conn.execute(
                "UPDATE meta SET value = ? WHERE key = 'log_floor' AND CAST(value AS INTEGER) < ?",
                (str(held), held),
            )

    def close_steps(self, conn: Callable[[], sqlite3.Connection], seq: int) -> list[Step]:
        """What closing takes, in order (for `release_all`): saving what is worth
        keeping (the HNSW graph), then closing each index."""
        steps: list[Step] = []
        if any(index.pending(seq, final=True) for index in self.indexes):
            steps.append(("saving the vector index", lambda: self.record(conn(), seq, final=True)))
        last: list[DerivedIndex] = [self._lexical]
        order = [index for index in self.indexes if index is not self._lexical] + last
        return steps + [(index.closing, index.close) for index in order]

    # ------------------------------------------------------------------ for reads

    @property
    def lexical(self) -> LexicalIndex:
        return self._lexical.index

    @property
    def vectors(self) -> ExactVectors | AnnVectors:
        return self._vectors.index

    @property
    def trigrams(self) -> TrigramIndex:
        return self._trigrams.index

    @property
    def entities(self) -> EntityIndex | None:
        """The entity graph, when the store keeps one (`entity_graph=True`)."""
        from sift.integrations.stores.sqlite._entities import EntityIndex

        return next((i for i in self.indexes if isinstance(i, EntityIndex)), None)


class _Lexical:
    """The tantivy BM25 index: committed with its sequence at every `record`."""

    closing = "closing the BM25 index"

    def __init__(self, index: LexicalIndex, store: Path, lock: WriterLock) -> None:
        self.index = index
        self._store = store
        self._lock = lock

    def may_write(self, writer: bool) -> bool:
        """Whether this process may write the derived indexes' files: it takes the
        store's writer lock and tantivy's, unless another process holds them."""
        if not writer or not self._lock.try_acquire():
            return False
        try:
            self.index.lock()
        except CorpusError:
            return False
        return True

    def catch_up(self, changes: ChangeLog) -> None:
        lex = self.index
        if lex.in_memory:
            self._rebuild(changes)
            lex.commit(changes.seq)
            return
        if lex.seq == changes.seq:
            self._check_count(changes)
            return
        if not changes.writer:
            # The writing process is between a SQLite commit and its BM25 commit (or
            # died there, and its next open replays): searches here see BM25 as of its
            # last commit, the rest as of SQLite.
            log.info(
                "store %s opened for reading: its BM25 index holds changes up to %d of %d",
                self._store,
                lex.seq,
                changes.seq,
            )
            return
        if not changes.covers(lex.seq):
            self._rebuild(changes)
            return
        touched = sorted(set(changes.chunks_since(lex.seq)))
        # Delete before re-adding: the index may already hold some of these chunks when
        # it committed but died before recording its sequence.
        for start in range(0, len(touched), 10_000):
            part = touched[start : start + 10_000]
            lex.delete(part)
            marks = ",".join("?" * len(part))
            lex.add(changes.conn.execute(f"{_CHUNK_ROWS} WHERE c.id IN ({marks})", part).fetchall())

    def _rebuild(self, changes: ChangeLog) -> None:
        self.index.reset()
        cursor = changes.conn.execute(_CHUNK_ROWS)
        while rows := cursor.fetchmany(5_000):
            self.index.add(rows)

    def _check_count(self, changes: ChangeLog) -> None:
        """An index whose record says it is complete but that holds another number of
        chunks than SQLite (two processes once both built a new store's index, and the
        survivor held half of it) is rebuilt, whatever its record says."""
        (chunks,) = changes.conn.execute("SELECT count(*) FROM chunks").fetchone()
        held = self.index.count()
        if held == chunks:
            return
        if not changes.writer:
            log.warning(
                "store %s: its BM25 index holds %d chunks, SQLite %d; searches miss the "
                "others until the store is opened for writing (which rebuilds it)",
                self._store,
                held,
                chunks,
            )
            return
        log.warning(
            "store %s: its BM25 index holds %d chunks, SQLite %d: rebuilding it from SQLite",
            self._store,
            held,
            chunks,
        )
        self._rebuild(changes)
        self.index.seq = -1  # recorded anew by the next `record`

    def apply(self, written: Written) -> None:
        self.index.delete(written.removed)
        metadata: list[Mapping[str, Any] | str] = [*written.metadata] or ["{}"] * len(written.rows)
        self.index.add(
            (cid, title, text, meta)
            for (cid, title, text), meta in zip(written.rows, metadata, strict=True)
        )

    def pending(self, seq: int, *, final: bool) -> bool:
        # Not at close: what an ingest left uncommitted (it failed) is replayed instead.
        return not final and self.index.seq != seq

    def commit(self, seq: int, *, final: bool) -> None:
        if not final:
            self.index.commit(seq)

    def held(self) -> int:
        return self.index.seq

    def wait(self) -> None:
        """Searches see the BM25 index as of its last commit (`record`)."""

    def close(self) -> None:
        self.index.close()


class _Vectors:
    """The dense index: exact in memory (loaded from SQLite), or the HNSW graph on disk
    (its sequence recorded), switched to once the store reaches `ann_threshold`."""

    closing = "closing the vector index"

    def __init__(
        self,
        path: Path,
        conn: Callable[[], sqlite3.Connection],
        dim: int,
        writer: bool,
        vector_index: str,
        ann_threshold: int,
        rebuild: bool = False,
    ) -> None:
        self._path = path
        self._conn = conn
        self._rebuild = rebuild  # the graph on disk is damaged: not loaded
        self._dim = dim
        self._writer = writer
        self._auto = vector_index == "auto"
        self._threshold = ann_threshold
        self._ann = vector_index == "ann"
        self.index: ExactVectors | AnnVectors = ExactVectors(dim)

    def catch_up(self, changes: ChangeLog) -> None:
        (count,) = changes.conn.execute("SELECT count(*) FROM vectors").fetchone()
        if self._ann or (
            self._auto and (count >= self._threshold or (self._path / _ANN_FILE).exists())
        ):
            self.index = self._open_ann(changes)
        else:
            exact = ExactVectors(self._dim)
            exact.load(changes.conn)
            self.index = exact

    def _open_ann(self, changes: ChangeLog) -> AnnVectors:
        """The HNSW index, caught up with SQLite by replay, or rebuilt when too old."""
        from sift.integrations.stores.sqlite._ann import AnnVectors

        ann = AnnVectors(self._path / _ANN_FILE, self._dim, rebuild=self._rebuild)
        self._rebuild = False  # rebuilt now: a later switch to the graph loads it
        if ann.seq != changes.seq:
            if changes.covers(ann.seq):
                ann.replay(changes.conn, iter(changes.chunks_since(ann.seq)))
            else:
                ann.rebuild(changes.conn)
        # Its record can claim a sequence the graph does not hold (two writers once raced
        # past each other, issue 31): the graph is compared with SQLite's vectors whatever
        # its record says, and rebuilt when they differ.
        (count,) = changes.conn.execute("SELECT count(*) FROM vectors").fetchone()
        if len(ann) != count:
            log.warning(
                "store %s: the vector graph holds %d vectors, SQLite %d; rebuilding it",
                self._path,
                len(ann),
                count,
            )
            ann.rebuild(changes.conn)
        if self._writer and ann.seq != changes.seq:
            ann.save(changes.seq)
        return ann

    def apply(self, written: Written) -> None:
        self.index.remove(written.removed)
        if len(written.rowids):
            self.index.add(written.rowids, written.vectors)
        # Switch as soon as the threshold is crossed, not at the end of a long ingest, so
        # the exact matrix never grows far past it (memory) before the graph takes over.
        if (
            self._auto
            and isinstance(self.index, ExactVectors)
            and len(self.index) >= self._threshold
        ):
            self.index = self._open_ann(ChangeLog.read(self._conn(), writer=self._writer))

    def pending(self, seq: int, *, final: bool) -> bool:
        return final and self._writer and self.held() not in (None, seq)

    def commit(self, seq: int, *, final: bool) -> None:
        index = self.index
        if not isinstance(index, ExactVectors) and (final or index.unsaved >= _ANN_SAVE_EVERY):
            index.save(seq)

    def held(self) -> int | None:
        return None if isinstance(self.index, ExactVectors) else self.index.seq

    def wait(self) -> None:
        self.index.wait()

    def close(self) -> None:
        self.index.close()


class _Trigrams:
    """grep's trigram signatures: they track chunk rowids themselves (a watermark), so
    they keep no place in the change log, and save what they indexed on close."""

    closing = "saving the grep index"

    def __init__(self, index: TrigramIndex, *, rebuild: bool = False) -> None:
        self.index = index
        self._rebuild = rebuild  # its files are damaged: every chunk is indexed again

    def catch_up(self, changes: ChangeLog) -> None:
        self.index.load(changes.conn, rebuild=self._rebuild)

    def apply(self, written: Written) -> None:
        if len(written.rowids):
            self.index.add(written.rowids, [text for _, _, text in written.rows])

    def pending(self, seq: int, *, final: bool) -> bool:
        return False

    def commit(self, seq: int, *, final: bool) -> None:
        """Full blocks are written as they fill; the open one on close."""

    def held(self) -> None:
        return None

    def wait(self) -> None:
        """Its bits are set in the write path itself."""

    def close(self) -> None:
        self.index.close()
