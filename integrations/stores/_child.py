"""The child process of a long ingest: chunks and embeds batches sent down a pipe.

Started by the embedded store's ingest (`sqlite/_prepare.py`) as `python -c` running
`serve(requests_fd, answers_fd)`; it imports only what chunking and embedding need, so
it is up in a fraction of a second. The first message is the pickled embedder; each
later one is (items, chunk_tokens), answered ("ok", chunk_and_embed(...)) or
("failed", traceback). The process exits when the request pipe closes.
"""

from __future__ import annotations

import os
import pickle
import traceback

from sift.integrations.interpreters import child_pipes
from sift.integrations.stores._documents import chunk_and_embed

__all__ = ["COMMAND", "READY", "serve"]

COMMAND = "from sift.integrations.stores._child import serve; serve()"
READY = "ready"


def serve() -> None:
    requests, answers = child_pipes()
    try:
        embedder = pickle.loads(requests.recv_bytes())
    except Exception:
        answers.send(("failed", traceback.format_exc()))
        return
    answers.send(("ok", READY))
    while True:
        try:
            items, chunk_tokens = requests.recv()
        except EOFError:
            # The ingest is over and waits for this process to end: skip the
            # interpreter's teardown (freeing the model and every remembered piece took
            # 0.17 s, a tenth of a dev-corpus ingest). Nothing is buffered: answers go
            # straight down the pipe.
            answers.close()
            os._exit(0)
        try:
            answers.send(("ok", chunk_and_embed(items, embedder, chunk_tokens=chunk_tokens)))
        except Exception:
            answers.send(("failed", traceback.format_exc()))
