"""Maps the design card's root folders into the single import namespace `sift`.

nodes/, graphs/ and integrations/ sit at the repository root (DESIGN "Layout") and install
as sift.nodes, sift.graphs and sift.integrations; core/ is the package root `sift` itself
(types, protocols, errors, filters). No bare `nodes` or `core` module is ever installed.
pyproject.toml cannot list sub-packages of a remapped folder, so they are found here.

One part is C: the static embedder's piece table and pooling (`_pieces.c`: the embedder
2.4x-5.7x faster). It is optional: where it cannot be compiled (no C compiler), the
install goes on and the same vectors come from numpy, slower; importing the embedder
then warns, and `sift stats` says which path runs (`StaticEmbedder.native`). CI
requires it (SIFT_REQUIRE_NATIVE=1 in .ci/run).
"""

from __future__ import annotations

from setuptools import Extension, find_packages, setup

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

pieces = Extension(
    "sift.integrations.embedders._pieces",
    sources=["integrations/embedders/_pieces.c"],
    depends=["integrations/embedders/_pieces_table.h"],
    # Plain float adds in the source order: the vectors must stay bit for bit those of
    # the Python path (no -ffast-math, no reassociation).
    extra_compile_args=["-O3", "-std=c11", "-fno-fast-math"],
    optional=True,
)

setup(packages=packages, package_dir=ROOTS, ext_modules=[pieces])
