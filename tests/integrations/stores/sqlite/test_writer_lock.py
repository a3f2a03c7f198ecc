"""Who a refusal names: the process that holds the writer lock now, never one that held
it before (a refusal racing the new holder between its lock and its text once named the
previous holder)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from sift.integrations.stores.sqlite._writer import WriterLock, describe_holder


def test_the_lock_file_names_its_holder_only_while_it_holds(tmp_path: Path) -> None:
    lock = WriterLock(tmp_path)
    assert lock.try_acquire()
    text = json.loads((tmp_path / "writer.lock").read_text(encoding="utf-8"))
    assert text["host"] == socket.gethostname() and isinstance(text["pid"], int)
    assert describe_holder(tmp_path / "writer.lock").startswith(f"process {text['pid']} (")
    lock.release()
    assert (tmp_path / "writer.lock").read_bytes() == b""
    assert describe_holder(tmp_path / "writer.lock") == "it does not say which"


def test_the_text_of_a_killed_holder_is_not_taken_for_the_new_one(tmp_path: Path) -> None:
    # A holder killed with its text still in the file (it could not empty it); the next
    # holder has taken the lock and not yet written: a refusal then must not name the
    # dead process.
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    (tmp_path / "writer.lock").write_text(
        json.dumps({"pid": pid, "host": socket.gethostname(), "command": "x", "since": "t"}),
        encoding="utf-8",
    )
    assert describe_holder(tmp_path / "writer.lock") == "it does not say which"
    # A live holder of another host is named as its text says (it cannot be checked).
    (tmp_path / "writer.lock").write_text(
        json.dumps({"pid": pid, "host": "elsewhere", "command": "x", "since": "t"}),
        encoding="utf-8",
    )
    assert describe_holder(tmp_path / "writer.lock").startswith(f"process {pid} on elsewhere")
