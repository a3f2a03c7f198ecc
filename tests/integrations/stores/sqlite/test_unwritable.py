"""Stores that cannot be written (issue 31): on a read-only mount, after a full disk, and
damaged. Each opens for reading where it can, and every failure says what it is and what
to do; never a traceback. The read-only mount and the full disk are real: a tmpfs in a
private mount namespace (`unshare -rm`), remounted read-only; root passes the checks
that `chmod -w` would add, not a read-only mount."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

from sift.errors import CorpusError, NotAStoreError
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

DOCS = [
    Document(id="lighthouse", title="Lighthouse", text="A lighthouse guides ships at night."),
    Document(id="灯台", title="灯台", text="灯台は夜に船を導く塔です。"),
]

_BUILD = textwrap.dedent(
    """
    import sys
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document
    with SqliteCorpus(sys.argv[1], embedder="hash") as store:
        store.upsert([
            Document(id="lighthouse", title="Lighthouse", text="A lighthouse guides ships."),
            Document(id="灯台", title="灯台", text="灯台は夜に船を導く塔です。"),
        ])
    """
)

_READ = textwrap.dedent(
    """
    import json, sys
    from sift.errors import CorpusError
    from sift.integrations.stores import open_store
    store = open_store(sys.argv[1])
    out = {
        "documents": store.stats().documents,
        "bm25": [h.chunk.doc_id for h in store.search("lighthouse", k=1, mode="bm25")],
        "hybrid_ja": [h.chunk.doc_id for h in store.search("灯台", k=1)],
        "grep": [h.chunk.doc_id for h in store.grep("船を", k=1).hits],
    }
    try:
        store.upsert([{"id": "new", "text": "more text"}])
        out["write"] = "accepted"
    except CorpusError as exc:
        out["write"] = str(exc)
    store.close()
    print(json.dumps(out, ensure_ascii=False))
    """
)


def test_a_store_on_a_read_only_mount_is_searched(
    small_disk: Path, tmp_path: Path, in_mount_namespace
) -> None:
    build, read = tmp_path / "build.py", tmp_path / "read.py"
    build.write_text(_BUILD, encoding="utf-8")
    read.write_text(_READ, encoding="utf-8")
    store = small_disk / "store"
    cli = f"{sys.executable} -c 'from sift.integrations.cli import main; main()'"
    done = in_mount_namespace(
        f"mount -t tmpfs -o size=32m tmpfs {small_disk} && {sys.executable} {build} {store} && "
        f"mount -o remount,ro {small_disk} && {sys.executable} {read} {store} && "
        f"{cli} stats --store {store} --json && {cli} grep --store {store} 'lighthouse'"
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.strip().splitlines()
    report = json.loads(lines[0])
    assert report["documents"] == 2
    assert report["bm25"] == ["lighthouse"] and report["hybrid_ja"] == ["灯台"]
    assert report["grep"] == ["灯台"]
    assert "read-only" in report["write"] and "copy it somewhere writable" in report["write"]
    assert json.loads(lines[1])["documents"] == 2


def test_after_a_full_disk_stats_search_and_grep_answer(
    small_disk: Path, tmp_path: Path, in_mount_namespace
) -> None:
    """An ingest filled the disk; the BM25 index is behind SQLite and cannot be written:
    reading the store answers (BM25 as of its last commit), and says why on stderr."""
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as out:
        for i in range(3000):
            words = " ".join(f"w{i}x{j}" for j in range(60))
            out.write(json.dumps({"id": f"doc-{i:04d}", "text": f"page {i}: {words}"}) + "\n")
    store = small_disk / "store"
    cli = f"{sys.executable} -c 'from sift.integrations.cli import main; main()'"
    done = in_mount_namespace(
        f"mount -t tmpfs -o size=2m tmpfs {small_disk} && "
        f"{cli} index {corpus} --store {store} --embedder hash -q; echo exit=$? >&2; "
        f"{cli} stats --store {store} --json; echo stats=$? >&2; "
        f"{cli} search --store {store} --json -q page; echo search=$? >&2; "
        f"{cli} grep --store {store} 'page 1'; echo grep=$? >&2"
    )
    # Batches stored before the disk filled are partial work, exit 1 (README); none, 2.
    stored = re.search(r"(\d+) document\(s\) of this call were stored", done.stderr)
    assert stored is not None, done.stderr
    assert f"exit={1 if int(stored[1]) else 2}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    for command in ("stats", "search", "grep"):
        assert f"{command}=0" in done.stderr, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["documents"] > 0


# --------------------------------------------------------------------------- damaged


@pytest.fixture
def built(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    with SqliteCorpus(path, embedder="hash") as store:
        store.upsert(DOCS)
    return path


def test_a_truncated_database_is_called_damaged(built: Path) -> None:
    db = built / "sift.db"
    for suffix in ("-wal", "-shm"):
        (built / f"sift.db{suffix}").unlink(missing_ok=True)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError) as info:
        SqliteCorpus(built)
    message = str(info.value)
    assert not isinstance(info.value, NotAStoreError), message
    assert "damaged" in message and "restore it from a backup" in message


def test_a_database_of_something_else_is_not_a_sift_store(tmp_path: Path) -> None:
    path = tmp_path / "other"
    path.mkdir()
    sqlite3.connect(path / "sift.db").execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(NotAStoreError, match="not a sift store"):
        SqliteCorpus(path)


def test_a_second_writer_is_told_who_writes(built: Path) -> None:
    with SqliteCorpus(built) as first:
        first.upsert([Document(id="more", text="more text")])
        with SqliteCorpus(built) as second, pytest.raises(CorpusError) as info:
            second.delete(["灯台"])
    message = str(info.value)
    assert "locked by another process" in message
    assert f"process {__import__('os').getpid()}" in message
    assert sys.argv[0].rsplit("/", 1)[-1] in message
