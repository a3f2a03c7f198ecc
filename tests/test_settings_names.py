"""Each settings class reads the environment under a prefix of its own, and no variable
is read by two classes (`SIFT_GRAPH_` once named both the entity graph's settings and the
served graph's policy)."""

from __future__ import annotations

import importlib
from pathlib import Path

from pydantic import AliasChoices
from pydantic_settings import BaseSettings

ROOT = Path(__file__).resolve().parents[1]
# setup.py's mapping: core/ is the package `sift`, the other root folders its subpackages.
_FOLDERS = {"core": "sift", "graphs": "sift.graphs", "nodes": "sift.nodes"}
_FOLDERS["integrations"] = "sift.integrations"


def _module(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    head, *rest = relative.parts
    return ".".join([_FOLDERS[head], *rest]).removesuffix(".__init__")


def _settings_classes() -> list[type[BaseSettings]]:
    for folder in _FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            if "(BaseSettings)" in path.read_text(encoding="utf-8"):
                importlib.import_module(_module(path))
    found: list[type[BaseSettings]] = []
    todo = list(BaseSettings.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__module__.startswith("sift."):
            found.append(cls)
    return found


def _variables(cls: type[BaseSettings]) -> set[str]:
    prefix = str(cls.model_config.get("env_prefix", "")).upper()
    names: set[str] = set()
    for name, field in cls.model_fields.items():
        alias = field.validation_alias
        if isinstance(alias, str):
            names.add(alias.upper())
        elif isinstance(alias, AliasChoices):
            names |= {str(choice).upper() for choice in alias.choices}
        else:
            names.add(prefix + name.upper())
    return names


def _related(a: type, b: type) -> bool:
    return issubclass(a, b) or issubclass(b, a)


def test_every_settings_class_has_its_own_prefix_and_variables() -> None:
    classes = _settings_classes()
    assert len(classes) >= 10  # the search found them (a guard against finding none)
    for i, a in enumerate(classes):
        for b in classes[i + 1 :]:
            if _related(a, b):
                continue  # a subclass reads its parent's variables, as it should
            pa, pb = (str(c.model_config.get("env_prefix", "")) for c in (a, b))
            assert pa != pb, f"{a.__name__} and {b.__name__} share the prefix {pa}"
            shared = _variables(a) & _variables(b)
            assert not shared, f"{a.__name__} and {b.__name__} both read {sorted(shared)}"
