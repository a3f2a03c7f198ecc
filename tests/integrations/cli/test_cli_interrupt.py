"""Ctrl-C during `sift index`, as a user presses it (issue 43): a real `sift` process
indexing a folder gets SIGINT once its first documents are committed; it ends with exit code 130 and
one line saying it was interrupted and how many documents it stored (exactly what the
store holds), never a traceback; run again, it finishes."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

# Documents enough that storing goes on for several batches (512 documents each) after
# the first one is committed, which is when the signal is sent.
FILES = 3_000

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "SIFT_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("SIFT_STORE", None)
    return env


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(FILES):
        if n % 2:
            text = f"# 記録 {n}\n\n" + f"第{n}号の橋は川を渡る。石の橋は古い。" * 20
        else:
            text = f"# Note {n}\n\n" + f"Bridge {n} crosses the river; its stones are old. " * 20
        (folder / f"{n:05d}.md").write_text(text, encoding="utf-8")
    return folder


def _documents(store: Path, env: dict[str, str]) -> int:
    stats = subprocess.run(
        [sys.executable, "-m", "sift", "stats", "--store", str(store), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    documents: int = json.loads(stats.stdout)["documents"]
    return documents


def _committed(database: Path) -> int:
    """Documents committed to the store's SQLite file so far, read as another process
    would (read-only); 0 before the file or its tables exist."""
    if not database.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1)) as db:
            count: int = db.execute("SELECT count(*) FROM documents").fetchone()[0]
            return count
    except sqlite3.Error:
        return 0  # being made


def test_ctrl_c_while_indexing_is_one_line_and_exit_130(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    store = tmp_path / "store"
    env = _env(tmp_path / "home")
    index = [sys.executable, "-m", "sift", "index", "--store", str(store), str(folder)]
    process = subprocess.Popen(
        [*index, "--embedder", "hash"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        # Once the first batch is committed, storing has begun. Polled; the limit only
        # bounds a broken run, it is never a speed claim.
        give_up = time.monotonic() + 300
        while _committed(store / "sift.db") == 0 and process.poll() is None:
            assert time.monotonic() < give_up, "indexing never began storing"
            time.sleep(0.02)
        assert process.poll() is None, "indexing ended before it could be interrupted"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("sift: interrupted: ")]
    assert len(lines) == 1, err
    assert "run the same command again to finish" in lines[0]
    assert out == ""
    found = re.search(r"interrupted: ([\d,]+) document\(s\) of this run were stored", lines[0])
    assert found, lines[0]
    said = int(found.group(1).replace(",", ""))
    # The count is exact: the store stops between documents, not inside a batch.
    assert 0 < said == _documents(store, env) <= FILES

    # Run again, it finishes: what was stored is skipped, the rest added.
    again = subprocess.run(
        [*index, "--json", "-q"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["added"] + summary["unchanged"] == FILES
    assert summary["unchanged"] >= said
