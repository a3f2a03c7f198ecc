#!/usr/bin/env bash
# Builds and lints the n8n-nodes-sift package (integrations/n8n-node/), then runs it in the
# real n8n (headless; the Node and n8n versions pinned in _common.sh) against a live
# `sift serve` on loopback: searches in English and Japanese, questions the collection
# does not answer (items flagged `not_found`), a single-shot search, a read, a grep, a
# wrong key, an unknown collection, and an AI Agent whose chat model (a loopback
# OpenAI-compatible server with scripted replies, n8n_node/scripted_model.py) calls the
# Sift tool and gets its output. Not part of CI: the first run installs Node 24, n8n and
# @n8n/node-cli from the npm registry (about 12 minutes, 1.5 GB). Its output of one run is
# committed beside it as n8n_node.out.
#
#   checks/n8n_node.sh      # from the repository, with sift installed (the server extra)
#
# Environment: SIFT_N8N_DIR (where Node and n8n go; default ~/.cache/sift-n8n),
# SIFT_N8N_PORT (sift's port; default 8712; the scripted model and the stand-in for a
# warming or stalled server, n8n_node/unready_sift.py, use the next two), SIFT_CHECK_KEEP.
. "$(dirname "$0")/_common.sh"

package="$root/integrations/n8n-node"
examples="$root/examples/n8n"
port="${SIFT_N8N_PORT:-8712}"
model_port=$((port + 1))
unready_port=$((port + 2))
key="sift-node-check-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"

install_n8n

# ------------------------------------------------------------------ build and lint
say "building and linting n8n-nodes-sift with @n8n/node-cli"
# eslint-plugin-n8n-nodes-base's preinstall script insists on pnpm: scripts off.
(cd "$package" && quiet npm install --no-audit --no-fund --ignore-scripts)
(cd "$package" && quiet npx n8n-node build)
(cd "$package" && npx n8n-node lint >"$run/lint.log" 2>&1) || {
    plain "$run/lint.log"; say "FAIL n8n-node lint"; exit 1
}
say "n8n-node lint: no problems"
node -e '
const p = require(process.argv[1]);
const deps = Object.keys(p.dependencies || {});
if (deps.length) { console.error("runtime dependencies:", deps); process.exit(1); }
console.log("== no runtime dependencies; peer:", Object.keys(p.peerDependencies).join(", "));
' "$package/package.json"

# ------------------------------------------------------------------ sift serve on loopback
start_sift "$port" "$key"
question="Where was the engineer whose company built the Eiffel Tower born?"
background python3 "$checks/n8n_node/scripted_model.py" "$model_port" "$run/model.jsonl" "$question"
background python3 "$checks/n8n_node/unready_sift.py" "$unready_port" "http://127.0.0.1:$port" \
    "$run/unready.jsonl"
wait_for --any "http://127.0.0.1:$model_port/v1/models" "http://127.0.0.1:$unready_port/stalled/"

# ------------------------------------------------------------------ n8n: the workflows
n8n_environment "sift-node-check"
# The built package, as n8n loads a local node: its node types are then CUSTOM.sift and
# CUSTOM.siftTool (installed from npm they are n8n-nodes-sift.sift and .siftTool).
export N8N_CUSTOM_EXTENSIONS="$package/dist"

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
n8n_check siftNodeSearch01 "items and $place and items[0]['doc_id'] == 'gustave' and any(i['found_by'] for i in items) and all(i['not_found'] is None for i in items)"
n8n_check siftNodeJapanese "items and $place and items[0]['doc_id'] == 'fuji' and '3776' in items[0]['text']"
# A question the collection does not answer: the nearest text, each item saying so.
n8n_check siftNodeNotFound "items and all(i['not_found'] == ['--frobnicate-depth'] for i in items)"
n8n_check siftNodeNotFndJa "items and all(i['not_found'] == [] for i in items)"
n8n_check siftNodeSingle01 "items and $place and items[0]['doc_id'] == 'report' and items[0]['page'] is not None"
n8n_check siftNodeRead0001 "len(items) > 3 and [i['index'] for i in items] == list(range(len(items))) and {i['page'] for i in items} == {1, 2, 3} and items[0]['section'] == 'Overview' and items[-1]['section'] == 'Results > Revenue'"
n8n_check siftNodeGrep0001 "len(items) == 2 and all(i['doc_id'] == 'report' and i['section'] == 'Results > Revenue' and i['page'] in (2, 3) for i in items)"
n8n_check siftNodeWrongKey "len(items) == 1 and 'sift refused the API key' in items[0]['error']"
fails siftNodeNoColl01 "Unknown collection: collection 'nowhere'"
n8n_check siftNodeWarming1 "items and items[0]['doc_id'] == 'gustave'"
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
n8n_check siftNodeAgent001 "len(items) == 1 and 'gustave' in items[0]['output']"
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
