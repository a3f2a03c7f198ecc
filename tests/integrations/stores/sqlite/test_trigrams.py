"""grep's trigram signatures (the embedded store's pre-filter): never missing a chunk that
holds a fragment, selective, and durable across blocks, closes, crashes and readers."""

from __future__ import annotations

import itertools
import json
import os
import random
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from sift.integrations.stores.sqlite import SqliteCorpus, _trigrams
from sift.integrations.stores.sqlite._trigrams import BITS, BLOCK, TrigramIndex, trigram_bits
from sift.types import Document

# Samples of the dev sets (tests/data/benchmarks/README.md).
SAMPLES = Path(__file__).resolve().parents[3] / "data" / "benchmarks"
WORDS = [
    *["river", "bank", "tower", "museum", "Kelvin", "STRASSE", "straße", "Σίσυφος", "ΟΔΟΣ"],
    *["東京", "大阪", "京都", "の", "は", "年", "月", "日", "カタカナ", "𠮷野家"],
]


def _texts(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30))) for _ in range(n)]


def _chunks(path: Path, rows: list[tuple[int, str]]) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY, text TEXT)")
    conn.executemany("INSERT INTO chunks (id, text) VALUES (?, ?)", rows)
    return conn


def _found(index: TrigramIndex, fragment: str) -> set[int]:
    return {int(r) for block in index.candidates(trigram_bits([fragment])) for r in block}


def _holding(rows: list[tuple[int, str]], fragment: str) -> set[int]:
    folded = fragment.casefold()
    return {rowid for rowid, text in rows if folded in text.casefold()}


def _every_trigram(rows: list[tuple[int, str]], fragment: str) -> set[int]:
    def grams(text: str) -> set[str]:
        folded = text.casefold()
        return {folded[i : i + 3] for i in range(len(folded) - 2)}

    need = grams(fragment)
    return {rowid for rowid, text in rows if need <= grams(text)}


def _rows(n: int) -> list[tuple[int, str]]:
    # Rowids with gaps that cross several block boundaries (and skip a whole block).
    rng = random.Random(9)
    ids = sorted([*rng.sample(range(1, 3 * BLOCK), n), 3 * BLOCK + 5, 4 * BLOCK + 1])
    return list(zip(ids, _texts(len(ids)), strict=True))


def _added(tmp_path: Path, always: Callable[[], bool], rows: list[tuple[int, str]]) -> TrigramIndex:
    """A new index at tmp_path/t.bin, the rows added as an ingest adds them."""
    index = TrigramIndex(tmp_path / "t.bin", always)
    index.load(_chunks(tmp_path / "empty.db", []))
    index.add(np.array([r for r, _ in rows]), [t for _, t in rows])
    return index


@pytest.fixture
def always() -> Callable[[], bool]:
    return lambda: True


# Without the C part (no compiler at install) its tests skip, saying so; CI sets
# SIFT_REQUIRE_NATIVE=1, and there they fail instead.
native_only = pytest.mark.skipif(
    _trigrams._signatures is None and os.environ.get("SIFT_REQUIRE_NATIVE") != "1",
    reason="sift was installed without its C part (no C compiler): the numpy path is tested",
)


