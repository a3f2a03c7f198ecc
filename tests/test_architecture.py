"""The layers' rule (docs/architecture.md), checked on every import statement of the tree.

Every module of the four root folders, the tests, the benchmarks, the scripts, the end-to-end
checks and the examples is parsed with `ast` (imports inside functions and under
TYPE_CHECKING included):

- a private module (`sift.a.b._x`, or a private name imported from a sift module) is
  imported only from inside the folder of its package, or by that package's own tests
  (tests/ mirrors the source folders: tests/integrations/http may test the internals of
  integrations/http, white-box); other packages, other tests, benchmarks, checks and
  examples use the public names its package re-exports;
- the package root (core/, installed as `sift`) imports no sift.nodes, sift.graphs or
  sift.integrations;
- inside the package root, the rooms build on each other one way (ROOMS): `sift.text`
  imports only `sift.errors`; the vocabulary (types, protocols, errors, filters, fusion,
  config, ...) may use `sift.text`; `sift.entities` and `sift.llm` build on both and not
  on each other; nothing below them imports them except for annotations (TYPE_CHECKING)
  and the deprecated aliases of moved modules;
- sift.nodes imports only the root package (and third-party libraries);
- sift.graphs imports no sift.integrations;
- the packages (and top-level modules) of sift.integrations import each other without a
  cycle: one of any two depends on the other, never both ways round;
- no two modules of the four root folders import each other, directly or around a
  circle (a package's `__init__` counts as its module; imports under TYPE_CHECKING,
  which never run, aside);
- nothing imports the bare folders (`import nodes`, `from core import ...`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Import name of each root folder (setup.py's mapping).
PACKAGES = {
    "sift.nodes": "nodes",
    "sift.graphs": "graphs",
    "sift.integrations": "integrations",
    "sift": "core",
}
SCANNED = (
    "core",
    "nodes",
    "graphs",
    "integrations",
    "tests",
    "benchmarks",
    "scripts",
    "checks",
    "examples",
)
BARE = frozenset({"core", "nodes", "graphs", "integrations"})
ADAPTER_LAYERS = {
    "core": ("sift.nodes", "sift.graphs", "sift.integrations"),
    "nodes": ("sift.graphs", "sift.integrations"),
    "graphs": ("sift.integrations",),
}

# The rooms of the package root (core/) and the sift modules each may import at run time
# besides its own; `sift._lazy` (the lazy-name helper) serves every room. Every module of
# core/ that is not in a room's folder is vocabulary.
VOCABULARY = "vocabulary"
ROOMS: dict[str, tuple[str, ...]] = {
    "sift.text": ("sift.errors",),
    VOCABULARY: ("sift", "sift.text"),  # `sift` stands for every vocabulary module
    "sift.entities": ("sift", "sift.text"),
    "sift.llm": ("sift", "sift.text"),
}
# Old names of moved modules, kept one release: each imports its new home.
DEPRECATED_ALIASES = frozenset(
    {"sift.analysis", "sift.tokens", "sift.languages", "sift.entity_graph"}
)


@dataclass(frozen=True)
class Import:
    file: Path  # relative to the tree's root
    line: int
    module: str  # absolute module named by the statement
    names: tuple[str, ...] = ()  # names imported from `module` that are not modules

    def __str__(self) -> str:
        if self.names:
            return f"{self.file}:{self.line}: from {self.module} import {', '.join(self.names)}"
        return f"{self.file}:{self.line}: import {self.module}"


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def module_name(relative: Path) -> str:
    """The import name of a source file: `core/x.py` is `sift.x`, `tests/a.py` `tests.a`."""
    parts = list(relative.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    folder_to_package = {folder: name for name, folder in PACKAGES.items()}
    if parts and parts[0] in folder_to_package:
        parts = [*folder_to_package[parts[0]].split("."), *parts[1:]]
    return ".".join(parts)


def package_folder(root: Path, module: str) -> Path | None:
    """The folder of a sift package, or the file of a sift module; None if not in the tree."""
    for name, folder in PACKAGES.items():
        if module == name or module.startswith(name + "."):
            rest = module[len(name) :].lstrip(".").split(".") if module != name else []
            base = root.joinpath(folder, *rest)
            if base.is_dir():
                return base
            if base.with_suffix(".py").is_file():
                return base.with_suffix(".py")
            return None
    return None


def _resolve(relative_module: str | None, level: int, importer: str, is_package: bool) -> str:
    if level == 0:
        return relative_module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, relative_module] if relative_module else base)


def imports_of(root: Path, path: Path) -> list[Import]:
    relative = path.relative_to(root)
    importer = module_name(relative)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(relative, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node.module, node.level, importer, path.name == "__init__.py")
            names: list[str] = []
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                if alias.name != "*" and package_folder(root, sub) is not None:
                    found.append(Import(relative, node.lineno, sub))
                else:
                    names.append(alias.name)
            if names:
                found.append(Import(relative, node.lineno, module, tuple(names)))
    return found


def source_files(root: Path) -> list[Path]:
    files: list[Path] = []
    for folder in SCANNED:
        files += [
            p
            for p in (root / folder).rglob("*.py")
            if "__pycache__" not in p.parts and "node_modules" not in p.parts
        ]
    return sorted(files)


def _inside(file: Path, folder: Path) -> bool:
    return file == folder or folder in file.parents


def private_crossings(root: Path, imports: list[Import]) -> list[Import]:
    """Imports of a private module or name from outside the folder of its package."""
    out: list[Import] = []
    for item in imports:
        if not item.module.startswith("sift"):
            continue
        parts = item.module.split(".")
        if any(_is_private(name) for name in item.names):
            # A private name belongs to the package that holds its module.
            source = package_folder(root, item.module)
            owner = source if source is None or source.is_dir() else source.parent
        else:
            first = next((i for i, part in enumerate(parts) if _is_private(part)), None)
            if first is None:
                continue
            owner = package_folder(root, ".".join(parts[:first]))
        if owner is None or not (
            _inside(root / item.file, owner) or _inside(root / item.file, _tests_of(root, owner))
        ):
            out.append(item)
    return out


def _tests_of(root: Path, owner: Path) -> Path:
    """The tests folder that mirrors a package folder (tests/ mirrors the source tree)."""
    folder = owner if owner.is_dir() else owner.parent
    return root / "tests" / folder.relative_to(root)


def layer_crossings(imports: list[Import], folder: str) -> list[Import]:
    """Imports from `folder` of a sift layer it must not see."""
    banned = ADAPTER_LAYERS[folder]
    return [
        item
        for item in imports
        if item.file.parts[0] == folder
        and any(item.module == b or item.module.startswith(b + ".") for b in banned)
    ]


def _room(module: str) -> str | None:
    """The room of the package root a sift module is in; None outside the root."""
    parts = module.split(".")
    if parts[0] != "sift" or parts[1:2] in (["nodes"], ["graphs"], ["integrations"]):
        return None
    if len(parts) > 1 and f"sift.{parts[1]}" in ROOMS:
        return f"sift.{parts[1]}"
    return VOCABULARY


def room_crossings(root: Path, imports: list[Import]) -> list[Import]:
    """Imports, by modules of core/, of a room their own room does not build on (those
    under TYPE_CHECKING and those of the deprecated aliases aside)."""
    out: list[Import] = []
    skipped: dict[Path, set[int]] = {}
    for item in imports:
        if item.file.parts[0] != "core" or not item.module.startswith("sift"):
            continue
        importer = module_name(item.file)
        source, target = _room(importer), _room(item.module)
        if source is None or target is None or source == target:
            continue
        if importer in DEPRECATED_ALIASES or item.module == "sift._lazy":
            continue
        allowed = ROOMS[source]
        named = "sift" if target == VOCABULARY else target
        if target == VOCABULARY and source == "sift.text":
            named = item.module
        if named in allowed:
            continue
        if item.file not in skipped:
            text = (root / item.file).read_text(encoding="utf-8")
            skipped[item.file] = _type_only_lines(ast.parse(text))
        if item.line not in skipped[item.file]:
            out.append(item)
    return out


def bare_imports(imports: list[Import]) -> list[Import]:
    return [item for item in imports if item.module.split(".")[0] in BARE]


def _integration_unit(relative: Path) -> str | None:
    """The package (or top-level module) of sift.integrations a file belongs to."""
    parts = relative.with_suffix("").parts
    if parts[0] != "integrations" or parts[1:] in ((), ("__init__",)):
        return None
    return parts[1]


def integration_cycles(imports: list[Import]) -> list[list[str]]:
    """The cycles among sift.integrations' packages, each as the packages around it (the
    first again at the end), from every import statement (in functions too)."""
    edges: dict[str, set[str]] = {}
    for item in imports:
        source = _integration_unit(item.file)
        parts = item.module.split(".")
        if source is None or parts[:2] != ["sift", "integrations"] or len(parts) < 3:
            continue
        if parts[2] != source:
            edges.setdefault(source, set()).add(parts[2])
    cycles: list[list[str]] = []
    done: set[str] = set()

    def visit(unit: str, path: list[str]) -> None:
        for target in sorted(edges.get(unit, ())):
            if target in path:
                ring = path[path.index(target) :]
                start = ring.index(min(ring))  # each cycle once, from its first name
                cycle = [*ring[start:], *ring[:start], min(ring)]
                if cycle not in cycles:
                    cycles.append(cycle)
            elif target not in done:
                visit(target, [*path, target])
        done.add(unit)

    for unit in sorted(edges):
        if unit not in done:
            visit(unit, [unit])
    return cycles


def _type_only_lines(tree: ast.AST) -> set[int]:
    """The lines under `if TYPE_CHECKING:` (imports for annotations only)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and (
            getattr(test, "id", None) == "TYPE_CHECKING"
            or getattr(test, "attr", None) == "TYPE_CHECKING"
        ):
            for inner in node.body:
                lines |= set(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _module_of(root: Path, name: str) -> str | None:
    """The nearest module of the tree that `name` names (a package: its `__init__`; a
    compiled submodule counts as one), or None outside the tree."""
    while name:
        found = package_folder(root, name)
        parent, _, leaf = name.rpartition(".")
        folder = package_folder(root, parent) if parent else None
        compiled = (
            folder is not None
            and folder.is_dir()
            and ((folder / f"{leaf}.c").is_file() or any(folder.glob(f"{leaf}.*.so")))
        )
        if found is not None or compiled:
            return name
        name = parent
    return None


def module_circles(root: Path) -> list[list[str]]:
    """The sets of modules of the root folders that import each other around a circle
    (strongly connected, by every import that runs, in functions too), each sorted."""
    edges: dict[str, set[str]] = {}
    for path in source_files(root):
        relative = path.relative_to(root)
        if relative.parts[0] not in BARE:
            continue
        importer = module_name(relative)
        skipped = _type_only_lines(ast.parse(path.read_text(encoding="utf-8")))
        for item in imports_of(root, path):
            if not item.module.startswith("sift") or item.line in skipped:
                continue
            # `from package import _compiled`: the compiled submodule, not the package.
            named = [f"{item.module}.{n}" for n in item.names]
            targets = [n for n in named if _module_of(root, n) == n] or [item.module]
            for target in filter(None, (_module_of(root, t) for t in targets)):
                if target != importer:
                    edges.setdefault(importer, set()).add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(circles)


@cache
def tree_imports() -> list[Import]:
    return [item for path in source_files(ROOT) for item in imports_of(ROOT, path)]


def _report(found: list[Import], rule: str) -> str:
    return f"{len(found)} import(s) break the rule: {rule}\n" + "\n".join(map(str, found))


# --------------------------------------------------------------------------- the rules


def test_the_tree_is_scanned() -> None:
    files = {str(item.file) for item in tree_imports()}
    for expected in ("core/__init__.py", "nodes/__init__.py", "graphs/_api.py"):
        assert expected in files
    assert any(f.startswith("tests/") for f in files)


def test_no_private_import_crosses_a_package() -> None:
    found = private_crossings(ROOT, tree_imports())
    assert not found, _report(
        found, "a private module or name is imported only inside its own package"
    )


@pytest.mark.parametrize("folder", ["core", "nodes", "graphs"])
def test_each_layer_imports_only_the_layers_above_it(folder: str) -> None:
    found = layer_crossings(tree_imports(), folder)
    banned = ", ".join(ADAPTER_LAYERS[folder])
    assert not found, _report(found, f"{folder}/ never imports {banned}")


def test_the_rooms_of_the_package_root_build_one_way() -> None:
    found = room_crossings(ROOT, tree_imports())
    assert not found, _report(found, f"the rooms of core/ import only what ROOMS says: {ROOMS}")


def test_no_cycle_among_the_integrations() -> None:
    found = integration_cycles(tree_imports())
    assert not found, "sift.integrations' packages import each other in a cycle: " + "; ".join(
        " -> ".join(cycle) for cycle in found
    )


def test_no_import_circle_between_modules() -> None:
    found = module_circles(ROOT)
    assert not found, "modules import each other around a circle: " + "; ".join(
        " <-> ".join(circle) for circle in found
    )


def _names_used_from(root: Path, package: str, outside: tuple[Path, ...]) -> set[str]:
    """The names of `package` that files not under `outside` import (`from package import
    name`) or read (`from sift import nodes`, then `nodes.name`)."""
    parent, _, leaf = package.rpartition(".")
    used: set[str] = set()
    for path in source_files(root):
        if any(_inside(path, folder) for folder in outside):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == package:
                used.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module == parent:
                aliases |= {a.asname or a.name for a in node.names if a.name == leaf}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                used.add(node.attr)
    return used


def test_sift_nodes_exports_what_other_packages_use() -> None:
    import sift.nodes

    # The package's own tests may import its private modules instead.
    used = _names_used_from(ROOT, "sift.nodes", (ROOT / "nodes", ROOT / "tests" / "nodes"))
    assert set(sift.nodes.__all__) == used


def test_no_bare_folder_is_imported() -> None:
    found = bare_imports(tree_imports())
    assert not found, _report(found, "import sift.nodes, never the bare folder `nodes`")


# --------------------------------------------------------------------------- the checker


def _write(root: Path, files: dict[str, str]) -> list[Import]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return [item for path in source_files(root) for item in imports_of(root, path)]


def test_the_checker_finds_cycles_among_the_integrations(tmp_path: Path) -> None:
    imports = _write(
        tmp_path,
        {
            "integrations/__init__.py": "from sift.integrations import d\n",
            "integrations/a/__init__.py": "from sift.integrations.c import x\n",
            "integrations/c/_x.py": "def f():\n    from sift.integrations.b._y import z\n",
            "integrations/b/_y.py": "import sift.integrations.c\nimport sift.integrations.d\n",
            "integrations/d.py": "from sift.graphs import g\nfrom sift.integrations.a import w\n",
            "integrations/e/__init__.py": "from sift.integrations.e._z import q\n",
        },
    )
    # a -> c -> b -> c and b -> d -> a: two cycles, each reported once from its first name;
    # a package importing itself and the package root importing d are not cycles.
    assert sorted(integration_cycles(imports)) == [["a", "c", "b", "d", "a"], ["b", "c", "b"]]
    acyclic = [item for item in imports if str(item.file) != "integrations/d.py"]
    assert integration_cycles(acyclic) == [["b", "c", "b"]]


def test_the_checker_finds_circles_between_modules(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "core/__init__.py": "",
            "core/a.py": "from sift.b import x\n",
            "core/b.py": "def f():\n    from sift import c\n",
            "core/c.py": "import sift.a\n",
            "core/d.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sift.e import y\n"
            ),
            "core/e.py": "from sift.d import z\n",
        },
    )
    # a -> b -> c -> a (one import inside a function) is a circle; d <-> e is not: d's
    # import of e runs only for the type checker.
    assert module_circles(tmp_path) == [["sift.a", "sift.b", "sift.c"]]


