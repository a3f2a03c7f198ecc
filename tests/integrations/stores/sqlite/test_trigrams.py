"""grep's trigram signatures (the embedded store's pre-filter): never missing a chunk that
holds a fragment, selective, and durable across blocks, closes, crashes and readers."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from sift.integrations.stores.sqlite import SqliteCorpus
from sift.integrations.stores.sqlite._schema import SCHEMA_VERSION
from sift.integrations.stores.sqlite._trigrams import BLOCK, TrigramIndex, _codes, trigram_bits
from sift.types import Document

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


def test_every_chunk_holding_a_fragment_is_a_candidate(
    tmp_path: Path, always: Callable[[], bool]
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
        assert store.stats().schema_version == SCHEMA_VERSION
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


# Texts that are easy to get wrong: one-, two- and four-byte strings, case folding that
# changes the length (ß -> ss, İ -> i̇), a lone surrogate (text decoded with
# surrogateescape), texts shorter than a trigram, and the highest code points, whose
# products wrap in uint32.
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


def test_every_trigram_of_odd_text_is_found(tmp_path: Path, always: Callable[[], bool]) -> None:
    rows = list(enumerate(NASTY, start=1))
    index = _added(tmp_path, always, rows)
    for rowid, text in rows:
        folded = text.casefold()
        for at in range(len(folded) - 2):
            assert rowid in _found(index, folded[at : at + 3]), (text, at)


@pytest.mark.parametrize(
    "texts",
    [
        ["River BANK", "Kelvin", "東京タワーＡＢＣ", "Σίσυφος ΟΔΟΣ", "", "ＳＩＦＴ ｓｉｆｔ"],
        ["straße STRASSE", "plain"],  # ß folds to two characters
        ["ﬁnance", "İstanbul"],  # so do ﬁ and İ
        ["𠮷野家 ABC", "x"],  # past the basic plane
        ["bad \udcff byte \ud800 here", "tab\tnew\nline\x00nul\x7f"],
        [],
    ],
)
def test_code_points_are_the_casefolded_texts(texts: list[str]) -> None:
    # The table that folds a batch's code points must agree with str.casefold, on the
    # table's path and on the fallbacks.
    folded = [t.casefold() for t in texts]
    codes, lengths = _codes(texts)
    assert lengths.tolist() == [len(f) for f in folded]
    assert "".join(map(chr, codes.tolist())) == "".join(folded)
