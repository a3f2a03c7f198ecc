"""The planner with a small model's help (issue 45, item 3): single-shot, the heuristic
planner and the assisted planner on 40 MuSiQue dev questions.

    python benchmarks/planner_assist.py --model-url http://127.0.0.1:PORT/v1 \
        [--oracle] [--limit-per-half 20] [--markdown FILE] [--json FILE] [--fixture DIR]
    python benchmarks/planner_assist.py --judges RECALL:FALSE_RATE ... [--judge-seeds 10]

The 40 questions: MuSiQue's dev questions (`orig_split` dev, ../shared/benchmarks/musique),
ordered by the SHA-1 of their id, the first 20 of each fixed half (even first byte of that
SHA-1: tune, odd: held, as never_worse.py cuts them). The store is never_worse.py's
(benchmarks/.cache/musique-static.sqlite, built by planner_quality.build_store).

Systems, each question in one process: `single_shot` (one hybrid search, top 30),
`planner` (HeuristicPlanner, defaults, top 30), `assisted` (AssistedPlanner over the same
planner, asking the model at `--model-url`, an OpenAI-compatible server such as
llama-server, with `response_format` json_schema and temperature 0). `--oracle` adds
`oracle`: the same mode with a chooser that reads the gold labels (the best any model
could do with these options), the ceiling the real model is measured against.
`--judges` runs, instead of the systems, choosers that read the labels at a set recall
and false rate (`JudgeAsk`, no model), beside the planner alone: how well a model must
judge passages for the mode to pay.

Scored per document (a gold near-duplicate counts as the gold): all-gold@10 (every gold
passage in the first 10 documents), hit@5; per question the model's asks, the fallbacks
(asks whose reply was not used), episode seconds. For each hop ask: whether the model's
pick, the planner's own first candidate, and any option at all, is a gold bridge (a name
that is the answer of one of the question's steps but the last, or a gold passage's
title).

`--fixture DIR` writes, for the first `--fixture-episodes` questions the model was asked
about, the model's replies (question → reply) and every store call the assisted episode
made with its results (episodes.json.gz), so
tests/graphs/policies/test_assisted_replay.py replays them
without a model or the store.
"""

# ruff: noqa: E402  (BLAS thread limits must be set before numpy is imported)
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import asyncio
import gzip
import hashlib
import json
import random
import statistics
import sys
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import httpx
from rich.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from entity_graph_quality import part_of
from planner_quality import build_store, doc_of, embedder_name, gold_sets, load

from sift.graphs import asearch, single_shot
from sift.graphs.policies import AssistedPlanner, HeuristicPlanner, HeuristicPlannerConfig
from sift.llm import ConstrainedReply
from sift.types import Chunk, GrepResult, Hit, Message

SYSTEMS = ("single_shot", "planner", "assisted")
TOP_K = 30


def questions(limit_per_half: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows, qs = load("musique")
    dev = sorted(
        (q for q in qs if q.get("orig_split") == "dev"),
        key=lambda q: hashlib.sha1(q["id"].encode()).hexdigest(),
    )
    chosen = [q for q in dev if part_of(q["id"]) == "tune"][:limit_per_half]
    chosen += [q for q in dev if part_of(q["id"]) == "held"][:limit_per_half]
    return rows, chosen


# ---------------------------------------------------------------------- asking


class ServerAsk:
    """A constrained ask to an OpenAI-compatible server (llama-server): the schema as
    `response_format.json_schema.schema`, temperature 0, a short reply budget."""

    def __init__(self, base_url: str, *, max_tokens: int = 64, timeout: float = 120.0) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.max_tokens = max_tokens
        self.client = httpx.AsyncClient(timeout=timeout)
        self.log: list[dict[str, Any]] = []

    async def __call__(self, messages: list[Message], schema: dict[str, Any]) -> ConstrainedReply:
        body = {
            "model": "local",
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "choice", "schema": schema},
            },
        }
        response = await self.client.post(self.url, json=body)
        response.raise_for_status()
        data = response.json()
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        reply = ConstrainedReply(
            content=choice["message"].get("content") or "",
            cut_off=choice.get("finish_reason") == "length",
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )
        self.log.append(
            {
                "messages": body["messages"],
                "schema": schema,
                "content": reply.content,
                "cut_off": reply.cut_off,
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
            }
        )
        return reply


