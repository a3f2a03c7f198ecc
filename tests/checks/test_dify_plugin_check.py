"""The Dify plugin's check finds a Python 3.12 that runs, or says in one line how to get
one: checks/find_python.sh over PATHs and homes laid out as a pyenv or uv user's are
(Japanese folder names among them), and checks/dify_plugin_sdk.py under a Python without
Dify's SDK."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "integrations" / "dify-plugin"
CHECKS = ROOT / "checks"
FIND = CHECKS / "find_python.sh"
SDK_CHECK = CHECKS / "dify_plugin_sdk.py"

# What pyenv's shim does for a version that is installed but not selected.
BROKEN_SHIM = """#!/bin/sh
echo "pyenv: python3.12: command not found" >&2
exit 127
"""


def _runs_312(path: str) -> bool:
    probe = [path, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except OSError:
        return False


def _real_python_312() -> str:
    """A real Python 3.12 or later on this machine, to lay out where users have one."""
    home = Path.home()
    places = [shutil.which(n) for n in ("python3.12", "python3.13", "python3.14")]
    places += sorted(glob.glob(str(home / ".pyenv/versions/3.1[2-9]*/bin/python")))
    places += sorted(glob.glob(str(home / ".local/share/uv/python/cpython-3.1[2-9]*/bin/python3")))
    for place in places:
        if place and _runs_312(place):
            return place
    pytest.skip("no Python 3.12 or later on this machine to lay out as a user's")


def _find(home: Path, path: list[Path], **extra: str) -> subprocess.CompletedProcess[str]:
    """find_python.sh run by bash with only `path` on PATH and `home` as HOME."""
    env = {"HOME": str(home), "PATH": os.pathsep.join(map(str, path)), **extra}
    return subprocess.run(
        [shutil.which("bash") or "/bin/bash", str(FIND)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def shims(tmp_path: Path) -> Path:
    """A PATH folder whose python3.12 is a pyenv shim that runs nothing."""
    folder = tmp_path / "シム"
    folder.mkdir()
    shim = folder / "python3.12"
    shim.write_text(BROKEN_SHIM, encoding="utf-8")
    shim.chmod(0o755)
    return folder


def test_a_shim_that_runs_nothing_is_passed_over_for_pyenvs_python(
    tmp_path: Path, shims: Path
) -> None:
    home = tmp_path / "ホーム"
    version = home / ".pyenv" / "versions" / "3.12.1" / "bin"
    version.mkdir(parents=True)
    (version / "python").symlink_to(_real_python_312())
    run = _find(home, [shims])
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(version / "python")


def test_a_uv_managed_python_is_found(tmp_path: Path, shims: Path) -> None:
    home = tmp_path / "ホーム"
    managed = home / ".local" / "share" / "uv" / "python" / "cpython-3.12.8-linux-x86_64-gnu"
    (managed / "bin").mkdir(parents=True)
    (managed / "bin" / "python3").symlink_to(_real_python_312())
    run = _find(home, [shims])
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(managed / "bin" / "python3")
    # UV_PYTHON_INSTALL_DIR moves uv's folder: looked at there, not in the default one.
    moved = _find(home, [shims], UV_PYTHON_INSTALL_DIR=str(tmp_path / "elsewhere"))
    assert moved.returncode == 1


def test_none_that_runs_is_one_line_saying_how_to_get_one(tmp_path: Path, shims: Path) -> None:
    old = tmp_path / "bin"
    old.mkdir()
    (old / "python3").symlink_to(sys.executable)  # this suite's Python: 3.11
    if _runs_312(sys.executable):
        pytest.skip("this suite runs on Python 3.12 or later: it would be found")
    run = _find(tmp_path / "ホーム", [shims, old])
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1, run.stderr
    assert "no Python 3.12 or later that runs was found" in run.stderr
    assert "uv python install 3.12" in run.stderr and "SIFT_DIFY_PYTHON=" in run.stderr


def test_sift_dify_python_is_used_as_given_or_named_when_it_cannot_be(
    tmp_path: Path, shims: Path
) -> None:
    real = _real_python_312()
    chosen = _find(tmp_path, [shims], SIFT_DIFY_PYTHON=real)
    assert chosen.returncode == 0 and chosen.stdout.strip() == real
    wrong = _find(tmp_path, [shims], SIFT_DIFY_PYTHON=str(shims / "python3.12"))
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1
    assert f"SIFT_DIFY_PYTHON={shims / 'python3.12'} does not run" in wrong.stderr


def test_sdk_check_without_difys_sdk_says_what_to_run(tmp_path: Path) -> None:
    """Under this suite's Python (no dify_plugin here) the SDK check stops at its imports
    with one line naming the missing module and what to run, not a traceback."""
    run = subprocess.run(
        [sys.executable, str(SDK_CHECK), "http://127.0.0.1:9", "キー"],
        cwd=PLUGIN,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if run.returncode == 0:
        pytest.skip("dify_plugin is importable here")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith("dify_plugin_sdk.py: ") and run.stderr.count("\n") == 1
    assert "is not importable under Python" in run.stderr
    assert "checks/dify_plugin.sh" in run.stderr
