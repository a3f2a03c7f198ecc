"""The entity graph as a derived index of the embedded store (issue 32, opt-in).

What every chunk names (`sift.entities.graph_row`: its title, capitalised and quoted
spans, dates, Japanese names), kept per chunk rowid in memory, and the walk's CSR graph
built from those rows when a walk first needs it after a write.

The rows are also recorded in `entities.rows`, one line per chunk (`[rowid, title keys,
key, ...]`, JSON) appended in rowid order, and `entities.json` says how many of its bytes
are whole and fsynced (`seq`) and with which extraction they were made. Opening reads
the file up to there, drops the rows of chunks SQLite no longer holds, and extracts only
the chunks from the last recorded rowid on: chunk rowids are never reused and every
write adds them in ascending order, so every live chunk below that rowid is in the file
(the same watermark as grep's trigram index). Rows are appended at close and every
`_SAVE_EVERY` new chunks during an ingest; the sidecar moves only after the bytes are
fsynced, and the next append first cuts the file back to the sidecar's length, so a
crash at any point costs re-extracting what came after the last save, never a wrong
graph. A file of another extraction (another sift version, other `SIFT_ENTITY_GRAPH_*` limits,
or another result on a fixed probe passage) is rebuilt from SQLite. Only the process
holding the store's write lock writes the files.

The store turns it on with `SqliteCorpus(..., entity_graph=True)`: extracting entities
adds 30-36 % to an English ingest on 2 cores (benchmarks/results/entity_graph.md), so it
is not on by default. A large write's entities are found in a worker process
(`_extractor.Extractor`); its rows are taken in rowid order as batches come back, and at
the end of every write call (`wait`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

import sift
from sift.entities import (
    EntityGraph,
    EntityGraphConfig,
    EntityLimits,
    WalkResult,
    graph_row,
    question_entities,
)
from sift.integrations.stores.sqlite._changes import ChangeLog, Written
from sift.integrations.stores.sqlite._extractor import Extractor
from sift.integrations.stores.sqlite._sidecar import read_seq, write_seq

__all__ = ["EntityIndex"]

_log = logging.getLogger(__name__)

_FORMAT = 1  # bump when the file's layout changes
# Rows appended to the file during an ingest once this many are unsaved (a crash then
# re-extracts at most this many chunks; close saves the rest).
_SAVE_EVERY = 50_000
# Chunks read from SQLite at a time when the file is caught up on open.
_REBUILD_BATCH = 5_000
# Extracted on open: a change to the extraction that moves what these passages name
# changes the file's recorded digest, so the rows are made again (the version and the
# limits cover the rest).
_PROBE = (
    (
        "Battle of Manila (1945)",
        'On 3 February 1945 the "Flying Column" of Ludwig van Beethoven Street reached '
        "Santo Tomas, Manila. "
        "東京スカイツリーは墨田区にある。設計は『日建設計』、2012年5月22日開業。",
    ),
    ("George Nicholls Jr.", "Chatterbox (1936) was directed by George Nicholls, Jr. in Ålesund."),
    ("Batman: Under the Red Hood", "A film."),
)
_ROWS = (
    "SELECT c.id, d.title, c.text, d.doc_id || '_' || c.idx "
    "FROM chunks c JOIN documents d ON d.id = c.doc WHERE c.id >= ? ORDER BY c.id"
)
_IDS = "SELECT c.id, d.doc_id || '_' || c.idx FROM chunks c JOIN documents d ON d.id = c.doc"

# One encoder for every row: `json.dumps` with an argument builds one per call (a third
# of encoding the rows).
_ROW_JSON = json.JSONEncoder(ensure_ascii=False)

# A chunk's row: its id, its entity keys, how many of the first keys are its title's.
_Row = tuple[str, list[str], int]


class EntityIndex:
    """Entity keys per chunk rowid, and the walk over them (`DerivedIndex`)."""

    closing = "saving the entity graph"

    def __init__(
        self,
        path: Path,
        writable: Callable[[], bool],
        config: EntityGraphConfig | None = None,
    ) -> None:
        self.config = config or EntityGraphConfig()
        self._limits = self.config.limits()
        self._path = path
        self._sidecar = path.with_suffix(".json")
        self._writable = writable
        self._recorded = {"extraction": _extraction(self._limits)}
        self._rows: dict[int, _Row] = {}
        self._unsaved: list[int] = []  # rowids added since the file's end, ascending
        self._saved_bytes = 0
        self._graph: EntityGraph | None = None
        self._lock = threading.Lock()
        self._extractor = Extractor(self._limits, self.config.worker_min_chunks)
        # Chunks removed while their rows were still being extracted: rowids are never
        # reused, so a row that comes back for one of them is dropped.
        self._dead: set[int] = set()
        self.extracted = 0  # chunks whose entities this process extracted (not read back)

    def __len__(self) -> int:
        return len(self._rows)

    # ------------------------------------------------------------------ DerivedIndex

    def catch_up(self, changes: ChangeLog) -> None:
        live = dict(changes.conn.execute(_IDS).fetchall())
        saved, lines, size, mark = self._read(live)
        rows: dict[int, _Row] = dict(saved)
        unsaved: list[int] = []
        cursor = changes.conn.execute(_ROWS, (mark,))
        batch, done = cursor.fetchmany(_REBUILD_BATCH), 0
        while batch:
            upcoming = cursor.fetchmany(_REBUILD_BATCH)
            done += len(batch)
            if upcoming:  # more than one batch: long enough for the worker, maybe
                self._extractor.prepare(done + len(upcoming))
            self._extractor.submit([(r, cid, title, text) for r, title, text, cid in batch])
            batch = upcoming
            for rowid, row in self._extractor.take(wait=False):
                rows[rowid] = row
                unsaved.append(rowid)
        for rowid, row in self._extractor.take(wait=True):
            rows[rowid] = row
            unsaved.append(rowid)
        self._extractor.stop()
        self.extracted += len(unsaved)
        with self._lock:
            self._rows, self._graph = rows, None
        self._unsaved, self._saved_bytes = unsaved, size
        # More dead rows than live ones (documents deleted or rewritten since): the file
        # is written again with the live ones only.
        if len(saved) < lines // 2:
            self._unsaved, self._saved_bytes = sorted(rows), 0
        # Saved now, even when empty: the record also says the store keeps the graph.
        if self._unsaved or not self._sidecar.exists():
            self._save()

    def apply(self, written: Written) -> None:
        if written.removed:
            if self._extractor.busy():
                self._dead.update(written.removed)
            with self._lock:
                for rowid in written.removed:
                    self._rows.pop(rowid, None)
                self._graph = None
        self._extractor.submit(
            [
                (rowid, cid, title, text)
                for (rowid, title, text), cid in zip(written.rows, written.chunk_ids, strict=True)
            ]
        )
        self._take(wait=False)

    def expect(self, chunks: int) -> None:
        """A write of at least `chunks` chunks is on its way (see `Extractor.prepare`)."""
        self._extractor.prepare(chunks)

    def _take(self, *, wait: bool) -> None:
        """Takes the rows the extraction has finished (`wait`: all of them) into the
        graph, in rowid order."""
        new = {r: row for r, row in self._extractor.take(wait=wait) if r not in self._dead}
        if not self._extractor.busy():
            self._dead.clear()
        if not new:
            return
        self.extracted += len(new)
        with self._lock:
            self._rows.update(new)
            self._graph = None
        self._unsaved.extend(new)
        if len(self._unsaved) >= _SAVE_EVERY:
            self._save()

    def pending(self, seq: int, *, final: bool) -> bool:
        return False

    def commit(self, seq: int, *, final: bool) -> None:
        """Rows are appended by `apply` and `close`, not at the log's records."""

    def held(self) -> None:
        return None

    def wait(self) -> None:
        """Takes every row still being extracted, and ends the worker process (one
        runs for one write call)."""
        self._take(wait=True)
        self._extractor.stop()

    def close(self) -> None:
        """Appends the rows not yet in the file; a failure to (a full disk) only means
        the next open extracts them again."""
        self.wait()
        if self._unsaved:
            self._save()
        with self._lock:
            self._rows, self._graph = {}, None

    # ------------------------------------------------------------------ the file

    def _read(self, live: dict[int, str]) -> tuple[dict[int, _Row], int, int, int]:
        """The recorded rows of chunks SQLite still holds, how many rows the file holds
        (live or dead), its recorded length, and the rowid from which chunks are
        extracted again."""
        size = read_seq(self._sidecar, _FORMAT, self._recorded) or 0
        data = b""
        if size:
            try:
                with open(self._path, "rb") as handle:
                    data = handle.read(size)
            except OSError:
                data = b""
            if len(data) != size:
                data, size = b"", 0  # the file lost what the sidecar counts
        rows: dict[int, _Row] = {}
        mark = 0
        try:
            lines = json.loads(b"[" + data.rstrip(b"\n").replace(b"\n", b",") + b"]")
        except ValueError:
            _log.warning("the entity graph's file %s is unreadable: rebuilding it", self._path)
            return {}, 0, 0, 0
        for rowid, n_title, *keys in lines:
            mark = rowid + 1
            chunk_id = live.get(rowid)
            if chunk_id is not None:
                rows[rowid] = (chunk_id, keys, n_title)
        return rows, len(lines), size, mark

    def _save(self) -> None:
        """Appends the unsaved rows (cutting off whatever a crash left past the recorded
        length), fsyncs, then records the new length."""
        if not self._writable():
            return
        with self._lock:
            rows = [(r, self._rows[r]) for r in self._unsaved if r in self._rows]
        encode = _ROW_JSON.encode
        text = "".join(
            encode([rowid, n_title, *keys]) + "\n" for rowid, (_, keys, n_title) in rows
        ).encode()
        try:
            with open(self._path, "ab") as handle:
                handle.truncate(self._saved_bytes)
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            write_seq(self._sidecar, _FORMAT, self._saved_bytes + len(text), self._recorded)
        except OSError as exc:
            _log.warning("the entity graph was not saved (%s); the next open extracts it", exc)
            return
        self._saved_bytes += len(text)
        self._unsaved = []

    # ------------------------------------------------------------------ reads

    def graph(self) -> EntityGraph:
        with self._lock:
            if self._graph is None:
                self._graph = EntityGraph.build(self._rows[r] for r in sorted(self._rows))
            return self._graph

    def walk(
        self,
        question: str,
        *,
        seeds: Iterable[str] = (),
        k: int = 10,
        exclude: Collection[str] = (),
    ) -> WalkResult:
        return self.graph().walk(
            question_entities(question, self._limits),
            seeds,
            limits=self.config.walk_limits(),
            exclude=exclude,
            k=k,
        )


def _extraction(limits: EntityLimits) -> str:
    """What the recorded rows were made with: sift's version, the limits, and what the
    extraction finds in `_PROBE`."""
    probe = [graph_row("probe", title, text, limits) for title, text in _PROBE]
    made = json.dumps(
        [sift.__version__, dataclasses.asdict(limits), probe], ensure_ascii=False, sort_keys=True
    )
    return hashlib.sha256(made.encode()).hexdigest()[:16]
