#!/usr/bin/env bash
# Checks the Dify plugin (integrations/dify-plugin/) with Dify's SDK (dify_plugin 0.10,
# Python 3.12) against a live `sift serve` on loopback: dify_plugin_sdk.py loads the
# plugin as the plugin daemon does, runs the provider's credential check and invokes both
# tools. Not part of CI (it needs Python 3.12 and installs dify_plugin, about a minute);
# its output of one run is committed as dify_plugin.out.
#
#   checks/dify_plugin.sh       # from the repository, with sift installed (the server extra)
#
# Environment: SIFT_DIFY_VENV (default ~/.cache/sift-dify), SIFT_DIFY_PYTHON (a Python
# 3.12 or later; default: the first that runs of python3.12 on PATH, uv's and pyenv's,
# see find_python.sh), SIFT_DIFY_PORT (8714), SIFT_CHECK_KEEP.
. "$(dirname "$0")/_common.sh"

plugin="$root/integrations/dify-plugin"
venv="${SIFT_DIFY_VENV:-$HOME/.cache/sift-dify}"
port="${SIFT_DIFY_PORT:-8714}"
key="sift-dify-check-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"

# A Python 3.12 that runs (a pyenv shim on PATH may not), or one line on how to get one.
python="$("$checks/find_python.sh")" || exit 1
# A venv made by a Python since removed or replaced is made again.
if ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
    say "making a venv for the plugin with $("$python" --version)"
    "$python" -m venv --clear "$venv"
fi
"$venv/bin/pip" install -q -r "$plugin/requirements.txt" mypy 2>&1 | grep -v "^WARNING: Location" || true
say "$("$venv/bin/python" --version), dify_plugin $("$venv/bin/python" -c 'from importlib.metadata import version; print(version("dify_plugin"))')"

start_sift "$port" "$key"
# The plugin's folder is the working folder and importable, as under the plugin daemon.
cd "$plugin"
export PYTHONPATH="$plugin"
# Its own types, checked under the plugin's Python (dify_plugin ships no type marker: its
# names are Any here).
say "mypy: $("$venv/bin/mypy" --python-version 3.12 --explicit-package-bases --ignore-missing-imports \
    --check-untyped-defs --disallow-untyped-defs sift_api.py main.py provider/sift.py tools/search.py \
    tools/read_document.py "$checks/dify_plugin_sdk.py" | tail -1)"
"$venv/bin/python" "$checks/dify_plugin_sdk.py" "http://127.0.0.1:$port" "$key"
