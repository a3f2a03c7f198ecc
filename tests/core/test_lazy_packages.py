"""The packages whose public names load on first use (sift, sift.text, sift.entities;
`sift._lazy`) list each name three times: `__all__`, where it lives (`_ORIGINS`) and the
`if TYPE_CHECKING:` imports type checkers read. The three agree, and each name is the
object of the module it is said to live in."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAZY = {"sift": "core/__init__.py", "sift.text": "core/text/__init__.py"}
LAZY["sift.entities"] = "core/entities/__init__.py"


def _defined_here(source: str) -> set[str]:
    """Names the package's own source defines at its top level (`__version__`, ...)."""
    out: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _type_checking_imports(source: str) -> dict[str, set[str]]:
    """module -> names imported under `if TYPE_CHECKING:`."""
    out: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.ImportFrom) and item.module:
                    names = {a.asname or a.name for a in item.names}
                    out.setdefault(item.module, set()).update(names)
    return out


@pytest.mark.parametrize("package", sorted(LAZY))
def test_the_three_lists_of_a_lazy_package_agree(package: str) -> None:
    module = importlib.import_module(package)
    origins: dict[str, tuple[str, ...]] = module._ORIGINS
    listed = {name for names in origins.values() for name in names}
    assert len(listed) == sum(len(names) for names in origins.values()), "a name twice"
    source = (ROOT / LAZY[package]).read_text(encoding="utf-8")
    # Every public name is either loaded on first use or defined by the package itself.
    assert set(module.__all__) - listed <= _defined_here(source)
    assert listed <= set(module.__all__)
    checked = _type_checking_imports(source)
    assert {m: set(n) for m, n in origins.items()} == checked
    for where, names in origins.items():
        home = importlib.import_module(where)
        for name in names:
            assert getattr(module, name) is getattr(home, name), f"{package}.{name}"
    assert set(module.__all__) <= set(dir(module))
