#!/usr/bin/env bash
# Regenerates benchmarks/results/eval/<dataset>/ for the shared dev sets (the three English
# multi-hop sets and the Japanese JSQuAD set) with every
# no-model mode (bm25, dense, hybrid single-shot at k=30; agentic with the heuristic
# planner), then the cross-dataset headline table in benchmarks/results/eval/README.md.
# Extra arguments go to every `sift eval` call (e.g. --limit 20 for a quick look).
# Run from anywhere: bash scripts/run_eval.sh
#
# SIFT_EVAL_CLEAN=1 runs the code of the last commit (HEAD) instead of the working tree:
# a temporary `git worktree` is put first on PYTHONPATH in the installed layout, so that
# figures committed from a checkout where others are mid-edit belong to one commit.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
data="../shared/benchmarks"
results="benchmarks/results/eval"
logs="$(mktemp -d)"
cleanup() { rm -rf "$logs"; }
if [ "${SIFT_EVAL_CLEAN:-0}" = "1" ]; then
  tree="$logs/tree"
  git worktree add -q --detach "$tree" HEAD
  cleanup() { git worktree remove --force "$tree" 2>/dev/null || true; rm -rf "$logs"; }
  # The installed layout: core/ is the package `sift`, the other folders its children.
  mkdir -p "$logs/pkg/sift"
  for f in "$tree"/core/*; do ln -s "$f" "$logs/pkg/sift/"; done
  for d in nodes graphs integrations; do ln -s "$tree/$d" "$logs/pkg/sift/$d"; done
  export PYTHONPATH="$logs/pkg${PYTHONPATH:+:$PYTHONPATH}"
  echo "running the code of $(git rev-parse --short HEAD) from a clean worktree" >&2
fi
trap cleanup EXIT
run() {
  local ds="$1"
  shift
  sift eval --dataset "$data/$ds" --out "$results/$ds" --quiet "$@" >"$logs/$ds.log" 2>&1
}
started=$(date +%s)
# Two lanes of about the same size (479 + 115 vs 274 + 400 questions), one per core: the
# harness is mostly Python, so one process alone cannot keep both cores busy.
(run hotpotqa "${@}" && run 2wikimultihopqa "${@}") & lane=$!
status=0
run musique "${@}" && run jsquad "${@}" || status=$?
wait "$lane" || status=$?
elapsed=$(( $(date +%s) - started ))
cat "$logs"/hotpotqa.log "$logs"/musique.log "$logs"/2wikimultihopqa.log "$logs"/jsquad.log \
  2>/dev/null || true
if [ "$status" -ne 0 ]; then echo "sift eval failed (exit $status)" >&2; exit "$status"; fi
python - "$results" "$elapsed" "$*" <<'PY'
import os
import sys
from pathlib import Path
from sift.integrations.eval import EvalReport, headline_markdown

results, elapsed, extra = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
reports = [
    EvalReport.model_validate_json((results / ds / "report.json").read_text())
    for ds in ("hotpotqa", "musique", "2wikimultihopqa", "jsquad")
]
machine = reports[0].machine
cpu = sum(r.cpu_s for r in reports)
text = [
    "# sift eval: the shared dev sets (HotpotQA, MuSiQue, 2WikiMultihopQA; JSQuAD, Japanese)",
    "",
    "Regenerate with `"
    + ("SIFT_EVAL_CLEAN=1 " if os.environ.get("SIFT_EVAL_CLEAN") == "1" else "")
    + "bash scripts/run_eval.sh" + (f" {extra}" if extra else "") + "`"
    f" (all four datasets, every no-model mode: {elapsed} s wall in total, indexing"
    f" included, {cpu:.0f} s CPU; load average at the end"
    f" {machine.get('load_average_1_5_15')}).",
    "",
    f"Machine: {machine.get('cpu_model', machine.get('processor'))}, "
    f"{machine.get('usable_cpus')} usable CPUs, Python {machine.get('python')}, "
    f"{machine.get('platform')}; sift commit {machine.get('git_commit', 'unknown')} "
    "(`-dirty`: the working tree differed from it); "
    f"{reports[0].started_at}.",
    "",
    headline_markdown(reports),
    "Per dataset: `<dataset>/report.md` (every figure), `report.json` (with the exact "
    "configuration), `per_question.jsonl` (error analysis), `recall_at_k.png`, "
    "`context_tokens_per_turn.png`.",
    "",
]
(results / "README.md").write_text("\n".join(text), encoding="utf-8")
print(f"wrote {results / 'README.md'} ({elapsed} s)")

# docs/eval.md (the README section) carries the compact table between two markers.
doc = Path("docs/eval.md")
start, end = "<!-- headline:start -->", "<!-- headline:end -->"
if doc.is_file() and start in (body := doc.read_text(encoding="utf-8")) and end in body:
    before, rest = body.split(start, 1)
    after = rest.split(end, 1)[1]
    table = headline_markdown(reports, compact=True)
    doc.write_text(f"{before}{start}\n{table}{end}{after}", encoding="utf-8")
    print(f"updated the headline table in {doc}")
PY
