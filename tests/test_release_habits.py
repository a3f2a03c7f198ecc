"""Release habits (issue 46 item 5) that a change could quietly undo: the end-to-end checks
in one folder sharing their set-up and one n8n version, the Dify package without them, and
the n8n package ready to publish with its lockfile."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ROOT / "checks"
PLUGIN = ROOT / "integrations" / "dify-plugin"
NODE = ROOT / "integrations" / "n8n-node"
SKIPPED = {".git", ".venv", "node_modules", ".mypy_cache", "__pycache__", ".cache", "dist"}


def _files(folder: Path) -> list[Path]:
    return [
        p for p in folder.rglob("*") if p.is_file() and not SKIPPED & set(p.relative_to(ROOT).parts)
    ]


def test_the_shell_checks_live_in_checks_and_source_one_set_up() -> None:
    scripts = sorted(p for p in CHECKS.glob("*.sh") if p.name not in ("_common.sh",))
    assert {p.name for p in scripts} >= {"n8n_examples.sh", "n8n_node.sh", "dify_plugin.sh"}
    for script in scripts:
        if script.name == "find_python.sh":  # a helper the Dify check runs, not a check
            continue
        text = script.read_text(encoding="utf-8")
        assert '. "$(dirname "$0")/_common.sh"' in text, script.name
        assert "mktemp -d" not in text and "trap " not in text, f"{script.name} repeats _common.sh"
    strays = [
        p.relative_to(ROOT)
        for folder in ("examples", "integrations", "scripts")
        for p in _files(ROOT / folder)
        if re.fullmatch(r"check(\.sh|\.py|\.out)|.*_check\.py", p.name)
    ]
    assert not strays, f"end-to-end checks outside checks/: {strays}"


def test_one_n8n_version_everywhere() -> None:
    common = (CHECKS / "_common.sh").read_text(encoding="utf-8")
    (pinned,) = re.findall(r'^N8N_VERSION="([0-9.]+)"$', common, flags=re.MULTILINE)
    named = set()
    for path in [
        *_files(CHECKS),
        *_files(ROOT / "examples"),
        ROOT / "README.md",
        *NODE.glob("*.md"),
    ]:
        if path.suffix in (".sh", ".md", ".py"):
            text = path.read_text(encoding="utf-8")
            named |= set(re.findall(r"\bn8n[@ ]([0-9]+\.[0-9]+\.[0-9]+)\b", text))
    assert named <= {pinned}, f"n8n versions named beside {pinned}: {named - {pinned}}"


def _ignored(patterns: list[str], relative: str) -> bool:
    """gitignore's rules as far as .difyignore uses them: a name pattern matches any path
    part, a trailing / a folder, `!` takes a file back."""
    ignored = False
    parts = relative.split("/")
    for pattern in patterns:
        negated = pattern.startswith("!")
        body = pattern.lstrip("!").rstrip("/")
        names = parts[:-1] if pattern.endswith("/") else parts
        if any(fnmatch.fnmatchcase(name, body) for name in names):
            ignored = not negated
    return ignored


def test_the_dify_package_leaves_checks_and_local_files_out() -> None:
    lines = (PLUGIN / ".difyignore").read_text(encoding="utf-8").splitlines()
    patterns = [x.strip() for x in lines if x.strip() and not x.startswith("#")]
    for leftover in ("check.py", "check.sh", "tests/test_tools.py", ".env", "a/__pycache__/x.pyc"):
        assert _ignored(patterns, leftover), leftover
    shipped = ["manifest.yaml", "main.py", "sift_api.py", "provider/sift.py", "tools/search.py"]
    shipped += ["README.md", "PRIVACY.md", "requirements.txt", ".env.example"]
    for kept in shipped:
        assert (PLUGIN / kept).exists() and not _ignored(patterns, kept), kept


def test_the_n8n_package_is_ready_to_publish() -> None:
    package = json.loads((NODE / "package.json").read_text(encoding="utf-8"))
    assert package["name"].startswith("n8n-nodes-")
    assert "n8n-community-node-package" in package["keywords"]
    assert package["license"] and package["author"]["name"]
    assert not package.get("dependencies"), "verified community nodes have no runtime deps"
    assert package["files"] == ["dist"]
    # The lockfile is committed, in step with package.json, and names no registry host
    # (npm resolves its entries against the registry the user configured).
    assert "package-lock.json" not in (NODE / ".gitignore").read_text(encoding="utf-8")
    lock = json.loads((NODE / "package-lock.json").read_text(encoding="utf-8"))
    top = lock["packages"][""]
    assert (top["name"], top["version"]) == (package["name"], package["version"])
    assert top["devDependencies"] == package["devDependencies"]
    assert '"resolved": "http' not in (NODE / "package-lock.json").read_text(encoding="utf-8")
