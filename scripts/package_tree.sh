#!/usr/bin/env bash
# Builds, under DIR, the package `sift` as setup.py assembles it from the root folders
# (core/ is `sift`; nodes/, graphs/ and integrations/ are sift.nodes, sift.graphs and
# sift.integrations), as symlinks into this checkout, so edits show at once. Tools that
# scan folders instead of importing (mypy, structure drawings, an IDE's analysis path)
# follow the package there. Usage: scripts/package_tree.sh DIR  (DIR/sift is made anew)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:?usage: scripts/package_tree.sh DIR}"
rm -rf "$target/sift"
mkdir -p "$target/sift"
for item in "$root"/core/*; do
    ln -s "$item" "$target/sift/"
done
for sub in nodes graphs integrations; do
    ln -s "$root/$sub" "$target/sift/$sub"
done