def gold_names(q: dict[str, Any], rows_by_id: dict[str, dict[str, Any]]) -> list[str]:
    """The names a hop may need: each step's answer but the last, and the gold titles."""
    steps = q["question_decomposition"]
    names = [s["answer"] for s in steps[:-1]]
    names += [rows_by_id[d]["title"] for d in q["supporting_doc_ids"] if d in rows_by_id]
    return [n for n in names if n]


def is_gold_name(option: str, golds: Sequence[str]) -> bool:
    o = option.lower().strip()
    return any(o == g.lower() or (len(o) > 3 and (o in g.lower() or g.lower() in o)) for g in golds)


class OracleAsk:
    """A chooser that reads the gold labels: the first option that is a gold bridge; the
    shown passages that are gold. The ceiling of what a model could add with these
    options (and nothing a real run may use)."""

    def __init__(self, golds: list[str], gold_docs: set[str]) -> None:
        self.golds = golds
        self.gold_docs = gold_docs
        # Set per passage ask from the options it shows (`_oracle_passages`).
        self.numbers: list[int] = []

    def pick(self, gold: list[bool]) -> list[int]:
        """The passage answer (numbers from 1) given which shown passages are gold."""
        return [i + 1 for i, g in enumerate(gold) if g][:4]

    async def __call__(self, messages: list[Message], schema: dict[str, Any]) -> ConstrainedReply:
        props = schema["properties"]
        if "name" in props:
            options = props["name"]["enum"]
            pick = next((o for o in options[:-1] if is_gold_name(o, self.golds)), options[-1])
            return ConstrainedReply(content=json.dumps({"name": pick}))
        return ConstrainedReply(content=json.dumps({"passages": self.numbers}))


class JudgeAsk(OracleAsk):
    """A chooser of a given judgement (`--judges`): each shown gold passage is picked
    with probability `recall`, each other one with `false_rate` (a seeded draw), the
    first four picks in the order shown, as the schema allows. It tells how well a
    model must judge passages for the mode to pay."""

    def __init__(
        self, golds: list[str], gold_docs: set[str], recall: float, false_rate: float, seed: str
    ) -> None:
        super().__init__(golds, gold_docs)
        self.recall = recall
        self.false_rate = false_rate
        self.rng = random.Random(seed)

    def pick(self, gold: list[bool]) -> list[int]:
        draws = [self.rng.random() for _ in gold]
        chance = [self.recall if g else self.false_rate for g in gold]
        return [i + 1 for i, (d, c) in enumerate(zip(draws, chance, strict=True)) if d < c][:4]


# ---------------------------------------------------------------------- recording the store


def _exclude_key(exclude: Collection[str]) -> str:
    return hashlib.sha1("\n".join(sorted(exclude)).encode()).hexdigest()[:16]


def call_key(method: str, **arguments: Any) -> str:
    """The key a recorded store call is found by (the replay computes the same)."""
    if "exclude" in arguments:
        arguments["exclude"] = _exclude_key(arguments["exclude"] or ())
    arguments.pop("filters", None)
    arguments.pop("vector", None)
    return json.dumps([method, arguments], sort_keys=True, ensure_ascii=False)


