"""grep's pre-filter: a bit-sliced trigram signature of every chunk, derived from SQLite.

Every chunk sets one of `BITS` bits for each trigram of its case-folded text (a hash of
three consecutive code points). A grep pattern's literal fragments, case-folded the same
way, name the bits every matching chunk must have set, and the chunks that have them all
are the candidates the regex then reads. A fragment inside a chunk puts its trigrams
inside it, so the filter never drops a matching chunk; a chunk that has the bits without
the fragment (hash collisions, trigrams scattered, the two that run into the next
chunk indexed with it) is read and rejected by the regex.

The bits are stored by slice: for every block of `BLOCK` consecutive chunk rowids, one
bitmap over the block's chunks per bit, so a query reads only the slices of its bits
(about 1 KB per bit per 8,192 chunks) instead of every signature. Adding a chunk costs
a few numpy passes over its text, and the index only ever grows: chunk rowids
are never reused, a deleted chunk's bits are left set (the regex reads SQLite, where it
is gone).

Full blocks are written to `trigrams.bin` at their place when the next one starts; the
open block, when the store closes, to `trigrams.open`, cut to the columns it uses (a
store of ten chunks writes 8 KB, not a 4 MB block). Each is fsynced before the sidecar
(`trigrams.json`) moves its watermark: every chunk rowid below it is in the files.
Opening reads the files up to the watermark and indexes the chunks from there on from
SQLite; re-adding a chunk only sets bits that may be set already. So a crash costs at
most the rebuild of what was added since the last block or close, never a missed chunk,
and saving at close is best effort (on a full disk the next open rebuilds instead). Only
the process holding the store's write lock writes the files (a reader that opens the
store while another process ingests keeps what it indexed in memory), and nothing past
the watermark is ever read, so what a dying writer left there is harmless.

Damage is found, not trusted: each full block's row sums go to `trigrams.sums` (fsynced
with the block), and a query checks the rows it reads against them; the open block's
file has its sum in the sidecar. A mismatch (a zeroed page made grep miss chunks without
a word) rebuilds the index from SQLite.
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sift.integrations.stores.sqlite._damage import index_damaged
from sift.integrations.stores.sqlite._sidecar import content_sum, read_record, read_seq, write_seq

__all__ = ["BITS", "BLOCK", "TrigramIndex", "trigram_bits"]

_log = logging.getLogger(__name__)

_FORMAT = 1  # bump when the hash, BITS or BLOCK change: forces a rebuild
BITS = 4096
BLOCK = 8192
_ROW_BYTES = BLOCK // 8
_BLOCK_BYTES = BITS * _ROW_BYTES
_SUMS_BYTES = BITS * 8  # a block's row sums in `trigrams.sums`
_SHIFT = np.uint32(32 - BITS.bit_length() + 1)  # the top log2(BITS) bits of the hash
_K = (np.uint32(0x9E3779B1), np.uint32(0x85EBCA77), np.uint32(0xC2B2AE3D))
_MIX = np.uint32(0x2C1B3C6D)
_LOAD_BATCH = 4096
_SCRATCH_COLUMNS = 1024
# Bits per query: beyond a few dozen, more bits barely narrow the candidates further.
_MAX_QUERY_BITS = 64
_PLANE = 0x10000  # the case-folding table covers the basic plane
_EXPANDS = np.uint32(0xFFFFFFFF)  # in the table: folds to several characters


def _codes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The case-folded texts' code points in one array, and each text's length."""
    # surrogatepass: a lone surrogate (text decoded with surrogateescape) is one code
    # point like any other rather than an error.
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if len(codes) == 0:
        return codes, lengths
    # str.casefold maps each character on its own (no context rules), so the code points
    # are folded by table, one gather, where casefolding every text cost a third of
    # indexing a chunk (measured). A text holding a character that folds to several (ß,
    # ﬁ), or one past the table's plane (clipped to its last entry), is casefolded itself.
    folded = np.take(_fold_table(), codes, mode="clip")
    odd = np.flatnonzero(folded == _EXPANDS)
    if len(odd) == 0:
        return folded, lengths
    edges = np.cumsum(lengths)
    redo = set(np.searchsorted(edges, odd, side="right").tolist())
    parts: list[np.ndarray] = []
    for row, (text, end) in enumerate(zip(texts, edges.tolist(), strict=True)):
        if row in redo:
            text = text.casefold()
            lengths[row] = len(text)
            parts.append(np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32))
        else:
            parts.append(folded[end - len(text) : end])
    return np.concatenate(parts), lengths


