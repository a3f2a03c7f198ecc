"""The child process of the embedded store's entity index (started by
`sift.integrations.stores.sqlite`'s extractor, which documents the protocol): it finds
the entities of the texts it is sent, on another core than the writer's.

It runs as `python -P -m sift.entities._worker` and imports only the standard library
and the extraction (`sift.entities._extract`, `sift.text._scripts`): the `__init__`s of
`sift`, `sift.entities` and `sift.text` import their public names on first use, so the
child starts without pydantic or the stemmer, in about 0.05 s instead of 0.2 s of a core
the writer also wants."""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import IO

from sift.entities._extract import EntityLimits, mention_keys


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


if __name__ == "__main__":
    main()
