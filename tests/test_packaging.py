"""The distribution installs one import namespace, `sift`, with its data files."""

from __future__ import annotations

import ast
import configparser
import fcntl
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import sift

ROOT = Path(__file__).resolve().parents[1]


def _build_wheel(out: Path, scratch: Path) -> Path:
    # Build from a copy: setuptools writes build/ into the source tree, and concurrent builds
    # of one tree (parallel test workers, developers) trip over each other there.
    source = scratch / "sift"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv*",
            "build",
            "*.egg-info",
            "__pycache__",
            ".cache",
            "results",
            "tests",
            # The n8n node package's npm install and build output (hundreds of MB).
            "node_modules",
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
    (built,) = out.glob("sift_harness-*.whl")
    return built


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The wheel of this tree, built once per test run: under pytest-xdist the workers
    share the run's temporary folder and the first one to take the lock builds it."""
    if worker_id == "master":
        return _build_wheel(tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("source"))
    shared = tmp_path_factory.getbasetemp().parent
    with open(shared / "wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / "wheel"
        if done.is_dir():
            (built,) = done.glob("sift_harness-*.whl")
            return built
        out = shared / "wheel.partial"
        shutil.rmtree(out, ignore_errors=True)
        built = _build_wheel(out, tmp_path_factory.mktemp("source"))
        out.rename(done)
        return done / built.name


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def _entry_points(wheel: Path) -> configparser.ConfigParser:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = archive.read(name).decode("utf-8")
    parser = configparser.ConfigParser(delimiters=("=",))
    parser.read_string(text)
    return parser


def test_only_the_sift_namespace_is_installed(wheel_names: list[str]) -> None:
    tops = {name.split("/", 1)[0] for name in wheel_names if ".dist-info/" not in name}
    assert tops == {"sift"}


def test_the_workflow_engine_packages_stay_out_of_the_wheel(wheel_names: list[str]) -> None:
    # integrations/n8n-node (npm) and integrations/dify-plugin (Dify's runtime) are
    # packaged by their own tools; package-data globs like **/*.json must not pull them in.
    shipped = [n for n in wheel_names if "n8n-node" in n or "dify-plugin" in n]
    assert not shipped, shipped[:10]
    assert not any("node_modules" in n or n.endswith(".ts") for n in wheel_names)


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


def test_the_c_part_is_compiled_into_the_wheel(wheel_names: list[str]) -> None:
    # setup.py marks it optional (an install without a compiler goes on, in numpy); the
    # build here has gcc, so a wheel without it means the build broke.
    module = "sift/integrations/embedders/_pieces"
    folder = module.rsplit("/", 1)[0] + "/"
    built = [n for n in wheel_names if n.startswith(f"{module}.") and n.endswith(".so")]
    assert len(built) == 1, [n for n in wheel_names if n.startswith(folder)]
    assert f"{module}.pyi" in wheel_names  # its types, for mypy in users' code
    # The only C part: the others were removed (issue 28), none is left in the wheel.
    assert [n for n in wheel_names if n.endswith(".so")] == built


def test_every_package_root_is_marked_typed(wheel_names: list[str]) -> None:
    for root in ("sift", "sift/nodes", "sift/graphs", "sift/integrations"):
        assert f"{root}/py.typed" in wheel_names, root


def test_console_script_and_store_back_ends_are_registered(wheel: Path) -> None:
    entries = _entry_points(wheel)
    assert entries["console_scripts"]["sift"] == "sift.integrations.cli:main"
    stores = dict(entries["sift.stores"])
    assert stores == {
        "file": "sift.integrations.stores:open_embedded",
        "sqlite": "sift.integrations.stores:open_embedded",
        "weaviate": "sift.integrations.stores:open_weaviate",
        "weaviates": "sift.integrations.stores:open_weaviate",
    }


def _commands(text: str) -> list[str]:
    """Shell commands of a script or a README line, `&&` chains split, options like -q
    that only change verbosity dropped."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        for part in filter(None, (p.strip() for p in line.split("&&"))):
            out.append(" ".join(w for w in part.split() if w != "-q"))
    return out


def test_ci_runs_the_readme_test_command_and_every_check() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = [
        x for x in readme.splitlines() if "pip install -e" in x and "pytest" in x
    ]  # the "run the tests" command
    ci = _commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    wanted = [c for c in _commands(line) if not c.startswith(("python3 -m venv", "."))]
    assert wanted[0].startswith("pip install -e") and wanted[-1].startswith("pytest")
    missing = [c for c in wanted if c not in ci]
    assert not missing, f".ci/run lacks the README's {missing}; it runs {ci}"
    positions = [ci.index(c) for c in wanted]
    assert positions == sorted(positions)
    checks = ["ruff check .", "ruff format --check .", ".ci/mypy"]
    assert all(positions[0] < ci.index(c) < positions[1] for c in checks)


def _version_literal() -> str:
    """`__version__` as core/__init__.py writes it (read, not imported)."""
    tree = ast.parse((ROOT / "core" / "__init__.py").read_text(encoding="utf-8"))
    (value,) = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
        and isinstance(node.value, ast.Constant)
    ]
    assert isinstance(value, str)
    return value


def test_the_version_is_written_once_and_the_changelog_names_it(wheel: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"], "the version lives in core/__init__.py only"
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "sift.__version__"}
    version = _version_literal()
    assert sift.__version__ == version
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode("utf-8")
    assert f"\nVersion: {version}\n" in metadata
    # Keep a Changelog: "## [Unreleased]" first, then the releases, newest first.
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.MULTILINE)
    assert headings[0] == "Unreleased", headings
    assert headings[1] == version, f"CHANGELOG.md's latest release is {headings[1]}, not {version}"
    assert re.search(rf"^## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M)


def test_the_package_tree_has_the_shape_setup_py_installs(tmp_path: Path) -> None:
    """scripts/package_tree.sh (what .ci/mypy and folder-scanning tools read) lays the
    root folders out as the installed package: sift's own modules at the top, the
    three sub-packages under it, each a link into the checkout."""
    subprocess.run([str(ROOT / "scripts" / "package_tree.sh"), str(tmp_path)], check=True)
    tree = tmp_path / "sift"
    for name in ("__init__.py", "types.py", "fusion.py", "llm/__init__.py"):
        assert (tree / name).resolve() == (ROOT / "core" / name).resolve(), name
    for sub in ("nodes", "graphs", "integrations"):
        assert (tree / sub / "__init__.py").resolve() == (ROOT / sub / "__init__.py").resolve()
    # Made anew: a second run over the same folder gives the same tree.
    subprocess.run([str(ROOT / "scripts" / "package_tree.sh"), str(tmp_path)], check=True)
    assert sorted(p.name for p in tree.iterdir()) == sorted(
        [p.name for p in (ROOT / "core").iterdir()] + ["nodes", "graphs", "integrations"]
    )