class RecordingCorpus:
    """The store, with every search, grep and read it answered kept (for the replay)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: dict[str, list[list[Any]]] = {}
        self.chunks: dict[str, dict[str, Any]] = {}

    def _keep(self, key: str, hits: list[tuple[Chunk, float]]) -> None:
        for chunk, _ in hits:
            self.chunks[chunk.chunk_id] = chunk.model_dump()
        self.calls[key] = [[c.chunk_id, s] for c, s in hits]

    def search(self, query: str, **kw: Any) -> list[Hit]:
        hits = self.inner.search(query, **kw)
        self._keep(call_key("search", query=query, **kw), [(h.chunk, h.score) for h in hits])
        return hits

    def grep(self, pattern: str, **kw: Any) -> GrepResult:
        found = self.inner.grep(pattern, **kw)
        self._keep(
            call_key("grep", pattern=pattern, **kw), [(h.chunk, h.score) for h in found.hits]
        )
        return found

    def read(self, doc_id: str) -> list[Chunk]:
        chunks = self.inner.read(doc_id)
        self._keep(call_key("read", doc_id=doc_id), [(c, 0.0) for c in chunks])
        return chunks

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


# ---------------------------------------------------------------------- one question


def score(q: dict[str, Any], result: Any) -> dict[str, Any]:
    ranked = list(dict.fromkeys(e.doc_id for e in result.evidence))
    golds = gold_sets(q)
    gold = set().union(*golds)
    first = next((i + 1 for i, d in enumerate(ranked) if d in gold), None)
    ranks = [next((i + 1 for i, d in enumerate(ranked) if d in g), None) for g in golds]
    return {
        "all_gold10": all(r is not None and r <= 10 for r in ranks),
        "hit5": first is not None and first <= 5,
        "gold_ranks": ranks,
        "top10": ranked[:10],
    }


def hop_stats(records: list[Any], golds: list[str]) -> list[dict[str, Any]]:
    out = []
    for r in records:
        if r.kind != "hop":
            continue
        out.append(
            {
                "options": r.options,
                "picked": r.picked,
                "planner_first": r.planner,
                "fallback": r.fallback,
                "pick_gold": bool(r.picked) and is_gold_name(r.picked[0], golds),
                "planner_gold": bool(r.planner) and is_gold_name(r.planner[0], golds),
                "first_option_gold": is_gold_name(r.options[0], golds),
                "any_option_gold": any(is_gold_name(o, golds) for o in r.options),
                "seconds": r.seconds,
            }
        )
    return out


def passage_stats(records: list[Any], gold: set[str], promote: int) -> list[dict[str, Any]]:
    """Per passage ask: what was shown and picked, and what the promotion did (the picks
    below the top 10 that entered it, the planner's lowest unpicked ones that left it:
    `sift.graphs.policies.assisted.promote`'s rule), gold or not."""
    out = []
    for r in records:
        if r.kind != "passages":
            continue
        docs = [doc_of(o) for o in r.options]
        picked = set(r.picked)
        rising = [o for o in r.options[10:] if o in picked][:promote]
        falling = [o for o in reversed(r.options[:10]) if o not in picked][: len(rising)]
        rising = rising[: len(falling)]
        out.append(
            {
                "shown": len(r.options),
                "gold_shown": sum(d in gold for d in docs),
                "gold_below_10": sum(d in gold for d in docs[10:]),
                "picked": len(r.picked),
                "picked_numbers": [r.options.index(p) + 1 for p in r.picked],
                "picked_gold": sum(doc_of(p) in gold for p in r.picked),
                "picked_gold_below_10": sum(
                    doc_of(p) in gold for p in r.picked if r.options.index(p) >= 10
                ),
                "rose": len(rising),
                "rose_gold": sum(doc_of(o) in gold for o in rising),
                "fell": len(falling),
                "fell_gold": sum(doc_of(o) in gold for o in falling),
                "fallback": r.fallback,
                "seconds": r.seconds,
            }
        )
    return out


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows, chosen = questions(args.limit_per_half)
    if args.ids:
        # A few of the 40 again (to record their episodes for the replay).
        chosen = [q for q in chosen if q["id"] in set(args.ids)]
    rows_by_id = {r["id"]: r for r in rows}
    with Progress() as progress:
        store = build_store("musique", rows, embedder_name(), progress)
    systems = list(SYSTEMS) if args.model_url else ["single_shot", "planner"]
    if args.oracle:
        systems.append("oracle")
    server = ServerAsk(args.model_url, max_tokens=args.max_tokens) if args.model_url else None
    out: list[dict[str, Any]] = []
    try:
        for n, q in enumerate(chosen):
            record: dict[str, Any] = {"id": q["id"], "part": part_of(q["id"]), "type": q["type"]}
            record["question"] = q["question"]
            golds = gold_names(q, rows_by_id)
            gold_docs = set().union(*gold_sets(q))
            for system in systems:
                t = time.perf_counter()
                extra: dict[str, Any] = {}
                if system == "single_shot":
                    result = single_shot(q["question"], store, top_k=TOP_K)
                elif system == "planner":
                    result = await asearch(
                        q["question"], store, policy=HeuristicPlanner(), top_k=TOP_K
                    )
                else:
                    if system == "oracle":
                        ask: Any = OracleAsk(golds, gold_docs)
                    else:
                        assert server is not None
                        ask = server
                    policy = _assisted(ask, args, args.asks)
                    corpus = RecordingCorpus(store)
                    if system == "oracle":
                        # The passage ask's gold numbers are set per ask from the options.
                        policy = _oracle_passages(policy, gold_docs)
                    result = await asearch(q["question"], corpus, policy=policy, top_k=TOP_K)
                    extra = {
                        "asks": len(policy.records),
                        "fallbacks": policy.fallbacks,
                        "fallback_reasons": [r.fallback for r in policy.records if r.fallback],
                        "hops": hop_stats(policy.records, golds),
                        "passages": passage_stats(policy.records, gold_docs, args.promote),
                        "ask_seconds": round(sum(r.seconds for r in policy.records), 2),
                        # What the replay needs: every question and its reply, the store's
                        # answers, and the outcome.
                        "replies": [
                            {
                                "messages": r.messages,
                                "schema": r.schema,
                                "content": r.reply,
                                "fallback": r.fallback,
                            }
                            for r in policy.records
                        ],
                        "store": {
                            "calls": corpus.calls,
                            "chunks": _shown_only(corpus.chunks, result),
                        },
                        "evidence": [e.chunk_id for e in result.evidence],
                        "stopped_because": result.stopped_because,
                    }
                seconds = time.perf_counter() - t
                record[system] = {**score(q, result), "seconds": round(seconds, 3), **extra}
            out.append(record)
            line = " ".join(f"{s}={'Y' if record[s]['all_gold10'] else 'n'}" for s in systems)
            print(
                f"{n + 1:2d}/{len(chosen)} {record['part']} {line} {q['question'][:70]}", flush=True
            )
    finally:
        store.close()
        if server is not None:
            await server.client.aclose()
    return out


async def judge_sweep(args: argparse.Namespace) -> list[str]:
    """The passage question answered by `JudgeAsk` at each `--judges` RECALL:FALSE_RATE,
    `--judge-seeds` draws a question, beside the planner alone: how well a chooser must
    judge for the mode to reach the planner + 0.05."""
    rows, chosen = questions(args.limit_per_half)
    rows_by_id = {r["id"]: r for r in rows}
    judges = [_judge(j) for j in args.judges]
    planner: dict[str, bool] = {}
    outcomes: dict[tuple[float, float], list[tuple[str, int, bool]]] = {j: [] for j in judges}
    with Progress() as progress:
        store = build_store("musique", rows, embedder_name(), progress)
        task = progress.add_task("judges", total=len(chosen) * len(judges) * args.judge_seeds)
        try:
            for q in chosen:
                golds = gold_names(q, rows_by_id)
                gold_docs = set().union(*gold_sets(q))
                alone = await asearch(q["question"], store, policy=HeuristicPlanner(), top_k=TOP_K)
                planner[q["id"]] = score(q, alone)["all_gold10"]
                for recall, false_rate in judges:
                    for seed in range(args.judge_seeds):
                        ask = JudgeAsk(
                            golds,
                            gold_docs,
                            recall,
                            false_rate,
                            f"{q['id']}/{recall}/{false_rate}/{seed}",
                        )
                        policy = _oracle_passages(_assisted(ask, args, ["passages"]), gold_docs)
                        result = await asearch(q["question"], store, policy=policy, top_k=TOP_K)
                        outcomes[(recall, false_rate)].append(
                            (q["id"], seed, score(q, result)["all_gold10"])
                        )
                        progress.advance(task)
        finally:
            store.close()
    parts = {q["id"]: part_of(q["id"]) for q in chosen}
    n = len(chosen)
    lines = [
        f"| chooser | all-gold@10 (mean of {args.judge_seeds} draws) | tune | held | lowest "
        "draw / highest | questions gained / lost a draw (mean) |",
        "|" + " --- |" * 6,
        f"| planner alone | {sum(planner.values()) / n:.3f} | "
        + " | ".join(
            f"{_share([planner[i] for i in planner if parts[i] == part]):.3f}"
            for part in ("tune", "held")
        )
        + " | | |",
    ]
    for (recall, false_rate), got in outcomes.items():
        # Each draw's (question, all gold) pairs.
        draws = [[(i, ok) for i, s, ok in got if s == d] for d in range(args.judge_seeds)]
        shares = [_share([ok for _, ok in draw]) for draw in draws]
        gained = statistics.mean(sum(ok and not planner[i] for i, ok in d) for d in draws)
        lost = statistics.mean(sum(planner[i] and not ok for i, ok in d) for d in draws)
        by_part = [
            _share([ok for i, _, ok in got if parts[i] == part]) for part in ("tune", "held")
        ]
        lines.append(
            f"| recall {recall:.2f}, false rate {false_rate:.2f} | "
            f"{_share([ok for _, _, ok in got]):.3f} | {by_part[0]:.3f} | {by_part[1]:.3f} | "
            f"{min(shares):.3f} / {max(shares):.3f} | {gained:.1f} / {lost:.1f} |"
        )
    return lines


def _assisted(ask: Any, args: argparse.Namespace, asks: Sequence[str]) -> AssistedPlanner:
    """The assisted planner as the command line sets it, asking `asks`."""
    return AssistedPlanner(
        ask,
        asks=tuple(asks),
        passage_options=args.passage_options,
        promote=args.promote,
        passage_chars=args.passage_chars,
        timeout=args.timeout,
    )


def _judge(text: str) -> tuple[float, float]:
    """A `--judges` value: RECALL:FALSE_RATE, both in [0, 1]."""
    try:
        recall, false_rate = (float(x) for x in text.split(":"))
    except ValueError:
        recall = false_rate = -1.0
    if not (0 <= recall <= 1 and 0 <= false_rate <= 1):
        raise SystemExit(f"--judges takes RECALL:FALSE_RATE in [0, 1], not {text!r}")
    return recall, false_rate


def _share(values: Sequence[bool]) -> float:
    return sum(values) / len(values) if values else 0.0


def _shown_only(chunks: dict[str, dict[str, Any]], result: Any) -> dict[str, dict[str, Any]]:
    """The recorded chunks, with the text and title of those the episode never showed
    left out: a search fetches more than it shows (parallel searches share out their
    hits), and a replay that goes the same way never shows them either, so only their
    ids matter (and the fixture stays small)."""
    shown = {e.chunk_id for e in result.evidence}
    for turn in result.trace:
        for call in turn.calls:
            shown.update(call.added, call.resurfaced)
    return {
        cid: c if cid in shown else {**c, "title": "", "text": "", "metadata": {}}
        for cid, c in chunks.items()
    }


def _oracle_passages(policy: AssistedPlanner, gold_docs: set[str]) -> AssistedPlanner:
    """The oracle's passage answers: the shown options that are gold (read off the
    schema's options through the policy's records)."""
    inner = policy.ask
    assert isinstance(inner, OracleAsk)

    async def ask(messages: list[Message], schema: dict[str, Any]) -> ConstrainedReply:
        if "passages" in schema["properties"]:
            options = policy.records[-1].options
            inner.numbers = inner.pick([doc_of(o) in gold_docs for o in options])
        return await inner(messages, schema)

    policy.ask = ask
    return policy


# ---------------------------------------------------------------------- report


def summary(records: list[dict[str, Any]], systems: list[str]) -> list[str]:
    head = "| half | system | n | all-gold@10 | hit@5 | asks / question | fallbacks | median s |"
    lines = [head, "|" + " --- |" * 8]
    for part in ("tune", "held", "all"):
        rs = [r for r in records if part == "all" or r["part"] == part]
        for s in systems:
            xs = [r[s] for r in rs]
            asks = statistics.mean(x.get("asks", 0) for x in xs)
            fb = sum(x.get("fallbacks", 0) for x in xs)
            lines.append(
                f"| {part} | {s} | {len(xs)} | "
                f"{sum(x['all_gold10'] for x in xs) / len(xs):.3f} | "
                f"{sum(x['hit5'] for x in xs) / len(xs):.3f} | "
                f"{asks:.1f} | {fb} | {statistics.median(x['seconds'] for x in xs):.2f} |"
            )
    return lines


def ask_tables(records: list[dict[str, Any]], systems: list[str]) -> list[str]:
    """What the model chose against what the planner would have: the hop asks (is the
    pick a gold bridge; is the planner's own first hop search one) and the passage asks
    (gold passages shown below the top 10, picked, brought up; gold pushed out)."""
    lines = [
        "| system | passage asks | fallbacks | picks / ask | picks that are gold | gold "
        "shown below 10 | of them picked | brought up | of them gold | pushed out | of "
        "them gold | s / ask (median) |",
        "|" + " --- |" * 12,
    ]
    assisted = [s for s in systems if s not in ("single_shot", "planner")]
    for s in assisted:
        pas = [p for r in records for p in r[s].get("passages", [])]
        used = [p for p in pas if p["fallback"] is None]
        n = len(used) or 1
        lines.append(
            f"| {s} | {len(pas)} | {len(pas) - len(used)} | "
            f"{sum(p['picked'] for p in used) / n:.1f} | "
            f"{sum(p['picked_gold'] for p in used)} of {sum(p['picked'] for p in used)} | "
            f"{sum(p['gold_below_10'] for p in pas)} | "
            f"{sum(p['picked_gold_below_10'] for p in used)} | "
            f"{sum(p['rose'] for p in used)} | {sum(p['rose_gold'] for p in used)} | "
            f"{sum(p['fell'] for p in used)} | {sum(p['fell_gold'] for p in used)} | "
            f"{statistics.median([p['seconds'] for p in pas] or [0]):.1f} |"
        )
    hops = {s: [h for r in records for h in r[s].get("hops", [])] for s in assisted}
    if not any(hops.values()):
        return lines
    lines += [
        "",
        "| system | hop asks | fallbacks | 'none' | pick is a gold bridge | planner's first "
        "search is one | options' first is one | any option is one | s / ask (median) |",
        "|" + " --- |" * 9,
    ]
    for s in assisted:
        hs = hops[s]
        used = [h for h in hs if h["fallback"] is None]
        lines.append(
            f"| {s} | {len(hs)} | {len(hs) - len(used)} | "
            f"{sum(not h['picked'] for h in used)} | {sum(h['pick_gold'] for h in used)} | "
            f"{sum(h['planner_gold'] for h in hs)} | "
            f"{sum(h['first_option_gold'] for h in hs)} | "
            f"{sum(h['any_option_gold'] for h in hs)} | "
            f"{statistics.median([h['seconds'] for h in hs] or [0]):.1f} |"
        )
    return lines


def passage_digest(title: str, text: str) -> str:
    """What the fixture keeps of a shown passage: its text stays in ../shared/benchmarks
    (tests/graphs/policies/test_assisted_replay.py reads it from there and checks this)."""
    return hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:16]


