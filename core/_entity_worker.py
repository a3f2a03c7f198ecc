"""The child process of the embedded store's entity index (started by
`sift.integrations.stores.sqlite`'s extractor, which documents the protocol): it finds
the entities of the texts it is sent, on another core than the writer's.

It imports only the standard library and `sift._entities`: the extractor runs `main`
under a bare `sift` package (`BOOT`), without the package's `__init__` and its pydantic
types, so the child starts in about 0.05 s instead of 0.2 s of a core the writer also
wants."""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import IO

from sift._entities import EntityLimits, mention_keys


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """The limits, then batches of (title, text) until EOF, each answered with the
    (keys, how many are the title's) of every text."""
    try:
        limits: EntityLimits = pickle.load(source)
    except EOFError:
        return  # stopped before its first batch
    while True:
        try:
            batch: list[tuple[str, str]] = pickle.load(source)
        except EOFError:
            return
        found = [mention_keys(title, text, limits) for title, text in batch]
        pickle.dump(found, sink, protocol=pickle.HIGHEST_PROTOCOL)
        sink.flush()


def main() -> None:
    # The parent's Ctrl-C reaches the whole process group: the child ends when its
    # stdin closes, not with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The protocol owns the original stdout; whatever an import prints goes to stderr.
    sink = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(sys.stdin.buffer, sink)
    # Nothing to clean up, and the interpreter's own teardown took a tenth of a second
    # the parent waited for.
    sink.close()
    os._exit(0)


# `python -c BOOT <the sift package's directory>`: `sift` as a bare package of that
# directory (its `__init__` not run), then `main`. The directory is the parent's own, so
# the child runs the same code even when the parent found sift by a path of its own.
BOOT = """
import importlib.util, sys
where = sys.argv[1]
spec = importlib.util.spec_from_file_location(
    "sift", where + "/__init__.py", submodule_search_locations=[where]
)
sys.modules["sift"] = importlib.util.module_from_spec(spec)
from sift._entity_worker import main
main()
"""

if __name__ == "__main__":
    main()