@functools.cache
def _fold_table() -> np.ndarray:
    """Each code point of the basic plane folded, `_EXPANDS` where it folds to several
    characters, and `_EXPANDS` in one more entry that stands for every code point past
    the plane (a few ms, once)."""
    table = np.full(_PLANE + 1, _EXPANDS, dtype=np.uint32)
    step = 256
    for first in range(0, _PLANE, step):
        block = np.arange(first, first + step, dtype=np.uint32).tobytes()
        chars = block.decode("utf-32-le", "surrogatepass")
        folded = chars.casefold()
        if len(folded) == step:  # no character of the block folds to several
            table[first : first + step] = np.frombuffer(
                folded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32
            )
        else:
            table[first : first + step] = [
                ord(f) if len(f) == 1 else _EXPANDS for f in map(str.casefold, chars)
            ]
    return table


def _hash(codes: np.ndarray) -> np.ndarray:
    """The bit of each trigram starting at codes[i], for i < len(codes) - 2."""
    h = codes[:-2] * _K[0]
    h += codes[1:-1] * _K[1]
    h += codes[2:] * _K[2]
    h ^= h >> np.uint32(15)
    h *= _MIX
    h >>= _SHIFT
    return h


def trigram_bits(fragments: Sequence[str]) -> np.ndarray:
    """The distinct bits the trigrams of `fragments` set (case-folded as the chunks are);
    empty when no fragment has three characters."""
    bits = [_hash(_codes([f])[0]) for f in fragments if len(f.casefold()) >= 3]
    if not bits:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.concatenate(bits)).astype(np.int64)[:_MAX_QUERY_BITS]