def _texts_by_reference(store: dict[str, Any]) -> dict[str, Any]:
    """A recorded store with each shown passage's title and text replaced by its digest
    (`shared`): the fixture holds no corpus text, only which passage it was."""
    chunks: dict[str, dict[str, Any]] = {}
    shared: dict[str, str] = {}
    for cid, chunk in store["chunks"].items():
        if chunk["text"]:
            shared[cid] = passage_digest(chunk["title"], chunk["text"])
            chunk = {**chunk, "title": "", "text": ""}
        chunks[cid] = chunk
    return {**store, "chunks": chunks, "shared": shared}


def write_fixture(
    records: list[dict[str, Any]],
    folder: Path,
    episodes: int,
    system: str,
    settings: dict[str, Any],
) -> None:
    """The first `episodes` questions whose every ask the model answered usably, the
    model's pick changing the planner's result in at least one if any does: their
    questions and replies, the store calls of their episodes, and the outcome."""
    folder.mkdir(parents=True, exist_ok=True)
    usable = [
        r for r in records if r.get(system) and r[system]["replies"] and not r[system]["fallbacks"]
    ]
    # (top10: document ids, the planner's and the mode's alike.)
    changed = [r for r in usable if r[system]["top10"] != r["planner"]["top10"]]
    chosen = (changed[:1] + [r for r in usable if r not in changed[:1]])[:episodes]
    kept = [
        {
            "id": r["id"],
            "question": r["question"],
            "system": system,
            "settings": settings,
            "replies": [
                {"messages": x["messages"], "schema": x["schema"], "content": x["content"]}
                for x in r[system]["replies"]
            ],
            "store": r[system]["store"],
            "evidence": r[system]["evidence"],
            "stopped_because": r[system]["stopped_because"],
            "all_gold10": r[system]["all_gold10"],
            "planner_top10": r["planner"]["top10"],
        }
        for r in chosen
    ]
    for episode in kept:
        episode["store"] = _texts_by_reference(episode["store"])
    # Gzipped: an episode's store calls list hundreds of chunk ids.
    path = folder / "episodes.json.gz"
    data = (json.dumps(kept, ensure_ascii=False) + "\n").encode()
    path.write_bytes(gzip.compress(data, mtime=0))
    print(f"wrote {len(kept)} episodes to {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-url", help="an OpenAI-compatible server's /v1 URL")
    parser.add_argument("--oracle", action="store_true")
    parser.add_argument("--asks", nargs="+", default=["passages"], choices=["hop", "passages"])
    parser.add_argument("--passage-options", type=int, default=20)
    parser.add_argument("--promote", type=int, default=2)
    parser.add_argument("--passage-chars", type=int, default=140)
    parser.add_argument("--limit-per-half", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--fixture", type=Path)
    parser.add_argument("--fixture-episodes", type=int, default=3)
    parser.add_argument("--ids", nargs="+", help="only these of the 40 questions")
    parser.add_argument("--fixture-system", default="assisted", choices=["assisted", "oracle"])
    parser.add_argument(
        "--judges",
        nargs="+",
        metavar="RECALL:FALSE_RATE",
        help="instead of the systems: the passage question answered by choosers of these "
        "judgements (no model), beside the planner alone",
    )
    parser.add_argument("--judge-seeds", type=int, default=10)
    args = parser.parse_args(argv)
    if args.judges:
        lines = asyncio.run(judge_sweep(args))
        print("\n".join(lines))
        if args.markdown:
            args.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return 0
    records = asyncio.run(run(args))
    systems = [s for s in (*SYSTEMS, "oracle") if s in records[0]]
    lines = [*summary(records, systems), "", *ask_tables(records, systems)]
    print("\n".join(lines))
    if args.json:
        slim = [
            {
                k: ({kk: vv for kk, vv in v.items() if kk != "store"} if isinstance(v, dict) else v)
                for k, v in r.items()
            }
            for r in records
        ]
        args.json.write_text(
            "\n".join(json.dumps(r, ensure_ascii=False) for r in slim) + "\n", encoding="utf-8"
        )
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.fixture:
        settings = {
            "asks": args.asks,
            "passage_options": args.passage_options,
            "promote": args.promote,
            "passage_chars": args.passage_chars,
            # The planner's own settings the replay needs (it replays older recordings
            # without the rules they predate).
            "confirmed_below": HeuristicPlannerConfig().confirmed_below,
        }
        write_fixture(records, args.fixture, args.fixture_episodes, args.fixture_system, settings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