def test_the_checker_finds_crossings_between_rooms(tmp_path: Path) -> None:
    imports = _write(
        tmp_path,
        {
            "core/__init__.py": "from sift._lazy import lazy_names\n",
            "core/types.py": "from sift.text import has_cjk\n",
            "core/protocols.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from sift.entities import WalkResult\n",
            "core/config.py": "def f():\n    from sift.llm import task_prompt\n",
            "core/analysis.py": "from sift.text import Analyzer\n",
            "core/entity_graph.py": "from sift.entities import EntityGraph\n",
            "core/text/__init__.py": "from sift._lazy import lazy_names\n",
            "core/text/_analysis.py": "from sift.errors import CorpusError\n"
            "from sift.types import Chunk\n",
            "core/entities/_graph.py": "from sift.fusion import rrf_scores\n"
            "from sift.text import has_cjk\nfrom sift.llm import block\n",
            "core/llm/_prompt.py": "from sift.config import HarnessConfig\n"
            "from sift.entities import graph_row\n",
        },
    )
    # Annotations (protocols) and the deprecated aliases may name a higher room;
    # sift.text may import errors only; entities and llm do not import each other.
    assert {str(i) for i in room_crossings(tmp_path, imports)} == {
        "core/config.py:2: from sift.llm import task_prompt",
        "core/text/_analysis.py:2: from sift.types import Chunk",
        "core/entities/_graph.py:3: from sift.llm import block",
        "core/llm/_prompt.py:2: from sift.entities import graph_row",
    }


