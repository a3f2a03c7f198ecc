"""Maps the design card's root folders into the single import namespace `sift`.

nodes/, graphs/ and integrations/ sit at the repository root (DESIGN "Layout") and install
as sift.nodes, sift.graphs and sift.integrations; core/ is the package root `sift` itself
(types, protocols, errors, filters). No bare `nodes` or `core` module is ever installed.
pyproject.toml cannot list sub-packages of a remapped folder, so they are found here.
"""

from __future__ import annotations

from setuptools import find_packages, setup

ROOTS = {
    "sift": "core",
    "sift.nodes": "nodes",
    "sift.graphs": "graphs",
    "sift.integrations": "integrations",
}

packages: list[str] = []
for name, folder in ROOTS.items():
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=ROOTS)
