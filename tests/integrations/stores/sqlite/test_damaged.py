"""Damaged files are found and rebuilt, never a panic or a wrong answer (issue 42).

Fault injection on real stores, one English and one Japanese, each large enough to have
every kind of derived file (a sealed block of grep's trigram file among them: over 8,192
chunks): bytes are flipped or zeroed in one kind of file, and the store must then answer
every query exactly as the intact store does. Before, flipped bytes in tantivy's files
went unnoticed where tantivy did not trip over them (it writes a CRC-32 in each file's
footer and never checks it; the store now does, on open), or made BM25 queries panic
inside tantivy (pyo3's PanicException, a BaseException that got through every
`except Exception`), a flipped vector graph found the wrong neighbours and
a zeroed page of the trigram file made grep miss chunks, both without a word.

A zeroed page of `sift.db` itself cannot be rebuilt (it is the source of truth): the store
says it is damaged and what to do, on the API and the CLI, never a traceback.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from sift.errors import IndexDamagedError, StoreDamagedError
from sift.integrations.stores.sqlite import SqliteCorpus, _lexical
from sift.integrations.stores.sqlite._lexical import LexicalIndex
from sift.integrations.stores.sqlite._trigrams import BLOCK, trigram_bits
from sift.types import Document, Hit

from .conftest import zero_chunks_root

N = BLOCK + 108  # one sealed trigram block and an open one


@dataclass(frozen=True)
class Language:
    name: str
    documents: Callable[[], list[Document]]
    searches: tuple[str, ...]
    greps: tuple[str, ...]  # the first one's chunks lie in the sealed block


LANGUAGES = {
    "en": Language(
        "en",
        lambda: [
            Document(
                id=f"en-{i}",
                title=f"Beacon {i}",
                text=f"beacon{i} guides ships past reef {i % 97}.",
            )
            for i in range(N)
        ],
        ("beacon17", "beacon8250 reef", "ships past reef 42"),
        ("beacon17 guides", "beacon8250 guides"),
    ),
    "ja": Language(
        "ja",
        lambda: [
            Document(id=f"ja-{i}", title=f"灯台{i}", text=f"灯台{i}号は夜に船を導く塔です。")
            for i in range(N)
        ],
        ("灯台17号", "灯台8250号", "夜に船を導く塔"),
        ("灯台17号は", "灯台8250号は"),
    ),
}


def _ranked(hits: list[Hit]) -> list[tuple[float, frozenset[str]]]:
    """A ranking as (score, the chunk ids of that score), best first, where the chunks
    tied at the last score are left out: an index rebuilt from SQLite may order equal
    scores otherwise (the vector graph inserts in another order), and the fifth place
    may then go to another of the tied chunks."""
    groups: dict[float, set[str]] = {}
    for hit in hits:
        groups.setdefault(round(hit.score, 4), set()).add(hit.chunk.chunk_id)
    scores = sorted(groups, reverse=True)
    return [(s, frozenset(groups[s] if s != scores[-1] else ())) for s in scores]


def _answers(store: SqliteCorpus, language: Language) -> dict[str, Any]:
    """Every query's answers: BM25, dense and hybrid searches, and greps (the chunks in
    corpus order)."""
    out: dict[str, Any] = {}
    for query in language.searches:
        for mode in ("bm25", "dense", "hybrid"):
            out[f"{mode}:{query}"] = _ranked(store.search(query, k=5, mode=mode))  # type: ignore[arg-type]
    for pattern in language.greps:
        out[f"grep:{pattern}"] = [h.chunk.chunk_id for h in store.grep(pattern, k=5).hits]
    return out


@dataclass(frozen=True)
class Built:
    path: Path
    language: Language
    answers: dict[str, Any]


@pytest.fixture(scope="module", params=sorted(LANGUAGES))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    language = LANGUAGES[request.param]
    path = tmp_path_factory.mktemp(f"damaged-{language.name}") / "store"
    with SqliteCorpus(path, embedder="hash", vector_index="ann") as store:
        store.upsert(language.documents())
    for name in ("trigrams.bin", "trigrams.sums", "vectors.usearch", "lexical/meta.json"):
        assert (path / name).is_file(), name
    with SqliteCorpus(path, writer=False) as store:
        answers = _answers(store, language)
    # The queries find what they look for: a damaged index could not pass unseen.
    assert answers["grep:" + language.greps[0]] and answers["grep:" + language.greps[1]]
    assert all(answers[f"bm25:{q}"] for q in language.searches)
    return Built(path, language, answers)


def _copy(built: Built, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(built.path, copy)
    return copy


def _flip(path: Path, at: float, width: int) -> None:
    data = bytearray(path.read_bytes())
    start = min(int(len(data) * at), max(0, len(data) - width))
    for i in range(start, min(len(data), start + width)):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def _zero(path: Path, start: int, length: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(start)
        handle.write(bytes(length))


def _segment_file(store: Path, suffix: str) -> Path:
    (found,) = [p for p in (store / "lexical").iterdir() if p.suffix == suffix]
    return found


def _tantivy_fails(lexical: Path, built: Built, *, at_query: bool) -> bool:
    """Whether tantivy itself (no store around it, and not the footers' checksums the
    index compares on open) fails on the damaged index in folder `lexical`: at a query
    (`at_query`), or at the open too."""
    with SqliteCorpus(built.path, writer=False) as intact:
        analyzer = intact.analyzer
    try:
        with mock.patch.object(_lexical, "footer_mismatch", return_value=None):
            index = LexicalIndex(lexical, analyzer, writable=False)
    except IndexDamagedError:
        return not at_query
    try:
        for query in built.language.searches:
            index.search(query, 10)
    except IndexDamagedError:
        return True
    finally:
        index.close()
    return False


def _damage_tantivy(built: Built, tmp_path: Path, suffix: str, *, at_query: bool) -> Path | None:
    """A copy of the store whose tantivy file `suffix` has bytes flipped where tantivy
    notices (most flips of its files go unnoticed by it); None when no such place was
    found on the grid tried (on a copy of the BM25 index alone, then on the store's)."""
    for width in (16, 256, 4096):
        for twentieth in range(1, 20):
            # A folder of its own each time: tantivy's threads may still touch the last.
            probe = tmp_path / f"probe-{width}-{twentieth}" / "lexical"
            shutil.copytree(built.path / "lexical", probe)
            shutil.copy(built.path / "lexical.json", probe.with_suffix(".json"))
            _flip(_segment_file(probe.parent, suffix), twentieth / 20, width)
            if _tantivy_fails(probe, built, at_query=at_query):
                copy = _copy(built, tmp_path)
                _flip(_segment_file(copy, suffix), twentieth / 20, width)
                return copy
    return None


def _check_answers(copy: Path, built: Built, caplog: pytest.LogCaptureFixture) -> list[str]:
    """Opens the damaged copy, asks everything, compares with the intact store; then
    opens it again: what the first open rebuilt is on disk, nothing is damaged any
    more. The warnings of the first open."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sift"):
        with SqliteCorpus(copy) as store:
            assert _answers(store, built.language) == built.answers
        first = [r.getMessage() for r in caplog.records]
        caplog.clear()
        with SqliteCorpus(copy) as store:
            assert _answers(store, built.language) == built.answers
        again = [r.getMessage() for r in caplog.records]
    assert not [m for m in again if "damaged" in m or "does not match" in m], again
    return first


@pytest.mark.parametrize("suffix", [".term", ".idx"])
def test_a_tantivy_file_that_makes_queries_fail_is_rebuilt(
    suffix: str, built: Built, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy = _damage_tantivy(built, tmp_path, suffix, at_query=True)
    assert copy is not None, f"no flip of {suffix} made tantivy fail at a query"
    warnings = _check_answers(copy, built, caplog)
    assert any("BM25 index" in m and "damaged" in m and "rebuilding" in m for m in warnings)


@pytest.mark.parametrize("suffix", [".fast", ".fieldnorm", ".pos", ".store"])
def test_a_tantivy_file_that_tantivy_refuses_is_rebuilt(
    suffix: str, built: Built, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy = _damage_tantivy(built, tmp_path, suffix, at_query=False)
    if copy is None:
        pytest.skip(f"no flip of {suffix} on the grid tried makes tantivy fail")
    _check_answers(copy, built, caplog)


def _silent_flip(built: Built, tmp_path: Path, suffix: str) -> Path | None:
    """A copy of the store whose tantivy file `suffix` has bytes flipped where tantivy
    itself notices nothing, at the open or at a query; None when none was found."""
    for twentieth in range(1, 20):
        probe = tmp_path / f"silent-{twentieth}" / "lexical"
        shutil.copytree(built.path / "lexical", probe)
        shutil.copy(built.path / "lexical.json", probe.with_suffix(".json"))
        _flip(_segment_file(probe.parent, suffix), twentieth / 20, 16)
        if not _tantivy_fails(probe, built, at_query=True) and not _tantivy_fails(
            probe, built, at_query=False
        ):
            copy = _copy(built, tmp_path)
            _flip(_segment_file(copy, suffix), twentieth / 20, 16)
            return copy
    return None


@pytest.mark.parametrize("suffix", [".term", ".idx", ".fast", ".fieldnorm", ".pos", ".store"])
def test_a_tantivy_file_damaged_where_tantivy_notices_nothing_is_rebuilt(
    suffix: str, built: Built, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """tantivy writes a CRC-32 in every file's footer and never reads it: flipped bytes it
    does not trip over went unnoticed (issue 42). The store compares them on open."""
    copy = _silent_flip(built, tmp_path, suffix)
    if copy is None:
        pytest.skip(f"every flip of {suffix} tried makes tantivy itself fail")
    name = _segment_file(copy, suffix).name
    assert _lexical.footer_mismatch(copy / "lexical") == (
        f"{name}: its bytes do not match its checksum"
    )
    warnings = _check_answers(copy, built, caplog)
    assert any(
        "BM25 index" in m and name in m and "rebuilding it from SQLite" in m for m in warnings
    ), warnings


def test_the_footer_check_passes_an_intact_index_and_reads_no_stale_tombstone(
    built: Built, tmp_path: Path
) -> None:
    copy = _copy(built, tmp_path)
    assert _lexical.footer_mismatch(copy / "lexical") is None
    # A tombstone file of an older commit, left for tantivy's cleanup, is not live.
    (segment,) = {p.name.split(".")[0] for p in (copy / "lexical").glob("*.idx")}
    (copy / "lexical" / f"{segment}.1.del").write_bytes(b"not a tantivy file")
    assert _lexical.footer_mismatch(copy / "lexical") is None
    (copy / "lexical" / "meta.json").write_text("{", encoding="utf-8")
    assert _lexical.footer_mismatch(copy / "lexical") == "meta.json: unreadable (JSONDecodeError)"


def test_the_footer_check_reads_a_verified_file_again_only_once_it_changed(
    built: Built, tmp_path: Path
) -> None:
    # A search process opens its reader again after every write of the service: the
    # segment files it has verified, unchanged since, are not read again.
    copy = _copy(built, tmp_path)
    lexical = copy / "lexical"
    with mock.patch.object(_lexical, "_file_mismatch", wraps=_lexical._file_mismatch) as read:
        assert _lexical.footer_mismatch(lexical) is None
        files = read.call_count
        assert files > 0
        assert _lexical.footer_mismatch(lexical) is None
        assert read.call_count == files
        damaged = _segment_file(copy, ".term")
        _flip(damaged, 0.5, 16)
        assert _lexical.footer_mismatch(lexical) == (
            f"{damaged.name}: its bytes do not match its checksum"
        )
        assert read.call_count == files + 1


def test_a_reader_rebuilds_a_damaged_bm25_index_in_memory(built: Built, tmp_path: Path) -> None:
    """A process that may not write the store (writer=False) answers from an index it
    rebuilds in memory, and leaves the files to the writer."""
    copy = _damage_tantivy(built, tmp_path, ".term", at_query=True)
    assert copy is not None
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    with SqliteCorpus(copy, writer=False) as store:
        assert _answers(store, built.language) == built.answers
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before


def _grep_row_page(built: Built) -> int:
    """The offset of the 4 KB page of the trigram file that holds a row the first grep
    pattern reads (rows are 1 KB, one per bit, in block 0)."""
    bits = trigram_bits([built.language.greps[0]])
    return int(bits[0]) * 1024 // 4096 * 4096


DAMAGE: dict[str, Callable[[Path, Built], Any]] = {
    "vector graph flipped": lambda p, b: _flip(p / "vectors.usearch", 0.5, 4096),
    "vector graph zeroed": lambda p, b: _zero(p / "vectors.usearch", 8192, 65536),
    "vector graph record": lambda p, b: (p / "vectors.json").write_text("{"),
    "trigram page zeroed": lambda p, b: _zero(p / "trigrams.bin", _grep_row_page(b), 4096),
    "trigram sums flipped": lambda p, b: _flip(p / "trigrams.sums", 0.5, 4096),
    "trigram open block": lambda p, b: _flip(p / "trigrams.open", 0.5, 4096),
    "trigram record": lambda p, b: (p / "trigrams.json").write_bytes(bytes(40)),
    "bm25 meta": lambda p, b: _flip(p / "lexical" / "meta.json", 0.5, 64),
    "bm25 record": lambda p, b: (p / "lexical.json").write_text("[]"),
}
# Those the store finds by a checksum or an engine failure, and says so.
SAID = {
    "vector graph flipped",
    "vector graph zeroed",
    "trigram page zeroed",
    "trigram sums flipped",
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_derived_file_is_rebuilt(
    damage: str, built: Built, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy = _copy(built, tmp_path)
    DAMAGE[damage](copy, built)
    warnings = _check_answers(copy, built, caplog)
    if damage in SAID:
        assert any("damaged" in m for m in warnings), warnings


def test_grep_on_a_zeroed_trigram_page_used_to_miss_chunks(built: Built, tmp_path: Path) -> None:
    """The damage above is real: read past its check, the zeroed rows drop the chunks
    the first pattern matches from grep's candidates."""
    copy = _copy(built, tmp_path)
    DAMAGE["trigram page zeroed"](copy, built)
    (copy / "trigrams.sums").unlink()  # as a sift before issue 42 left it: no sums
    record = (copy / "trigrams.json").read_text().replace('"summed": 1', '"summed": 0')
    (copy / "trigrams.json").write_text(record)
    with SqliteCorpus(copy, writer=False) as store:
        assert store.grep(built.language.greps[0], k=5).hits == []


# --------------------------------------------------------------------------- sift.db


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from sift.integrations.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_zeroed_database_page_is_called_damaged(built: Built, tmp_path: Path) -> None:
    copy = _copy(built, tmp_path)
    zero_chunks_root(copy)
    with pytest.raises(StoreDamagedError) as info, SqliteCorpus(copy) as store:
        _answers(store, built.language)
    message = str(info.value)
    assert "damaged" in message and "restore it from a backup" in message
    query = built.language.searches[0]
    for args in (
        ("stats", "--store", str(copy)),
        ("search", "--store", str(copy), "-q", query, "--json"),
        ("grep", "--store", str(copy), built.language.greps[0]),
    ):
        done = _cli(*args)
        assert done.returncode != 0, done.stdout
        assert "Traceback" not in done.stderr, done.stderr
        assert "damaged" in done.stderr and "restore it from a backup" in done.stderr


def test_a_zeroed_first_page_is_damaged_not_another_file(built: Built, tmp_path: Path) -> None:
    copy = _copy(built, tmp_path)
    _zero(copy / "sift.db", 0, 4096)
    done = _cli("stats", "--store", str(copy))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert "damaged" in done.stderr and "not a sift store" not in done.stderr