def test_the_checker_finds_each_kind_of_crossing(tmp_path: Path) -> None:
    imports = _write(
        tmp_path,
        {
            "core/__init__.py": "",
            "core/_stores.py": "def f():\n    from sift.integrations.x import y\n",
            "nodes/__init__.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from sift.graphs import state\n",
            "nodes/_steps.py": "from ._tools import run\nfrom . import _budget\n",
            "nodes/_tools.py": "def run(): ...\n",
            "nodes/_budget.py": "",
            "graphs/__init__.py": "from sift.nodes._steps import collect\n"
            "from sift.nodes import _budget\nimport integrations\n",
            "graphs/state.py": "from sift.nodes.api import _hidden\n"
            "from sift.nodes.api import shown\n",
            "nodes/api.py": "_hidden = shown = 1\n",
            "integrations/__init__.py": "from sift.graphs.state import x\n",
            "integrations/x.py": "import sift.integrations._y\nfrom sift import _stores\n",
            "integrations/_y.py": "",
            "tests/test_a.py": "from sift.integrations._y import z\nfrom nodes import api\n",
        },
    )
    crossings = {str(item) for item in private_crossings(tmp_path, imports)}
    assert crossings == {
        "graphs/__init__.py:1: from sift.nodes._steps import collect",
        "graphs/__init__.py:2: import sift.nodes._budget",
        "graphs/state.py:1: from sift.nodes.api import _hidden",
        "integrations/x.py:2: import sift._stores",
        "tests/test_a.py:1: from sift.integrations._y import z",
    }
    assert [str(i) for i in layer_crossings(imports, "core")] == [
        "core/_stores.py:2: from sift.integrations.x import y"
    ]
    assert [str(i) for i in layer_crossings(imports, "nodes")] == [
        "nodes/__init__.py:3: import sift.graphs.state"
    ]
    assert [str(i) for i in layer_crossings(imports, "graphs")] == []
    assert {str(i) for i in bare_imports(imports)} == {
        "graphs/__init__.py:3: import integrations",
        "tests/test_a.py:2: from nodes import api",
    }


def test_every_name_imported_from_sift_exists() -> None:
    """A module moved or a name dropped breaks the benchmarks, checks and examples too,
    which no other test imports: every `from sift... import name` of the tree resolves
    (to an attribute, or a submodule)."""
    import importlib

    missing: list[str] = []
    for path in source_files(ROOT):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            if node.module.split(".")[0] != "sift":
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            try:
                module = importlib.import_module(node.module)
            except ModuleNotFoundError as exc:
                if (exc.name or "").split(".")[0] == "sift":
                    missing.append(f"{where}: no module {exc.name}")
                continue  # an optional extra that is not installed
            for alias in node.names:
                if alias.name == "*" or hasattr(module, alias.name):
                    continue
                if package_folder(ROOT, f"{node.module}.{alias.name}") is None:
                    missing.append(f"{where}: {node.module} has no {alias.name}")
    assert not missing, "\n".join(missing)
