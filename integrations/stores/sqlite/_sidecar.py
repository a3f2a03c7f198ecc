"""The small file beside a derived index that says which change sequence it holds.

Written atomically (temporary file, fsync, rename) after the index itself is durable, so
it can lag behind the index but never run ahead of it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["read_seq", "write_seq"]


def read_seq(path: Path, fmt: int, recorded: Mapping[str, str] | None = None) -> int | None:
    """The recorded sequence, or None when the file is missing, corrupt, of another
    format or records other values for the keys of `recorded` (the caller then rebuilds
    its index)."""
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or state.get("format") != fmt:
        return None
    if any(state.get(key) != value for key, value in (recorded or {}).items()):
        return None
    seq = state.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def write_seq(path: Path, fmt: int, seq: int, recorded: Mapping[str, str] | None = None) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as handle:
        json.dump({"format": fmt, "seq": seq, **(recorded or {})}, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
