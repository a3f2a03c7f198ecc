"""Runs the `sift` command in this process: `main(argv)` as the console script calls it,
with stdout and stderr captured and SIFT_HOME pointed at the test's own folder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sift.integrations.cli import main


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


Sift = Callable[..., Run]


def exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def sift(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Sift:
    """`sift(*args)`: the command's exit code, stdout and stderr, as a user would see them
    (`sift: error: ...` on stderr with code 2 for sift's own errors)."""
    monkeypatch.setenv("SIFT_HOME", str(home))
    monkeypatch.delenv("SIFT_STORE", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")

    def run(*args: str) -> Run:
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exit_code(exc)
        out = capsys.readouterr()
        return Run(code, out.out, out.err)

    return run


@pytest.fixture(scope="module")
def sift_code() -> Callable[..., int]:
    """For module-scoped fixtures (no capture there): `sift(*args)`'s exit code only."""

    def run(*args: str) -> int:
        try:
            main(list(args))
        except SystemExit as exc:
            return exit_code(exc)
        return 0

    return run
