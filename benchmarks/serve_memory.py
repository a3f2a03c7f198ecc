"""Memory of `sift serve` over many small collections (issue 42, "memory bounded").

Starts `sift serve` on an empty root, creates N one-sentence collections (English and
Japanese in turn) through the API and searches each once, then reports the resident
memory (VmRSS from /proc, the server and its search processes summed) before and after,
with the open-collection caps at their defaults and with them off.

    python benchmarks/serve_memory.py --collections 200 --embedder hash
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import httpx

# The load benchmark's server start and memory reading (a script beside this one).
from http_load import start_server

KEY = "bench-memory-0123456789"

SENTENCES = (
    "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.",
    "富士山は日本で最も高い山で、標高は3776メートルです。",
)

# The caps as configured: defaults, and as good as off.
CONFIGS = {
    "caps at default (32 open, 600 s idle)": {},
    "caps off": {
        "SIFT_SERVER_MAX_OPEN_COLLECTIONS": "100000",
        "SIFT_SERVER_COLLECTION_IDLE_S": "1000000",
    },
}


def run(count: int, embedder: str, env: dict[str, str]) -> tuple[float, float, int]:
    """(RSS MiB when ready, RSS MiB after the collections, the server's open file
    descriptors at the end)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "collections"
        root.mkdir()
        # The load benchmark's start: a loopback `sift serve`, its log drained, ready.
        server = start_server(
            root,
            None,
            {
                "SIFT_SERVER_API_KEYS": KEY,
                "SIFT_SERVER_EMBEDDER": embedder,
                "SIFT_SERVER_WILDCARD_CREATE": "true",
                "SIFT_SERVER_MAX_COLLECTIONS_PER_KEY": str(count),
                **env,
            },
        )
        try:
            headers = {"Authorization": f"Bearer {KEY}"}
            with httpx.Client(base_url=server.url, timeout=120, headers=headers) as client:
                before = server.rss_mib()
                for number in range(count):
                    name = f"c{number:04d}"
                    text = SENTENCES[number % 2]
                    document = {"id": "one", "title": name, "text": text}
                    answer = client.post(
                        f"/v1/collections/{name}/documents", json={"documents": [document]}
                    )
                    answer.raise_for_status()
                    question = "Eiffel Tower" if number % 2 == 0 else "富士山の標高"
                    found = client.post(
                        "/v1/search",
                        json={"collection": name, "question": question, "mode": "single_shot"},
                    )
                    found.raise_for_status()
                after = server.rss_mib()
            fds = len(os.listdir(f"/proc/{server.process.pid}/fd"))
        finally:
            server.stop()
        return before, after, fds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=200)
    parser.add_argument("--embedder", default="hash")
    args = parser.parse_args()
    print(f"{args.collections} collections, embedder {args.embedder}")
    print("| configuration | RSS ready (MiB) | RSS after (MiB) | server fds after |")
    print("| --- | ---: | ---: | ---: |")
    for label, env in CONFIGS.items():
        before, after, fds = run(args.collections, args.embedder, env)
        print(f"| {label} | {before:.0f} | {after:.0f} | {fds} |", flush=True)


if __name__ == "__main__":
    main()
