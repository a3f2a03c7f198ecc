"""The OpenAPI document against the service: a bounded schemathesis run over every
operation, with every check (no 5xx, no schema-valid request rejected, no schema-invalid
one accepted, no undocumented status code or header, responses matching their schemas,
the stateful phase's links), valid and invalid inputs both (issue 14 item 6).

The test suite runs the same checks with a few examples per operation
(tests/integrations/http/test_http_clients.py); this runs many more, against `sift serve`
on loopback with its default settings and a collection of 300 HotpotQA passages.

    python checks/http_schema.py [--examples 200] [--seed 14]
        [--out checks/results/http_schema.md]
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The service is started as http_load.py starts it (the load benchmark).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from http_load import DATA, KEY, start_server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    st = shutil.which("st") or shutil.which("schemathesis")
    if st is None:
        sys.exit("schemathesis is not installed (pip install -e '.[dev]')")
    with tempfile.TemporaryDirectory(prefix="sift-schema-") as tmp:
        work = Path(tmp)
        corpus = work / "corpus.jsonl"
        with (DATA / "corpus.jsonl").open(encoding="utf-8") as source:
            corpus.write_text("".join(itertools.islice(source, 300)))
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from sift.integrations.cli import main; main()",
                "index",
                str(corpus),
                "--store",
                str(work / "root" / "docs"),
                "--embedder",
                "static",
                "-q",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        server = start_server(work / "root", None, {})
        started = time.monotonic()
        try:
            done = subprocess.run(
                [
                    st,
                    "run",
                    f"{server.url}/openapi.json",
                    "-H",
                    f"Authorization: Bearer {KEY}",
                    "--checks",
                    "all",
                    "--max-examples",
                    str(args.examples),
                    "--seed",
                    str(args.seed),
                    "--no-color",
                ],
                capture_output=True,
                text=True,
                check=False,
                env={**os.environ, "NO_COLOR": "1"},
            )
        finally:
            server.stop()
        wall = time.monotonic() - started
    output = done.stdout + done.stderr
    summary = output[output.rfind("SUMMARY") :] if "SUMMARY" in output else output[-3000:]
    summary = re.sub(r"=+", "", summary).strip()
    text = "\n".join(
        [
            "# OpenAPI document against the service (schemathesis)",
            "",
            f"Command: `python checks/http_schema.py --examples {args.examples} "
            f"--seed {args.seed}`",
            f"Machine: {platform.machine()}, Python {platform.python_version()}, "
            f"{os.cpu_count()} cores shared with other running processes. "
            f"Wall time {wall:.0f} s; load average at the end {os.getloadavg()[0]:.1f}.",
            "",
            "`st run <server>/openapi.json --checks all --max-examples "
            f"{args.examples} --seed {args.seed}` against `sift serve` (defaults, one "
            "collection `docs` of 300 HotpotQA passages); exit code "
            f"{done.returncode} (0: no failure).",
            "",
            "```",
            summary,
            "```",
            "",
        ]
    )
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    if done.returncode != 0:
        print(output[-20000:], file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
