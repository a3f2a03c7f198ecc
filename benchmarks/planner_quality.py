"""Quality of the heuristic planner against single-shot BM25 (issue 3, item 7).

For each dataset of ../shared/benchmarks, every dev question is searched over the whole
corpus twice in the same process: single-shot BM25 top-10, and a full heuristic-planner
episode. Reported per dataset: all-gold@10 and recall@10 of the final evidence (doc
level; a gold near-duplicate counts as the gold passage), tokens of the top-10 of each,
and episode latency p50/p95. Gold labels are used only here, to score, never by the
planner.

Engines:
  graph  the real harness: sift.graphs.asearch over a SqliteCorpus (the default)
  sim    an in-process loop over bm25s that mimics the tools (search dedup, 10 hits,
         grep 5 hits, read); for fast iteration while designing

    python benchmarks/planner_quality.py [--engine graph|sim] [--datasets ...] [--limit N]
"""

# ruff: noqa: E402  (BLAS thread limits must be set before numpy is imported)
from __future__ import annotations

import os

# One query at a time is a matrix-vector product: BLAS worker threads only contend for
# the cores (15 ms instead of 1 ms per dense search on a busy 2-core machine).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sift.graphs.policies.heuristic import HeuristicPlanner
from sift.text import estimate_tokens
from sift.types import Chunk, FoundBy, Message, PolicyView, SeenChunk, ToolCall

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "benchmarks"
CACHE = ROOT / "benchmarks" / ".cache"
DATASETS = ("hotpotqa", "musique", "2wikimultihopqa")


def load(name: str) -> tuple[list[dict], list[dict]]:
    folder = DATA / name
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    questions = [json.loads(line) for line in (folder / "questions.jsonl").open(encoding="utf-8")]
    return corpus, questions


def gold_sets(q: dict) -> list[set[str]]:
    dups = q.get("gold_near_duplicate_doc_ids") or {}
    return [{g, *dups.get(g, [])} for g in q["supporting_doc_ids"]]


def doc_of(chunk_id: str) -> str:
    return chunk_id.rsplit("_", 1)[0]


@dataclass
class Tally:
    all_gold: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    by_type: dict[str, list[float]] = field(default_factory=dict)
    # Per question type: how the misses split (gold never surfaced / surfaced, ranked out).
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    calls: list[int] = field(default_factory=list)
    items: list[int] = field(default_factory=list)

    def add(
        self,
        q: dict,
        ranked_docs: list[str],
        tokens: int,
        ms: float,
        *,
        surfaced: set[str] | None = None,
        calls: int = 1,
    ) -> None:
        top = set(ranked_docs[:10])
        golds = gold_sets(q)
        hits = [bool(g & top) for g in golds]
        self.all_gold.append(float(all(hits)))
        self.recall.append(sum(hits) / len(hits))
        self.tokens.append(tokens)
        self.latency_ms.append(ms)
        self.calls.append(calls)
        self.items.append(len(top))
        kind = str(q.get("type"))
        self.by_type.setdefault(kind, []).append(float(all(hits)))
        if all(hits):
            outcome = "ok"
        elif surfaced is not None and all(g & surfaced for g in golds):
            outcome = "ranked_out"
        else:
            outcome = "not_found"
        counts = self.outcomes.setdefault(kind, {"ok": 0, "ranked_out": 0, "not_found": 0})
        counts[outcome] += 1


# --------------------------------------------------------------------------- sim engine


class SimCorpus:
    """bm25s over title + text, one chunk per passage (`<id>_0`), like the real store."""

    def __init__(self, corpus: list[dict]) -> None:
        import bm25s
        import Stemmer

        self.docs = corpus
        self.by_id = {d["id"]: d for d in corpus}
        self.stemmer = Stemmer.Stemmer("english")
        texts = [f"{d['title']} {d['text']}" for d in corpus]
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.index = bm25s.BM25(k1=0.9, b=0.4)
        self.index.index(tokens, show_progress=False)
        self._bm25s = bm25s

    def chunk(self, doc: dict) -> Chunk:
        return Chunk(
            chunk_id=f"{doc['id']}_0",
            doc_id=doc["id"],
            index=0,
            title=doc["title"],
            text=doc["text"],
        )

    def search(self, query: str, k: int = 10, exclude: Collection[str] = ()) -> list[Chunk]:
        q = self._bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer, show_progress=False)
        if not q.vocab:
            return []
        n = min(len(self.docs), k + len(exclude))
        idx, scores = self.index.retrieve(q, k=n, show_progress=False, n_threads=1)
        out = []
        for i, s in zip(idx[0], scores[0], strict=True):
            if s <= 0:
                continue
            ch = self.chunk(self.docs[int(i)])
            if ch.chunk_id not in exclude:
                out.append(ch)
            if len(out) == k:
                break
        return out

    def grep(self, pattern: str, k: int = 5, exclude: Collection[str] = ()) -> list[Chunk]:
        rx = re.compile(pattern)
        out = []
        for d in self.docs:
            if rx.search(d["text"]) or rx.search(d["title"]):
                ch = self.chunk(d)
                if ch.chunk_id not in exclude:
                    out.append(ch)
                    if len(out) == k:
                        break
        return out

    def read(self, doc_id: str) -> list[Chunk]:
        d = self.by_id.get(doc_id)
        return [self.chunk(d)] if d else []


