"""`sift index` on a disk that fills part-way: the batches committed before stay, and the
command says how many documents were stored and exits 1 (partial work), not 2 ("nothing
was done").

The disk is real: a tmpfs of a few MB mounted in a private user and mount namespace
(`unshare`), so nothing outside the test's own process sees it; where the system allows
no such namespace, the test is skipped.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# A hang guard only.
HANG_GUARD_S = 600

# Mounts a tmpfs of $1 at $2, then runs the rest of the arguments with it.
ON_TINY_DISK = 'mount -t tmpfs -o size="$1" tmpfs "$2" && shift 2 && exec "$@"'


def on_tiny_disk(size: str, mount: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *("unshare", "--user", "--map-root-user", "--mount"),
            *("sh", "-c", ON_TINY_DISK, "sh", size, str(mount), *command),
        ],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


def test_a_disk_full_part_way_reports_what_was_stored_and_exits_1(tmp_path: Path) -> None:
    mount = tmp_path / "disk"
    mount.mkdir()
    if shutil.which("unshare") is None or on_tiny_disk("64k", mount, "true").returncode != 0:
        pytest.skip("no private mount namespace here to make a small disk in")
    folder = tmp_path / "notes"
    folder.mkdir()
    rng = random.Random(7)
    words = [f"w{i}" for i in range(5000)]
    # 2,000 files: the first batch of 512 fits on a few MB, the whole set does not.
    for i in range(2000):
        text = " ".join(rng.choice(words) for _ in range(300))
        (folder / f"note{i:04}.txt").write_text(text, encoding="utf-8")
    # How much one batch takes on disk varies a little with the machine (page and
    # segment sizes), so several small disks are tried: each must end in one of the
    # three honest ways, and at least one must be the partial one this test is about.
    partial = []
    for size in ("2m", "3m", "4m", "6m"):
        store = mount / f"store-{size}"
        done = on_tiny_disk(
            size,
            mount,
            sys.executable,
            "-m",
            "sift",
            "index",
            "--store",
            str(store),
            "--embedder",
            "hash",
            "--quiet",
            str(folder),
        )
        assert "Traceback" not in done.stderr, done.stderr
        if done.returncode == 0:
            continue  # all 2,000 fitted
        assert "is full" in done.stderr, done.stderr
        stored = re.search(
            r"([\d,]+) document\(s\) (?:of this call were )?stored before", done.stderr
        )
        if done.returncode == 2:
            # Nothing committed: the command says so, not a count.
            assert stored is None or stored.group(1) == "0", done.stderr
            continue
        assert done.returncode == 1, done.stderr
        assert stored, done.stderr
        # Whole batches of 512, some but not all of the files.
        count = int(stored.group(1).replace(",", ""))
        assert 0 < count < 2000 and count % 512 == 0, done.stderr
        partial.append(size)
    assert partial, "no disk size filled part-way: make the files or the sizes fit again"
