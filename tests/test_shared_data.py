"""Tests of whole dev sets read ../shared/benchmarks through one fixture: absent, they
skip naming it, or fail under .ci/run (SIFT_REQUIRE_SHARED=1); the committed samples are
what the other tests read, so the README's test command passes in a bare clone."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

PROBE = """
def test_reads_the_whole_sets(shared_benchmarks):
    assert (shared_benchmarks / "README.md").is_file()
"""


def _run(clone: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "SIFT_REQUIRE_SHARED"}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-p",
        "no:xdist",
        "-p",
        "no:cacheprovider",
    ]
    return subprocess.run(
        [*command, str(clone / "tests" / "test_probe.py")],
        cwd=clone,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A repository's tests folder with nothing beside the repository."""
    tests = tmp_path / "repo" / "tests"
    tests.mkdir(parents=True)
    shutil.copy(TESTS / "conftest.py", tests / "conftest.py")
    (tests / "test_probe.py").write_text(PROBE, encoding="utf-8")
    return tmp_path / "repo"


def test_absent_shared_sets_skip_naming_them(clone: Path) -> None:
    run = _run(clone)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped" in run.stdout
    assert "the shared benchmarks are absent: put them at ../shared/benchmarks" in run.stdout


def test_absent_shared_sets_fail_under_ci(clone: Path) -> None:
    run = _run(clone, SIFT_REQUIRE_SHARED="1")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 error" in run.stdout and "skipped" not in run.stdout
    assert "SIFT_REQUIRE_SHARED=1 requires them" in run.stdout


def test_present_shared_sets_are_read(clone: Path) -> None:
    shared = clone.parent / "shared" / "benchmarks"
    shared.mkdir(parents=True)
    (shared / "README.md").write_text("dev sets\n", encoding="utf-8")
    run = _run(clone, SIFT_REQUIRE_SHARED="1")
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr


def test_no_test_reads_the_shared_sets_but_through_the_fixture() -> None:
    # A path to ../shared built anywhere else would fail, not skip, in a bare clone. The
    # recording scripts under data/ are run by hand beside the shared sets.
    here = {TESTS / "conftest.py", Path(__file__).resolve()}
    offenders = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("*.py")
        if path not in here
        and "data" not in path.relative_to(TESTS).parts
        and re.search(r'/\s*"shared"\s*/', path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