class TrigramIndex:
    """Trigram signatures of the chunks, by block of rowids.

    `writable` says whether this process may write the file (the store takes its write
    lock, or answers False when another process holds it). Writes come from the store's
    write path; `candidates` is safe from any thread.
    """

    def __init__(self, path: Path, writable: Callable[[], bool]) -> None:
        self._path = path
        self._sidecar = path.with_suffix(".json")
        self._open_path = path.with_suffix(".open")
        self._writable = writable
        self._lock = threading.Lock()
        self._sealed: np.ndarray = _no_blocks()  # blocks on disk, below the watermark
        self._memory: dict[int, np.ndarray] = {}  # later blocks, the last one open
        self._open_block = 0
        self.indexed = 0  # every chunk rowid below this is indexed
        self._mark = 0  # the sidecar's watermark: every chunk rowid below it is on disk
        self._dirty = False
        # Each file row's sum as written (`_row_sums`), in `trigrams.sums`, for the
        # first `_summed` blocks (a file written before sums were recorded has none).
        self._sums_path = path.with_suffix(".sums")
        self._sums: np.ndarray = _no_sums()
        self._summed = 0
        # Which of those rows a query found intact since the open (each is checked once).
        self._checked: np.ndarray = np.zeros((0, BITS), dtype=bool)

    # ------------------------------------------------------------------ open and close

    def load(self, conn: sqlite3.Connection, *, rebuild: bool = False) -> None:
        """Maps the file up to the sidecar's watermark, then indexes every chunk from the
        watermark on from SQLite. `rebuild`: the files are damaged (a block's sum did
        not match); every chunk is indexed again from SQLite."""
        record = None if rebuild else read_record(self._sidecar, _FORMAT)
        self._dirty = rebuild  # what is indexed again is saved at the close
        mark = (read_seq(self._sidecar, _FORMAT) or 0) if record is not None else 0
        full, partial = divmod(mark, BLOCK)
        size = self._path.stat().st_size if self._path.exists() else 0
        summed = (record or {}).get("summed", 0)
        summed = min(summed, full) if isinstance(summed, int) else 0
        sums_size = self._sums_path.stat().st_size if self._sums_path.exists() else 0
        if full * _BLOCK_BYTES > size or summed * _SUMS_BYTES > sums_size:
            mark, full, partial, summed = 0, 0, 0, 0  # a file lost what the sidecar counts
        memory = {full: _empty()}
        if partial:
            width = -(-partial // 8)
            try:
                data = self._open_path.read_bytes()
            except OSError:
                data = b""
            # A later save may have written more columns than the watermark counts:
            # the bits of chunks past it are harmless (they are indexed again).
            recorded = (record or {}).get("open")
            intact = recorded is None or content_sum(data) == recorded
            if not intact:
                self._dirty = True  # saved anew at the close, not found damaged again
                # Damaged, or saved by a process that died before its record was.
                _log.warning(
                    "grep's trigram file %s does not match its record: its chunks are "
                    "indexed again from SQLite",
                    self._open_path,
                )
            if intact and len(data) % BITS == 0 and len(data) // BITS >= width:
                saved = np.frombuffer(data, np.uint8).reshape(BITS, -1)
                memory[full][:, :width] = saved[:, :width]
            else:
                mark = full * BLOCK  # the open block is rebuilt from SQLite instead
        with self._lock:
            self._sealed, self._memory, self._open_block = self._map(full), memory, full
            self._sums, self._summed = self._map_sums(summed), summed
            self._checked = np.zeros((summed, BITS), dtype=bool)
        self.indexed = self._mark = mark
        cursor = conn.execute("SELECT id, text FROM chunks WHERE id >= ? ORDER BY id", (mark,))
        while rows := cursor.fetchmany(_LOAD_BATCH):
            rowids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
            self._index(rowids, [r[1] for r in rows])

    def _map(self, blocks: int) -> np.ndarray:
        if not blocks:
            return _no_blocks()
        return np.memmap(self._path, dtype=np.uint8, mode="r", shape=(blocks, BITS, _ROW_BYTES))

    def _map_sums(self, blocks: int) -> np.ndarray:
        if not blocks:
            return _no_sums()
        return np.memmap(self._sums_path, dtype=np.uint64, mode="r", shape=(blocks, BITS))

    def close(self) -> None:
        """Writes what this process indexed, so that the next open need not redo it; a
        failure to (a full disk) only means the next open indexes it again."""
        try:
            if self._dirty and self.indexed > self._mark and self._writable():
                self._flush(with_open=True)
        except OSError as exc:
            _log.warning("grep's trigram index was not saved (%s); the next open rebuilds it", exc)
        with self._lock:
            self._sealed, self._memory = _no_blocks(), {}

    # ------------------------------------------------------------------ writes

    def add(self, rowids: np.ndarray, texts: Sequence[str]) -> None:
        """Indexes chunks the store just committed; rowids ascending and at least
        `indexed`."""
        self._dirty = True
        self._index(rowids, texts)

    def _index(self, rowids: np.ndarray, texts: Sequence[str]) -> None:
        start = 0
        while start < len(rowids):
            block = int(rowids[start]) // BLOCK
            if block > self._open_block:
                with self._lock:
                    for later in range(self._open_block + 1, block + 1):
                        self._memory[later] = _empty()
                    self._open_block = block
            stop = int(np.searchsorted(rowids, (block + 1) * BLOCK))
            _set_bits(self._memory[block], rowids[start:stop] - block * BLOCK, texts[start:stop])
            start = stop
        if len(rowids):
            self.indexed = int(rowids[-1]) + 1
        if len(self._memory) > 1 and self._writable():
            self._flush(with_open=False)

    def _flush(self, *, with_open: bool) -> None:
        """Writes the full blocks held in memory (and the open one's columns, with
        `with_open`), then moves the watermark past them."""
        last = self._open_block
        blocks = sorted(b for b in self._memory if b < last)
        if blocks:
            self._path.touch()
            with open(self._path, "r+b") as handle:
                for block in blocks:
                    handle.seek(block * _BLOCK_BYTES)
                    handle.write(self._memory[block].tobytes())
                handle.flush()
                os.fsync(handle.fileno())
            self._write_sums(blocks)
        mark = last * BLOCK
        extra: dict[str, Any] = {"summed": self._summed}
        if with_open and self.indexed > mark:
            width = -(-(self.indexed - mark) // 8)
            tmp = self._open_path.with_suffix(".open.tmp")
            data = np.ascontiguousarray(self._memory[last][:, :width]).tobytes()
            with open(tmp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self._open_path)
            mark = self.indexed
            extra["open"] = content_sum(data)
        write_seq(self._sidecar, _FORMAT, mark, extra)
        self._mark = mark
        sealed, sums = self._map(last), self._map_sums(self._summed)
        checked = np.zeros((self._summed, BITS), dtype=bool)
        checked[: len(self._checked)] = self._checked[: self._summed]
        with self._lock:
            self._sealed, self._sums, self._checked = sealed, sums, checked
            self._memory = {b: a for b, a in self._memory.items() if b >= last}

    def _write_sums(self, blocks: list[int]) -> None:
        """Writes the row sums of the blocks just written, and of any block before them
        written by a sift that recorded none (read back from the file, once), then
        fsyncs: the sidecar, written next, counts them (`summed`)."""
        first = min(self._summed, blocks[0])
        self._sums_path.touch()
        with open(self._sums_path, "r+b") as handle:
            for block in range(first, blocks[-1] + 1):
                if block in self._memory:
                    rows = self._memory[block]
                else:  # sealed before sums were recorded
                    rows = np.asarray(self._map(block + 1)[block])
                handle.seek(block * _SUMS_BYTES)
                handle.write(_row_sums(rows).tobytes())
            handle.flush()
            os.fsync(handle.fileno())
        self._summed = blocks[-1] + 1

    # ------------------------------------------------------------------ reads

    def candidates(self, bits: np.ndarray, after: int = 0) -> Iterator[np.ndarray]:
        """Rowids (ascending, above `after`) of the chunks whose signature has every one
        of `bits` (at least one), a block at a time."""
        with self._lock:
            sealed, memory, last = self._sealed, dict(self._memory), self._open_block
            sums, checked = self._sums, self._checked
        for block in range(after // BLOCK, last + 1):
            slices = sealed[block] if block < len(sealed) else memory.get(block)
            if slices is None:
                continue
            rows = slices[bits]
            if block < len(sums):
                self._check_rows(block, bits, rows, sums[block], checked[block])
            hit = np.bitwise_and.reduce(rows, axis=0)
            rowids = np.flatnonzero(np.unpackbits(hit, bitorder="little")) + block * BLOCK
            rowids = rowids[rowids > after]
            if len(rowids):
                yield rowids

    def _check_rows(
        self,
        block: int,
        bits: np.ndarray,
        rows: np.ndarray,
        sums: np.ndarray,
        checked: np.ndarray,
    ) -> None:
        """Compares the rows a query read from the file with their sums as written, each
        row once a process (a query's first reads cost it 5 us a block, the next ones
        nothing). A zeroed page of the file made grep miss the chunks of its rows without
        a word: a mismatch has the store rebuild the index from SQLite (`_open.heal`)."""
        fresh = ~checked[bits]
        if not fresh.any():
            return
        if not np.array_equal(_row_sums(rows[fresh]), sums[bits[fresh]]):
            raise index_damaged(
                "trigrams", f"grep's trigram index at {self._path} is damaged (block {block})"
            )
        checked[bits[fresh]] = True


def _set_bits(block: np.ndarray, columns: np.ndarray, texts: Sequence[str]) -> None:
    """Sets, in one block's slices, the bit of every trigram of every text, in the
    text's column (columns ascending)."""
    start = 0
    while start < len(columns):
        # At most _SCRATCH_COLUMNS columns at a time: the scratch stays a few MB.
        stop = int(np.searchsorted(columns, columns[start] + _SCRATCH_COLUMNS))
        _set_span(block, columns[start:stop], texts[start:stop])
        start = stop


def _set_span(block: np.ndarray, columns: np.ndarray, texts: Sequence[str]) -> None:
    codes, lengths = _codes(texts)
    if len(codes) < 3:
        return
    # One flag per (bit, column) in a byte-aligned window of the block, then packed
    # into its bytes and OR-ed in: scattered single bytes into a small scratch cost a
    # third of a ufunc.at read-modify-write into the 4 MB block (measured).
    first = int(columns[0]) & ~7
    width = int(columns[-1]) - first + 1
    # A trigram is set in the column of its first character's text. The two that run
    # into the next text set a bit or two the text does not need: a false candidate the
    # regex rejects, never a missed one, and cheaper than masking them out (measured).
    where = _hash(codes).astype(np.intp)
    where *= width
    where += np.repeat(columns.astype(np.intp) - first, lengths)[:-2]
    scratch = np.zeros((BITS, width), dtype=bool)
    scratch.reshape(-1)[where] = True
    packed = np.packbits(scratch, axis=1, bitorder="little")
    block[:, first // 8 : first // 8 + packed.shape[1]] |= packed


def _empty() -> np.ndarray:
    return np.zeros((BITS, _ROW_BYTES), dtype=np.uint8)


def _no_blocks() -> np.ndarray:
    return np.zeros((0, BITS, _ROW_BYTES), dtype=np.uint8)


def _no_sums() -> np.ndarray:
    return np.zeros((0, BITS), dtype=np.uint64)


def _row_sums(rows: np.ndarray) -> np.ndarray:
    """The sum of each row's 8-byte words (mod 2**64): a query checks the rows it reads
    (64 of 1 KB a block, at most) against those recorded, so a check costs it nothing
    where checking whole blocks would read the whole file into memory first."""
    return np.ascontiguousarray(rows).view(np.uint64).sum(axis=-1, dtype=np.uint64)
