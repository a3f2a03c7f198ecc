"""`python -m sift`: the `sift` command.

The command is found through the distribution's `sift` console script, so the package
root names no adapter (the CLI lives in sift.integrations).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, distribution


def _command() -> Callable[[], object]:
    try:
        entries = distribution("sift-harness").entry_points
    except PackageNotFoundError:
        entries = None
    for script in entries.select(group="console_scripts", name="sift") if entries else ():
        command: Callable[[], object] = script.load()
        return command
    raise SystemExit(
        "sift: error: the `sift` command is not installed; install the sift-harness "
        "distribution (pip install sift-harness, or pip install -e . in a checkout)"
    )


if __name__ == "__main__":
    _command()()
