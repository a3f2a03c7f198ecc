#!/usr/bin/env bash
# Runs every n8n example in examples/n8n/ with the real n8n engine (headless; the version
# pinned in _common.sh) against a live `sift serve` on loopback. Not part of CI: it
# installs Node 24 and n8n from the npm registry (a few minutes and ~1 GB the first time).
# Its output of one run is committed beside it as n8n_examples.out.
#
#   checks/n8n_examples.sh      # from the repository, with sift installed (the server extra)
#
# Environment: SIFT_N8N_DIR (where Node and n8n go; default ~/.cache/sift-n8n),
# SIFT_N8N_PORT (sift's port; default 8711), SIFT_CHECK_KEEP (keep the scratch folder).
. "$(dirname "$0")/_common.sh"

examples="$root/examples/n8n"
port="${SIFT_N8N_PORT:-8711}"
key="sift-n8n-check-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"

install_n8n
start_sift "$port" "$key"

# ------------------------------------------------------------------ n8n: import as shipped
n8n_environment "sift-n8n-check"
# A running n8n applies publications through its outbox; `n8n execute` runs no such loop,
# so here the published version is read the direct way (what publish:workflow writes).
export N8N_USE_WORKFLOW_PUBLICATION_SERVICE=false

# The workflows as shipped, but pointing at this server (the one value a user edits).
python3 - "$examples" "$run" "$port" <<'EOF'
import json, sys
from pathlib import Path
examples, run, port = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
for path in examples.glob("sift-*.json"):
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
n8n_check siftRetrieval001 'items and all(0 <= i["score"] <= 1 and i["content"] for i in items) and any("Dijon" in i["content"] for i in items)'
n8n_check siftSearch000001 'items and all(i["doc_id"] and i["text"] for i in items) and any(i["doc_id"] == "gustave" for i in items)'
n8n_check siftRetrieverCall 'items and all(set(i) == {"content", "source"} for i in items) and any(i["source"] == "gustave" for i in items)'
if [ "$status" = 0 ]; then say "every example ran against sift"; else say "some examples failed"; fi
exit "$status"
