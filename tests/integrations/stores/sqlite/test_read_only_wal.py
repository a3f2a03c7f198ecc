"""A store that cannot be written still shows every acknowledged write (issue 42): the
transactions a live writer committed sit in `sift.db-wal` until a checkpoint, and a
copy of the store taken then (or the store on a read-only mount) must read them. It
used to be opened as `immutable`, which reads the database file alone: 0 of 50 visible.

The read-only mount is real: a tmpfs in a private mount namespace (`unshare -rm`),
remounted read-only (root passes the permission checks `chmod -w` would add)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

N = 50

# A store made and closed (its file checkpointed), then a writer that has committed N
# documents more, each in a transaction of its own, and is still open (so no checkpoint
# has moved them into sift.db) while the store's files are copied, as a backup or a
# snapshot taken from a running service would be.
_COPY_LIVE = textwrap.dedent(
    f"""
    import shutil, sys
    from pathlib import Path
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document
    live, copy, keep_shm = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "shm"
    with SqliteCorpus(live, embedder="hash") as store:
        store.upsert([Document(id="seed", text="the store as it was checkpointed")])
    assert not (live / "sift.db-wal").exists()
    store = SqliteCorpus(live)
    for i in range({N}):
        if i % 2:
            doc = Document(id=f"ja-{{i}}", title=f"灯台{{i}}", text=f"灯台{{i}}号は夜に船を導く。")
        else:
            doc = Document(id=f"en-{{i}}", title=f"Beacon {{i}}", text=f"beacon{{i}} guides ships.")
        store.upsert([doc])
    wal = live / "sift.db-wal"
    assert wal.stat().st_size > 0, "the writes must still be in the WAL"
    ignore = None if keep_shm else shutil.ignore_patterns("sift.db-shm")
    def copy_if_there(src, dst):
        # The live writer's BM25 index merges its segments in the background: a file
        # listed a moment ago may be gone (merged), as in any backup of a running store.
        try:
            return shutil.copy2(src, dst)
        except FileNotFoundError:
            return dst
    shutil.copytree(live, copy, ignore=ignore, copy_function=copy_if_there)
    print(wal.stat().st_size)
    store.close()
    """
)

_READ = textwrap.dedent(
    f"""
    import json, sys
    from sift.integrations.stores import open_store
    store = open_store(sys.argv[1])
    ids = [f"{{'ja' if i % 2 else 'en'}}-{{i}}" for i in range({N})]
    out = {{
        "documents": store.stats().documents,
        "readable": sum(1 for doc_id in ids if store.read(doc_id)),
        "bm25_en": [h.chunk.doc_id for h in store.search("beacon48", k=1, mode="bm25")],
        "bm25_ja": [h.chunk.doc_id for h in store.search("灯台49号", k=1, mode="bm25")],
        "grep_ja": [h.chunk.doc_id for h in store.grep("灯台47号", k=1).hits],
    }}
    store.close()
    print(json.dumps(out, ensure_ascii=False))
    """
)


@pytest.mark.parametrize("shm", ["shm", "no-shm"])
def test_a_copy_of_a_live_store_on_a_read_only_mount_reads_its_wal(
    shm: str, small_disk: Path, tmp_path: Path, in_mount_namespace
) -> None:
    """With its `-shm` (SQLite reads the log through it) and without one (the log is
    indexed in the connection's memory): all 50 documents, English and Japanese."""
    copy_live, read = tmp_path / "copy_live.py", tmp_path / "read.py"
    copy_live.write_text(_COPY_LIVE, encoding="utf-8")
    read.write_text(_READ, encoding="utf-8")
    live, copy = small_disk / "live", small_disk / "copy"
    done = in_mount_namespace(
        f"mount -t tmpfs -o size=64m tmpfs {small_disk} && "
        f"{sys.executable} {copy_live} {live} {copy} {shm} && "
        f"mount -o remount,ro {small_disk} && {sys.executable} {read} {copy} && "
        f"ls {copy}"
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    wal_bytes, report, *listing = done.stdout.strip().splitlines()
    assert int(wal_bytes) > 0
    assert ("sift.db-shm" in listing) == (shm == "shm")
    report = json.loads(report)
    assert report["documents"] == N + 1
    assert report["readable"] == N
    assert report["bm25_en"] == ["en-48"]
    assert report["bm25_ja"] == ["ja-49"]
    assert report["grep_ja"] == ["ja-47"]


@pytest.mark.parametrize("shm", ["shm", "no-shm"])
def test_a_copy_of_a_live_store_in_a_folder_not_ours_reads_its_wal(
    shm: str, tmp_path: Path
) -> None:
    """The folder and files are another user's, read-only to this one (permissions, not
    the mount): the same answers. Run as root, the reader drops to `nobody` (root passes
    permission checks); the folder is made outside pytest's own, which only root may
    enter."""
    as_other: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root and no `setpriv` to read as another user")
        as_other = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    with tempfile.TemporaryDirectory(prefix="sift-wal-") as shared:
        root = Path(shared)
        root.chmod(0o755)
        copy_live, read = root / "copy_live.py", root / "read.py"
        copy_live.write_text(_COPY_LIVE, encoding="utf-8")
        read.write_text(_READ, encoding="utf-8")
        live, copy = root / "live", root / "copy"
        made = subprocess.run(
            [sys.executable, str(copy_live), str(live), str(copy), shm],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert made.returncode == 0, made.stderr
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            done = subprocess.run(
                [*as_other, sys.executable, str(read), str(copy)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        finally:
            for path in [copy, *copy.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        assert ("sift.db-shm" in {p.name for p in copy.iterdir()}) == (shm == "shm")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["documents"] == N + 1
    assert report["readable"] == N
    assert report["bm25_en"] == ["en-48"] and report["bm25_ja"] == ["ja-49"]
    assert report["grep_ja"] == ["ja-47"]
