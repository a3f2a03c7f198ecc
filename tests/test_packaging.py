"""The distribution installs one import namespace, `sift`, with its data files."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    out = tmp_path_factory.mktemp("wheel")
    # Build from a copy: setuptools writes build/ into the source tree, and concurrent builds
    # of one tree (parallel test workers, developers) trip over each other there.
    source = tmp_path_factory.mktemp("source") / "sift"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv*", "build", "*.egg-info", "__pycache__", ".cache", "results", "tests"
        ),
    )
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = out.glob("sift_harness-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_only_the_sift_namespace_is_installed(wheel_names: list[str]) -> None:
    tops = {name.split("/", 1)[0] for name in wheel_names if ".dist-info/" not in name}
    assert tops == {"sift"}


def test_root_folders_map_into_sift(wheel_names: list[str]) -> None:
    for package in (
        "sift/__init__.py",
        "sift/nodes/__init__.py",
        "sift/graphs/__init__.py",
        "sift/integrations/__init__.py",
        "sift/integrations/cli/__init__.py",
    ):
        assert package in wheel_names


def test_data_files_ship(wheel_names: list[str]) -> None:
    assert "sift/integrations/demo/corpus.jsonl.gz" in wheel_names
    for asset in ("trace.js", "ui.js", "trace.css"):
        assert f"sift/integrations/traceview/static/{asset}" in wheel_names
    assert any(
        n.startswith("sift/integrations/embedders/data/") and n.endswith(".safetensors")
        for n in wheel_names
    )


def test_console_script_is_declared(wheel_names: list[str]) -> None:
    assert any(n.endswith("entry_points.txt") for n in wheel_names)