def _block(ch: Chunk, tokens: int) -> str:
    return f"# DOCUMENT ID: {ch.chunk_id} ({tokens} tokens)\n{ch.title}\n{ch.text}"


def sim_episode(
    corpus: SimCorpus,
    planner: HeuristicPlanner,
    question: str,
    *,
    max_turns: int = 6,
    threshold: int = 16384,
    top_k: int = 30,
) -> list[str]:
    seen: dict[str, SeenChunk] = {}
    searched: set[str] = set()
    messages = [Message(role="user", content=question)]
    # Turns are 1-based, as in the harness: a chunk found at turn t is seen at turn t + 1.
    for turn in range(1, max_turns + 1):
        used = sum(s.tokens for s in seen.values() if not s.pruned)
        view = PolicyView(
            question=question,
            turn=turn,
            max_turns=max_turns,
            messages=messages,
            seen=seen,
            tokens_used=used,
            threshold=threshold,
            rejection=threshold * 3 // 2,
            budget=threshold * 2,
            top_k=top_k,
        )
        decision = planner.step(view)
        if decision.final is not None or not decision.tool_calls:
            return [f.id for f in decision.final or []]
        messages.append(Message(role="assistant", tool_calls=decision.tool_calls))
        for call in decision.tool_calls:
            _sim_call(corpus, call, turn, seen, searched, messages)
    return [c for c, _ in sorted(seen.items(), key=lambda kv: kv[1].first_rank)]


def _sim_call(corpus, call: ToolCall, turn, seen, searched, messages) -> None:
    arg = next(iter(call.arguments.values()), "")
    if call.name == "search_corpus":
        found = corpus.search(arg, exclude=searched)
        searched.update(c.chunk_id for c in found)
    elif call.name == "grep_corpus":
        found = corpus.grep(arg)
    elif call.name == "read_document":
        found = corpus.read(arg)
    else:
        for cid in call.arguments.get("chunk_ids", []):
            if cid in seen:
                seen[cid] = seen[cid].model_copy(update={"pruned": True})
        messages.append(Message(role="tool", tool_name=call.name, content="Pruned"))
        return
    blocks = []
    for rank, ch in enumerate(found):
        fb = FoundBy(tool=call.name, argument=str(arg), turn=turn)
        if ch.chunk_id in seen:
            old = seen[ch.chunk_id]
            seen[ch.chunk_id] = old.model_copy(update={"found_by": [*old.found_by, fb]})
        else:
            tokens = estimate_tokens(_block(ch, 0))
            seen[ch.chunk_id] = SeenChunk(chunk=ch, tokens=tokens, found_by=[fb], first_rank=rank)
        blocks.append(_block(ch, seen[ch.chunk_id].tokens))
    messages.append(
        Message(role="tool", tool_name=call.name, content="\n\n".join(blocks) or "No results found")
    )


def run_sim(name: str, limit: int | None, progress: Progress) -> tuple[Tally, Tally, list]:
    corpus_rows, questions = load(name)
    questions = questions[:limit] if limit else questions
    corpus = SimCorpus(corpus_rows)
    planner = HeuristicPlanner()
    tok = {d["id"]: estimate_tokens(_block(corpus.chunk(d), 0)) for d in corpus_rows}
    base, plan = Tally(), Tally()
    failures = []
    task = progress.add_task(name, total=len(questions))
    for q in questions:
        t0 = time.perf_counter()
        single = [c.doc_id for c in corpus.search(q["question"])]
        t1 = time.perf_counter()
        final = sim_episode(corpus, planner, q["question"])
        t2 = time.perf_counter()
        docs = list(dict.fromkeys(doc_of(c) for c in final))
        base.add(q, single, sum(tok[d] for d in single[:10]), (t1 - t0) * 1000)
        plan.add(q, docs, sum(tok[d] for d in docs[:10]), (t2 - t1) * 1000, surfaced=set(docs))
        if not plan.all_gold[-1]:
            failures.append((q, docs[:10]))
        progress.advance(task)
    return base, plan, failures


# --------------------------------------------------------------------------- report


def pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def summarize(name: str, base: Tally, plan: Tally) -> str:
    m = statistics.fmean
    return (
        f"| {name} | {len(plan.all_gold)} | {m(base.all_gold):.3f} | **{m(plan.all_gold):.3f}** | "
        f"{m(base.recall):.3f} | {m(plan.recall):.3f} | {m(base.tokens):.0f} | "
        f"{m(plan.tokens):.0f} | {m(plan.items):.1f} | {pct(base.latency_ms, 50):.1f} | "
        f"{pct(plan.latency_ms, 50):.1f} | {pct(plan.latency_ms, 95):.1f} | {m(plan.calls):.1f} |"
    )


HEADER = (
    "| dataset | questions | BM25 all-gold@10 | planner all-gold@10 | BM25 recall@10 | "
    "planner recall@10 | BM25 top-10 tokens | planner top-10 tokens | planner items in "
    "top-10 | BM25 p50 ms | planner p50 ms | planner p95 ms | planner tool calls |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)
TYPE_HEADER = (
    "| dataset | type | questions | all-gold@10 | missed: gold ranked below 10 | "
    "missed: gold never surfaced |\n|---|---|---|---|---|---|"
)


def type_rows(name: str, plan: Tally) -> list[str]:
    rows = []
    for kind, counts in sorted(plan.outcomes.items()):
        n = sum(counts.values())
        rows.append(
            f"| {name} | {kind} | {n} | {counts['ok'] / n:.3f} | "
            f"{counts['ranked_out']} | {counts['not_found']} |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--engine", choices=("graph", "sim"), default="graph")
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--failures", type=int, default=0, help="print this many failures")
    ap.add_argument("--out", type=Path, default=None, help="also write the tables here")
    args = ap.parse_args(argv)
    if not DATA.exists():
        print(f"benchmark data not found at {DATA}", file=sys.stderr)
        return 2
    rows: list[str] = []
    by_type: list[str] = []
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    ) as progress:
        for name in args.datasets:
            if args.engine == "sim":
                base, plan, failures = run_sim(name, args.limit, progress)
            else:
                base, plan, failures = asyncio.run(run_graph(name, args.limit, progress))
            rows.append(summarize(name, base, plan))
            by_type += type_rows(name, plan)
            progress.console.print(rows[-1])
            for q, _docs in failures[: args.failures]:
                progress.console.print(f"  FAIL {q['type']}: {q['question']}")
                progress.console.print(f"     gold {q['supporting_titles']}")
    text = "\n".join([HEADER, *rows, "", TYPE_HEADER, *by_type])
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def build_store(name: str, rows: list[dict], embedder: str, progress: Progress):
    """The dataset's SqliteCorpus, built once under benchmarks/.cache/ and reused."""
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{name}-{embedder}.sqlite"
    # Without the entity graph, even when entity_graph_quality.py has recorded one in this
    # cached store (a store keeps it on every open that does not say otherwise): the
    # single-shot baseline here is the search alone.
    store = SqliteCorpus(path, embedder=embedder, entity_graph=False)
    if store.stats().documents != len(rows):
        task = progress.add_task(f"index {name}", total=len(rows))
        docs = (Document(id=r["id"], title=r["title"], text=r["text"]) for r in rows)
        store.upsert(docs, on_progress=lambda n: progress.advance(task, n))
    return store


def embedder_name() -> str:
    static = ROOT / "integrations" / "embedders" / "_static.py"
    return "static" if static.exists() else "hash"


async def run_graph(name: str, limit: int | None, progress: Progress):
    from sift.graphs import asearch, single_shot

    rows, questions = load(name)
    questions = questions[:limit] if limit else questions
    store = build_store(name, rows, embedder_name(), progress)
    planner = HeuristicPlanner()
    base, plan = Tally(), Tally()
    failures = []
    task = progress.add_task(name, total=len(questions))
    try:
        for q in questions:
            t0 = time.perf_counter()
            single = single_shot(q["question"], store, top_k=10, mode="bm25")
            t1 = time.perf_counter()
            result = await asearch(q["question"], store, policy=planner)
            t2 = time.perf_counter()
            s_docs = [e.doc_id for e in single.evidence]
            p_docs = list(dict.fromkeys(e.doc_id for e in result.evidence))
            s_tok = sum(estimate_tokens(e.text) for e in single.evidence[:10])
            top10: list = []
            for e in result.evidence:
                if e.doc_id not in {x.doc_id for x in top10}:
                    top10.append(e)
            p_tok = sum(estimate_tokens(e.text) for e in top10[:10])
            base.add(q, s_docs, s_tok, (t1 - t0) * 1000)
            surfaced = {
                doc_of(cid) for turn in result.trace for call in turn.calls for cid in call.added
            }
            plan.add(
                q, p_docs, p_tok, (t2 - t1) * 1000, surfaced=surfaced, calls=result.usage.tool_calls
            )
            if not plan.all_gold[-1]:
                failures.append((q, p_docs[:10]))
            progress.advance(task)
    finally:
        store.close()
    return base, plan, failures


if __name__ == "__main__":
    raise SystemExit(main())
