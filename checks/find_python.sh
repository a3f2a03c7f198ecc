#!/usr/bin/env bash
# Prints the path of a Python 3.12 or later that runs, for Dify's plugin SDK (dify_plugin
# needs 3.12): SIFT_DIFY_PYTHON when set, else python3.12 / python3.13 / python3.14 on
# PATH, uv's managed Pythons (`uv python find`, then its install folder), pyenv's
# versions, python3. Each is run before it is chosen: a pyenv shim for a version that is
# not selected, or a link to a removed Python, is on PATH yet runs nothing. Finding none,
# it says so in one line on stderr, with how to get one, and exits 1.
#
#   checks/find_python.sh      # used by dify_plugin.sh
set -uo pipefail

runs() {
    [ -n "$1" ] && "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1
}

if [ -n "${SIFT_DIFY_PYTHON:-}" ]; then
    if runs "$SIFT_DIFY_PYTHON"; then
        printf '%s\n' "$SIFT_DIFY_PYTHON"
        exit 0
    fi
    echo "SIFT_DIFY_PYTHON=$SIFT_DIFY_PYTHON does not run a Python 3.12 or later (Dify's plugin SDK needs 3.12): point it at one, or unset it to look for one" >&2
    exit 1
fi

candidates=()
for name in python3.12 python3.13 python3.14; do
    found="$(command -v "$name" 2>/dev/null)" && candidates+=("$found")
done
if command -v uv >/dev/null 2>&1; then
    # Only installed ones: `uv python find` downloads nothing.
    found="$(uv python find '>=3.12' 2>/dev/null)" && candidates+=("$found")
fi
uv_pythons="${UV_PYTHON_INSTALL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/uv/python}"
pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
shopt -s nullglob
candidates+=("$uv_pythons"/cpython-3.1[2-9]*/bin/python3 "$pyenv_root"/versions/3.1[2-9]*/bin/python)
shopt -u nullglob
found="$(command -v python3 2>/dev/null)" && candidates+=("$found")

for python in "${candidates[@]}"; do
    if runs "$python"; then
        printf '%s\n' "$python"
        exit 0
    fi
done
echo "no Python 3.12 or later that runs was found (Dify's plugin SDK needs 3.12; looked at python3.12-3.14 and python3 on PATH, uv's and pyenv's): install one (uv python install 3.12, or pyenv install 3.12) or set SIFT_DIFY_PYTHON=/path/to/python3.12" >&2
exit 1
