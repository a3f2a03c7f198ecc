#!/usr/bin/env bash
# Checks the Dify plugin with Dify's SDK (dify_plugin 0.10, Python 3.12) against a live
# `sift serve` on loopback: check.py loads the plugin as the plugin daemon does, runs the
# provider's credential check and invokes both tools. Not part of CI (it needs Python 3.12
# and installs dify_plugin, about a minute); its output of one run is committed as check.out.
#
#   integrations/dify-plugin/check.sh     # from the repository, with sift installed (the server extra)
#
# Environment: SIFT_DIFY_VENV (default ~/.cache/sift-dify), SIFT_DIFY_PYTHON (a Python
# 3.12 or later; default: the first that runs of python3.12 on PATH, uv's and pyenv's,
# see find_python.sh), SIFT_DIFY_PORT (8714).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
venv="${SIFT_DIFY_VENV:-$HOME/.cache/sift-dify}"
port="${SIFT_DIFY_PORT:-8714}"
key="sift-dify-check-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"
run="$(mktemp -d)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$run"
}
trap cleanup EXIT
say() { printf '== %s\n' "$*"; }

# A Python 3.12 that runs (a pyenv shim on PATH may not), or one line on how to get one.
python="$("$here/find_python.sh")" || exit 1
# A venv made by a Python since removed or replaced is made again.
if ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
    say "making a venv for the plugin with $("$python" --version)"
    "$python" -m venv --clear "$venv"
fi
"$venv/bin/pip" install -q -r "$here/requirements.txt" mypy 2>&1 | grep -v "^WARNING: Location" || true
say "$("$venv/bin/python" --version), dify_plugin $("$venv/bin/python" -c 'from importlib.metadata import version; print(version("dify_plugin"))')"

say "indexing a small collection 'docs' and starting sift serve on 127.0.0.1:$port"
python3 - "$run/docs.jsonl" <<'PY'
import json, sys
docs = [
    ("eiffel", "Eiffel Tower", "The Eiffel Tower is a wrought-iron lattice tower in Paris, "
     "France. It was designed by the engineering company of Gustave Eiffel and completed in 1889.", {}),
    ("gustave", "Gustave Eiffel", "Gustave Eiffel was a French civil engineer born in Dijon in "
     "1832. His company built the Eiffel Tower for the 1889 World's Fair in Paris.", {}),
    ("dijon", "Dijon", "Dijon is a city in eastern France, capital of the Cote-d'Or "
     "department, famous for its mustard.", {}),
    ("fuji", "富士山", "富士山は日本で最も高い山で、標高は3776メートルです。静岡県と山梨県にまたがります。", {}),
]
pages = ["Annual report 2025. " + " ".join(f"Overview item {i} of the year." for i in range(60)),
         "Revenue grew by 12 percent to 4.2 billion yen. "
         + " ".join(f"Segment {i} grew as planned." for i in range(60)),
         "売上高は前年比12%増の42億円でした。" + "".join(f"第{i}部門は計画どおりでした。" for i in range(60))]
starts = [0, len(pages[0]) + 1, len(pages[0]) + len(pages[1]) + 2]
docs.append(("report", "Annual report", "\n".join(pages), {
    "kind": "report", "page_starts": starts, "section_starts": [0, starts[1]],
    "section_titles": ["Overview", "Results > Revenue"]}))
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for doc_id, title, text, metadata in docs:
        row = {"id": doc_id, "title": title, "text": text, "metadata": metadata}
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
PY
sift index "$run/docs.jsonl" --store "$run/collections/docs" --embedder hash -q >/dev/null 2>&1
SIFT_SERVER_API_KEYS="$key" sift serve --port "$port" --store "$run/collections" \
    --log-level warning >"$run/serve.log" 2>&1 &
server=$!
python3 - "$port" <<'PY'
import sys, time, urllib.request
end = time.monotonic() + 120
while True:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/readyz") as answer:
            if answer.status == 200:
                break
    except OSError:
        pass
    if time.monotonic() > end:
        sys.exit("sift serve did not become ready")
    time.sleep(0.2)
PY
cd "$here"
# Its own types, checked under the plugin's Python (dify_plugin ships no type marker: its
# names are Any here).
say "mypy: $("$venv/bin/mypy" --python-version 3.12 --explicit-package-bases --ignore-missing-imports \
    --check-untyped-defs --disallow-untyped-defs sift_api.py main.py provider/sift.py tools/search.py \
    tools/read_document.py check.py | tail -1)"
"$venv/bin/python" check.py "http://127.0.0.1:$port" "$key"