@pytest.fixture(params=["c", "numpy"])
def setter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test with the bits set by the C part, then by numpy."""
    if request.param == "numpy":
        monkeypatch.setattr(_trigrams, "_signatures", None)
    elif _trigrams._signatures is None and os.environ.get("SIFT_REQUIRE_NATIVE") != "1":
        pytest.skip("sift was installed without its C part: the numpy path is tested")
    return str(request.param)


def test_every_chunk_holding_a_fragment_is_a_candidate(
    tmp_path: Path, always: Callable[[], bool], setter: str
) -> None:
    rows = _rows(600)
    index = TrigramIndex(tmp_path / "t.bin", always)
    index.load(_chunks(tmp_path / "c.db", []))
    for start in range(0, len(rows), 97):
        part = rows[start : start + 97]
        index.add(np.array([r for r, _ in part]), [t for _, t in part])
    for fragment in ("river bank", "tower", "KELVIN", "strasse", "ΣΊΣΥΦΟΣ", "東京 大阪", "𠮷野家"):
        want = _holding(rows, fragment)
        got = _found(index, fragment)
        assert want <= got, fragment
        # Selective: beyond the chunks holding every trigram of the fragment (in any
        # order), only a hash collision adds one, rarely.
        assert len(got - _every_trigram(rows, fragment)) <= 2, fragment
    # Candidates come in ascending rowid order, and `after` skips what was read.
    blocks = list(index.candidates(trigram_bits(["river"]), after=BLOCK + 3))
    flat = np.concatenate(blocks)
    assert (np.diff(flat) > 0).all() and flat[0] > BLOCK + 3


def test_fragments_shorter_than_a_trigram_give_no_bits() -> None:
    assert len(trigram_bits(["ab", "東京"])) == 0
    assert len(trigram_bits(["abc"])) == 1
    # Case-folded as the chunks are: the same bits whatever the case.
    assert trigram_bits(["RIVER"]).tolist() == trigram_bits(["river"]).tolist()
    assert trigram_bits(["STRASSE"]).tolist() == trigram_bits(["straße"]).tolist()


def test_reopened_from_its_file_and_rebuilt_when_the_file_is_lost(
    tmp_path: Path, always: Callable[[], bool]
) -> None:
    rows = _rows(300)
    conn = _chunks(tmp_path / "c.db", rows)
    first = _added(tmp_path, always, rows)
    want = {f: _found(first, f) for f in ("river", "東京", "museum tower")}
    first.close()
    assert (tmp_path / "t.json").exists()
    # Reopened over an empty chunk table: everything comes from the file.
    again = TrigramIndex(tmp_path / "t.bin", always)
    again.load(_chunks(tmp_path / "empty.db", []))
    assert again.indexed == rows[-1][0] + 1
    assert {f: _found(again, f) for f in want} == want
    # Garbage past the watermark is never read; a lost file or sidecar means a rebuild.
    with open(tmp_path / "t.bin", "ab") as handle:
        handle.write(b"\xff" * 4096)
    for damage in (
        lambda: None,
        lambda: (tmp_path / "t.json").unlink(),
        lambda: (tmp_path / "t.bin").write_bytes(b""),
    ):
        damage()
        rebuilt = TrigramIndex(tmp_path / "t.bin", always)
        rebuilt.load(conn)
        assert {f: _found(rebuilt, f) for f in want} == want
        rebuilt.close()


def test_a_reader_never_writes_the_file(tmp_path: Path, always: Callable[[], bool]) -> None:
    rows = _rows(200)
    conn = _chunks(tmp_path / "c.db", rows)
    reader = TrigramIndex(tmp_path / "t.bin", lambda: False)
    reader.load(conn)  # spans several blocks, all kept in memory
    reader.add(np.array([9 * BLOCK]), ["late river"])
    reader.close()
    assert not (tmp_path / "t.bin").exists() and not (tmp_path / "t.json").exists()
    writer = TrigramIndex(tmp_path / "t.bin", always)
    writer.load(conn)
    assert _found(writer, "river") >= _holding(rows, "river")


def _store_docs(n: int, start: int = 0) -> list[Document]:
    return [
        Document(id=f"g{i}", title=f"T{i}", text=f"Needle{i}x sits in 東京 haystack {i % 7}.")
        for i in range(start, start + n)
    ]


def test_store_grep_finds_chunks_across_reopen_and_deletes(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(_store_docs(40))
        store.delete(["g3"])
        assert [h.chunk.doc_id for h in store.grep(r"Needle3\dx", k=20).hits] == [
            f"g{i}" for i in range(30, 40)
        ]
    with SqliteCorpus(path) as store:
        store.upsert(_store_docs(5, start=40))
        hits = store.grep(r"needle4\d*x", k=50).hits
        assert not hits  # case-sensitive pattern: "Needle" does not match
        hits = store.grep(r"(?i)needle4\d*x", k=50).hits
        assert [h.chunk.doc_id for h in hits] == ["g4", *(f"g{i}" for i in range(40, 45))]
        assert len(store.grep("東京 haystack 6", k=50).hits) == 6


def test_a_version_1_store_is_migrated_and_greps(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(_store_docs(12))
    # What sift wrote before signatures: schema version 1 with an FTS5 trigram table.
    conn = sqlite3.connect(path / "sift.db")
    conn.execute(
        "CREATE VIRTUAL TABLE grep USING fts5(text, content='chunks', content_rowid='id', "
        "tokenize='trigram')"
    )
    conn.execute("INSERT INTO grep (grep) VALUES ('rebuild')")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    for name in ("trigrams.bin", "trigrams.open", "trigrams.json"):
        (path / name).unlink(missing_ok=True)
    with SqliteCorpus(path) as store:
        assert store.stats().schema_version == 2
        assert [h.chunk.doc_id for h in store.grep("Needle1[01]x").hits] == ["g10", "g11"]
    conn = sqlite3.connect(path / "sift.db")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "grep" not in tables


def test_a_small_store_saves_only_the_columns_it_uses(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(_store_docs(10))
    assert not (path / "trigrams.bin").exists()
    assert (path / "trigrams.open").stat().st_size <= 4096 * 2  # 11 columns: 2 bytes a bit
    # A cut-short file is not trusted: the open block is indexed again from SQLite.
    (path / "trigrams.open").write_bytes(b"\x00" * 100)
    with SqliteCorpus(path) as store:
        assert [h.chunk.doc_id for h in store.grep("Needle7x").hits] == ["g7"]


def test_saving_at_close_is_best_effort(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "s"
    store = SqliteCorpus(path, embedder="hash")
    store.upsert(_store_docs(10))
    (path / "trigrams.open.tmp").mkdir()  # the save cannot write its temporary file
    store.close()  # no error: the index is derived, and rebuilt on open
    assert "trigram index was not saved" in caplog.text
    (path / "trigrams.open.tmp").rmdir()
    with SqliteCorpus(path) as again:
        assert [h.chunk.doc_id for h in again.grep("Needle[89]x").hits] == ["g8", "g9"]


# ---------------------------------------------------------------- the C part (_signatures.c)

# Every kind of text the C part reads differently from numpy's UTF-32 array: one-, two-
# and four-byte strings, case folding that changes the length (ß -> ss, İ -> i̇), a lone
# surrogate (text decoded with surrogateescape), texts shorter than a trigram, and the
# highest code points, whose products wrap in uint32.
NASTY = [
    "",
    "a",
    "ab",
    "abc",
    "Straße STRASSE İstanbul ǅemal",
    "東京都の𠮷野家は 1999 年に",
    "bad \udcff byte \ud800 here",
    "\U0010ffff\U0010fffe\U0010fffd end",
    "tab\tnew\nline\x00nul\x7f",
    "Σίσυφος ΟΔΟΣ ﬁnance ﬀ",
]


def _both(columns: list[int], texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One block's bits for `texts`, set by the C part and by numpy."""
    by_c, by_numpy = np.zeros((BITS, BLOCK // 8), np.uint8), np.zeros((BITS, BLOCK // 8), np.uint8)
    assert _trigrams._signatures is not None, "the C part was not built"
    folded = [t.casefold() for t in texts]
    _trigrams._signatures.set_bits(by_c, int(_trigrams._SHIFT), columns, folded)
    _trigrams._set_span(by_numpy, np.array(columns, dtype=np.int64), texts)
    return by_c, by_numpy


@native_only
def test_the_c_part_sets_the_same_bits_as_numpy() -> None:
    rng = random.Random(3)
    texts = NASTY + _texts(400, seed=11)
    alphabet = "aé東𠮷\udcffZ "
    texts += ["".join(rng.choices(alphabet, k=rng.randint(0, 60))) for _ in range(300)]
    columns = sorted(rng.sample(range(BLOCK), len(texts)))
    columns[0], columns[-1] = 0, BLOCK - 1  # both edges of the block
    by_c, by_numpy = _both(columns, texts)
    assert by_c.any()
    assert np.array_equal(by_c, by_numpy)
    # Bits are ORed in: a second text in a column already set adds to it.
    again_c, again_numpy = _both([5, 5 + 8], ["river bank", "tower museum"])
    assert np.array_equal(again_c, again_numpy)


@native_only
def test_the_c_part_reads_real_passages_as_numpy_does() -> None:
    corpus = SAMPLES / "jsquad" / "corpus.jsonl"
    english = SAMPLES / "hotpotqa" / "corpus.jsonl"
    texts = []
    for path in (corpus, english):
        with open(path, encoding="utf-8") as lines:
            texts += [json.loads(line)["text"] for line in itertools.islice(lines, 500)]
    columns = list(range(0, 2 * len(texts), 2))
    by_c, by_numpy = _both(columns, texts)
    assert np.array_equal(by_c, by_numpy)


@native_only
def test_the_c_part_refuses_bad_arguments_and_leaves_the_block_as_it_was() -> None:
    signatures = _trigrams._signatures
    assert signatures is not None
    shift = int(_trigrams._SHIFT)
    block = np.zeros((BITS, BLOCK // 8), np.uint8)
    signatures.set_bits(block, shift, [3], ["river"])
    before = block.copy()
    with pytest.raises(ValueError, match="columns\\[1\\] is 8192, outside the block's 0 to 8191"):
        signatures.set_bits(block, shift, [0, BLOCK], ["tower", "museum"])
    with pytest.raises(ValueError, match="columns\\[0\\] is -1"):
        signatures.set_bits(block, shift, [-1], ["tower"])
    with pytest.raises(TypeError, match="texts\\[1\\] is bytes, not str"):
        signatures.set_bits(block, shift, [0, 1], ["tower", b"museum"])
    with pytest.raises(ValueError, match="2 columns for 1 texts"):
        signatures.set_bits(block, shift, [0, 1], ["tower"])
    with pytest.raises(TypeError, match="must be lists"):
        signatures.set_bits(block, shift, (0,), ["tower"])
    with pytest.raises(ValueError, match="shift must be 17 to 31"):
        signatures.set_bits(block, 5, [0], ["tower"])
    with pytest.raises(ValueError, match="not a multiple of 4096 rows"):
        signatures.set_bits(np.zeros(100, np.uint8), shift, [0], ["tower"])
    frozen = block.copy()
    frozen.flags.writeable = False
    with pytest.raises((BufferError, ValueError)):
        signatures.set_bits(frozen, shift, [0], ["tower"])
    # Every check runs before the first bit is set: a refused call changed nothing, and
    # let go of the texts it held (refused after the first, or run to the end).
    assert np.array_equal(block, before)
    text = "".join(["mus", "eum tower"])  # a string of its own, not an interned one
    held = sys.getrefcount(text)
    with pytest.raises(ValueError, match="columns\\[1\\]"):
        signatures.set_bits(block.copy(), shift, [0, BLOCK], [text, text])
    signatures.set_bits(block.copy(), shift, [0, 1], [text, text])
    assert sys.getrefcount(text) == held
    signatures.set_bits(block, shift, [4], ["river"])  # and the block still takes bits
    assert not np.array_equal(block, before)


@native_only
def test_a_file_written_by_the_c_part_is_read_by_the_numpy_path(
    tmp_path: Path, always: Callable[[], bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    # An install without a compiler opens a store an install with one wrote: the same
    # bits, so the same candidates, and nothing to rebuild.
    rows = _rows(300)
    conn = _chunks(tmp_path / "c.db", rows)
    _added(tmp_path, always, rows).close()
    monkeypatch.setattr(_trigrams, "_signatures", None)
    rebuilt = TrigramIndex(tmp_path / "numpy.bin", always)
    rebuilt.load(conn)
    read = TrigramIndex(tmp_path / "t.bin", always)
    read.load(_chunks(tmp_path / "empty2.db", []))
    for fragment in ("river bank", "東京", "ΣΊΣΥΦΟΣ", "𠮷野家"):
        assert _found(read, fragment) == _found(rebuilt, fragment), fragment
