"""Filtered search: sift's embedded store against LanceDB's and Chroma's filters.

    pip install -e ".[peers]"
    python benchmarks/filters.py [--sizes 100k 1m] [--rounds 2] [--queries 60]
        [--systems sift lancedb chroma] [--modes bm25 dense hybrid grep] [--baseline PATH]
        [--json benchmarks/results/filters.json] [--markdown benchmarks/results/filters.md]
        [--plot benchmarks/results/filters.png]
    python benchmarks/filters.py --render benchmarks/results/filters.json   # the tables again

The corpus is synthetic (store_speed.py's generator: the dev corpora's word frequencies,
60-140 words a passage, so one chunk a passage): `20k` (a smoke size), `100k` and `1m`
passages. Each document carries metadata made for the filters:

- `tenant`: exact shares of the documents, placed at random, so that `t50`, `t5`,
  `t0.5`, `t0.05` and `t0.005` select 50 %, 5 %, 0.5 %, 0.05 % and 0.005 % of them (at
  least one document each); the rest are spread over ten other tenants.
- `kind`: one of ten kinds, uniformly (`kind0` about 10 %).
- `date`: an ISO day ("YYYY-MM-DD") uniform over 2000-2019, and `day`, the same day as a
  number (days since 2000-01-01).

The filters searched, each against the same queries: none (the unfiltered baseline), the
five tenants, a date range (the year 2010, about 5 %) and a two-field conjunction
(`t5` and `kind0`, about 0.5 %). sift is given the short form (`{"tenant": "t5"}`,
`{"date": {"gte": "2010-01-01", "lt": "2011-01-01"}}`: sift and LanceDB compare the ISO
strings); LanceDB an SQL `where(..., prefilter=True)` on columns; Chroma a `where=` on its
metadata, the date range on the number `day` (its ranges take numbers only).

Systems, each given the same chunks and vectors (peers.py's workers and ingests):

- sift: `SqliteCorpus` with the static embedder, ingesting the passages with their
  metadata; `search(mode=bm25|dense|hybrid, k=10, filters=...)` and
  `grep(word, k=10, filters=...)`.
- lancedb: LanceDB 0.40, the chunks with the metadata as columns, its full-text index, no
  vector index (flat, exact); full-text and vector (cosine) search with `prefilter=True`.
- chroma: embedded Chroma 1.5.9 (HNSW, cosine), the metadata on every chunk; vector
  search with `where=`.
- sift-base (with `--baseline PATH`): sift at another checkout, `PATH/.venv`'s Python
  running this script's worker (which uses only `SqliteCorpus`, `Document` and the
  static embedder): the ingest comparison that a store change must keep within 5 %.

Each (size, round, system) is a fresh subprocess on a fresh store, the systems' order
rotating each round. Queries: 60 fixed word samples from the corpus (four words of four
letters or more from a random passage; `--queries N` takes the first N, for a quicker
smoke run, `--sizes 20k`); grep: 20 literal words (a third of N, 10 at least). After 10
warm-up calls per (mode, filter), every query is timed (wall time, the query embedded
inside the call, as sift does); p50 / p95 in ms, the median over rounds.

Correctness, counted per search (never asserted):

- wrong: results whose document does not match the filter (judged by `sift.filters.matches`
  on the document's metadata, the semantics of record).
- short: searches returning fewer than 10 results while at least 10 could be returned:
  dense and hybrid, any matching chunk; grep, matching chunks whose text holds the word; bm25,
  matching chunks among the system's own unfiltered top 1,000 (a lower bound).
- exact (dense, every system; bm25, sift and LanceDB; dense also recall@10): the
  filtered top 10's scores equal the oracle's top 10 (tolerance 1e-3, so ties may swap).
  Dense oracle: numpy brute force over the matching chunks' static vectors. BM25 oracle:
  the same store's unfiltered top 1,000 (sift's k limit) kept to matching chunks, decided only
  when it holds 10 matching chunks or is the whole ranking (the wide filters; the narrow
  ones are counted as undecided). At 1m sift's dense search is its HNSW graph (past the
  store's `ann_threshold`), so there "exact" measures that graph against brute force.

Ingest: passages per second from an empty store to a committed, searchable one; with
`--baseline`, sift's pace over the baseline's, paired by round (the 5 % budget).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from peers import (  # noqa: E402  (beside this script)
    _chroma_client,
    _disk_mb,
    _ingest_chroma,
    _ingest_lancedb,
    _ingest_sift,
    _load,
    _load_chunks,
    _load_sift,
    _paired,
    _query_vector,
    _read_jsonl,
    _write_jsonl,
    begin,
    chunk_and_embed,
    common_options,
    order,
    percentile,
    publish,
    run_one,
    timed_ingest,
)
from store_speed import _progress, console, synthetic  # noqa: E402

SIZES = {"20k": 20_000, "100k": 100_000, "1m": 1_000_000}
SYSTEMS = ("sift", "lancedb", "chroma")
ALL_MODES = ("bm25", "dense", "hybrid", "grep")
MODES: dict[str, tuple[str, ...]] = {
    "sift": ALL_MODES,
    "sift-base": ALL_MODES,
    "lancedb": ("bm25", "dense"),
    "chroma": ("dense",),
}
SHARES = {"t50": 0.5, "t5": 0.05, "t0.5": 0.005, "t0.05": 0.0005, "t0.005": 0.00005}
KINDS = 10
EPOCH = date(2000, 1, 1)
DAYS = (date(2020, 1, 1) - EPOCH).days
RANGE = ("2010-01-01", "2011-01-01")
K = 10
ORACLE_K = 1_000
WARMUP = 10
QUERIES = 60
PATTERNS = 20  # grep words made; a third of --queries used (10 at least)
TOLERANCE = 1e-3


# ----------------------------------------------------------------------------- data


def tenants(n: int, rng: np.random.Generator) -> list[str]:
    """`n` documents' tenants: exactly round(share * n) (at least 1) of each share's."""
    names = np.array([f"other{i % 10}" for i in range(n)], dtype=object)
    at = 0
    for name, share in SHARES.items():
        count = max(1, round(share * n))
        names[at : at + count] = name
        at += count
    return list(rng.permutation(names))


def _day(offset: int) -> str:
    return (EPOCH + timedelta(days=offset)).isoformat()


def filters() -> list[dict[str, Any]]:
    """Every filter searched, in each system's own form (None: unfiltered)."""
    low, high = RANGE
    days = [(date.fromisoformat(d) - EPOCH).days for d in RANGE]
    out: list[dict[str, Any]] = [{"name": "none", "sift": None, "lance": None, "chroma": None}]
    for name in SHARES:
        out.append(
            {
                "name": name,
                "sift": {"tenant": name},
                "lance": f"tenant = '{name}'",
                "chroma": {"tenant": name},
            }
        )
    out.append(
        {
            "name": "date",
            "sift": {"date": {"gte": low, "lt": high}},
            "lance": f"date >= '{low}' AND date < '{high}'",
            "chroma": {"$and": [{"day": {"$gte": days[0]}}, {"day": {"$lt": days[1]}}]},
        }
    )
    out.append(
        {
            "name": "t5+kind0",
            "sift": {"tenant": "t5", "kind": "kind0"},
            "lance": "tenant = 't5' AND kind = 'kind0'",
            "chroma": {"$and": [{"tenant": "t5"}, {"kind": "kind0"}]},
        }
    )
    return out


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)]


def prepare(size: str, workdir: Path) -> Path:
    """The size's passages (with metadata), chunks (with the same fields), static
    vectors, queries, grep words and filters, written once under `workdir/size`."""
    folder = workdir / size
    if (folder / "done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    n = SIZES[size]
    rng = np.random.default_rng(41)
    owners = tenants(n, rng)
    kinds = rng.integers(0, KINDS, size=n).tolist()
    days = rng.integers(0, DAYS, size=n).tolist()
    passages = []
    for i, row in enumerate(synthetic(n)):
        meta = {"tenant": owners[i], "kind": f"kind{kinds[i]}", "date": _day(days[i])}
        passages.append(row | {"metadata": meta | {"day": days[i]}})
    chunks, vectors = chunk_and_embed(passages, size)
    by_doc = {p["id"]: p["metadata"] for p in passages}
    for chunk in chunks:
        chunk.update(by_doc[chunk["doc_id"]])
    picks = rng.choice(n, size=QUERIES + PATTERNS, replace=False).tolist()
    queries = []
    for i in picks[:QUERIES]:
        words = _words(passages[i]["text"])
        queries.append(" ".join(rng.choice(words, size=min(4, len(words)), replace=False)))
    patterns = [str(rng.choice(_words(passages[i]["text"]))) for i in picks[QUERIES:]]
    _write_jsonl(folder / "passages.jsonl", passages)
    _write_jsonl(folder / "chunks.jsonl", chunks)
    np.save(folder / "vectors.npy", vectors)
    inputs = {"queries": queries, "patterns": patterns, "filters": filters()}
    (folder / "inputs.json").write_text(json.dumps(inputs, indent=1))
    (folder / "done").write_text(f"{n} passages, {len(chunks)} chunks\n")
    return folder


# ----------------------------------------------------------------------------- worker

Result = list[list[Any]]  # [chunk id, doc id, score] per hit
Search = Callable[[str, dict[str, Any]], Result]


def _open_sift(store_dir: Path) -> dict[str, Search]:
    from sift.integrations.stores.sqlite import SqliteCorpus

    store = SqliteCorpus(store_dir / "store")

    def hits(found: Any) -> Result:
        return [[h.chunk.chunk_id, h.chunk.doc_id, h.score] for h in found]

    def mode(m: str) -> Search:
        return lambda q, f: hits(store.search(q, k=K, mode=m, filters=f["sift"]))

    searches = {m: mode(m) for m in ("bm25", "dense", "hybrid")}
    searches["grep"] = lambda p, f: hits(store.grep(p, k=K, filters=f["sift"]).hits)
    # Not timed: the bm25 oracle (the unfiltered ranking as deep as k goes).
    searches["oracle"] = lambda q, f: hits(store.search(q, k=ORACLE_K, mode="bm25"))
    return searches


def _open_lancedb(store_dir: Path) -> dict[str, Search]:
    import lancedb

    table = lancedb.connect(str(store_dir / "lance")).open_table("chunks")
    embed = _query_vector()

    def run(search: Any, f: dict[str, Any], column: str) -> list[dict[str, Any]]:
        if f["lance"]:
            search = search.where(f["lance"], prefilter=True)
        # The score column named, or Lance logs a deprecation warning per search.
        rows: list[dict[str, Any]] = search.select(["id", "doc_id", column]).limit(K).to_list()
        return rows

    def bm25(q: str, f: dict[str, Any]) -> Result:
        rows = run(table.search(q, query_type="fts"), f, "_score")
        return [[row["id"], row["doc_id"], row["_score"]] for row in rows]

    def dense(q: str, f: dict[str, Any]) -> Result:
        search: Any = table.search(embed(q), vector_column_name="vector")
        rows = run(search.distance_type("cosine"), f, "_distance")
        return [[row["id"], row["doc_id"], 1 - row["_distance"]] for row in rows]

    def oracle(q: str, f: dict[str, Any]) -> Result:
        rows = table.search(q, query_type="fts").select(["id", "doc_id", "_score"])
        return [[r["id"], r["doc_id"], r["_score"]] for r in rows.limit(ORACLE_K).to_list()]

    return {"bm25": bm25, "dense": dense, "oracle": oracle}


def _open_chroma(store_dir: Path) -> dict[str, Search]:
    collection = _chroma_client(store_dir).get_collection("chunks", embedding_function=None)
    embed = _query_vector()

    def dense(q: str, f: dict[str, Any]) -> Result:
        found = collection.query(
            query_embeddings=embed(q).reshape(1, -1),
            n_results=K,
            where=f["chroma"],
            include=["metadatas", "distances"],
        )
        metas = (found["metadatas"] or [[]])[0]
        distances = (found["distances"] or [[]])[0]
        return [
            [cid, str(meta["doc_id"]), 1 - float(d)]
            for cid, meta, d in zip(found["ids"][0], metas, distances, strict=True)
        ]

    return {"dense": dense}


PARTS: dict[str, tuple[Callable[[Path], Any], Callable[..., None], Callable[[Path], Any]]] = {
    "sift": (_load_sift, _ingest_sift, _open_sift),
    "lancedb": (
        _load_chunks,
        lambda g, s, p: _ingest_lancedb(g, s, p, vector_index=False),
        _open_lancedb,
    ),
    "chroma": (_load_chunks, _ingest_chroma, _open_chroma),
}


def _inputs(data: Path, queries: int) -> dict[str, Any]:
    """The size's queries (the first `queries`), grep words and filters."""
    inputs: dict[str, Any] = json.loads((data / "inputs.json").read_text())
    inputs["queries"] = inputs["queries"][:queries]
    inputs["patterns"] = inputs["patterns"][: max(WARMUP, queries // 3)]
    return inputs


def worker(
    system: str, data: Path, store_dir: Path, modes: Sequence[str], queries: int
) -> dict[str, Any]:
    """One fresh store of `system` over `data`: ingest, then every query in every
    (mode, filter), with the hits."""
    load, ingest, open_store = PARTS[system]
    inputs = _inputs(data, queries)
    with _progress() as progress:
        result = timed_ingest(system, data, store_dir, progress, load, ingest)
        searches = open_store(store_dir)
        result["modes"] = {}
        for mode in [m for m in modes if m in searches]:
            texts = inputs["patterns"] if mode == "grep" else inputs["queries"]
            result["modes"][mode] = {}
            task = progress.add_task(f"{system} {mode}", total=len(texts) * len(inputs["filters"]))
            for spec in inputs["filters"]:
                for text in texts[:WARMUP]:
                    searches[mode](text, spec)
                times, hits = [], []
                for text in texts:
                    begin = time.perf_counter()
                    found = searches[mode](text, spec)
                    times.append((time.perf_counter() - begin) * 1000)
                    hits.append(found)
                    progress.advance(task)
                result["modes"][mode][spec["name"]] = {
                    "p50": percentile(times, 50),
                    "p95": percentile(times, 95),
                    "hits": hits,
                }
            progress.remove_task(task)
        if "oracle" in searches and "bm25" in modes:
            none = inputs["filters"][0]
            result["oracle_bm25"] = [searches["oracle"](q, none) for q in inputs["queries"]]
    result["disk_mb"] = _disk_mb(store_dir)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["load_end"] = _load()
    return result


# ----------------------------------------------------------------------------- checks


class Truth:
    """What a size's searches are checked against: which chunks each filter allows, every
    chunk's static score for every query, and the grep words' matching chunks."""

    def __init__(self, data: Path, queries: int) -> None:
        from sift.filters import Filter, matches

        inputs = _inputs(data, queries)
        self.filters: list[dict[str, Any]] = inputs["filters"]
        self.queries: list[str] = inputs["queries"]
        self.patterns: list[str] = inputs["patterns"]
        chunks = _read_jsonl(data / "chunks.jsonl")
        self.row = {c["id"]: i for i, c in enumerate(chunks)}
        docs = {c["doc_id"]: c for c in chunks}
        self.allowed_docs: dict[str, set[str]] = {}
        self.mask: dict[str, np.ndarray] = {}
        for spec in self.filters:
            test = Filter.of(spec["sift"])
            ok = {d for d, c in docs.items() if test is None or matches(test, c)}
            self.allowed_docs[spec["name"]] = ok
            self.mask[spec["name"]] = np.fromiter((c["doc_id"] in ok for c in chunks), bool)
        embed = _query_vector()
        vectors = np.load(data / "vectors.npy")
        query_vectors = np.stack([embed(q) for q in self.queries])
        query_vectors /= np.linalg.norm(query_vectors, axis=1, keepdims=True)
        self.scores = vectors @ query_vectors.T  # chunks x queries
        del vectors
        body = [c["text"].split("\n", 1)[-1] for c in chunks]
        self.grep_rows = [
            np.fromiter((p in text for text in body), bool, count=len(body)) for p in self.patterns
        ]

    def selectivity(self, name: str) -> float:
        return float(self.mask[name].mean())

    def dense_oracle(self, name: str, qi: int) -> np.ndarray:
        column = self.scores[self.mask[name], qi]
        top = min(K, column.size)
        return np.sort(np.partition(column, column.size - top)[column.size - top :])[::-1]


def _same_scores(got: Sequence[float], want: Sequence[float] | np.ndarray) -> bool:
    return len(got) == len(want) and bool(np.allclose(got, want, rtol=0, atol=TOLERANCE))


def check(run: dict[str, Any], truth: Truth) -> None:
    """Replaces every (mode, filter)'s hits in `run` with its correctness counts."""
    oracle = run.pop("oracle_bm25", None)
    for mode, by_filter in run["modes"].items():
        for name, entry in by_filter.items():
            allowed = truth.allowed_docs[name]
            counts: dict[str, float] = {"searches": 0, "wrong": 0, "short": 0}
            if mode == "dense" or (mode == "bm25" and oracle is not None):
                counts |= {"exact_checked": 0, "exact": 0}
            if mode == "dense":
                counts["recall"] = 0.0
            for qi, hits in enumerate(entry.pop("hits")):
                counts["searches"] += 1
                counts["wrong"] += sum(1 for _, doc, _ in hits if doc not in allowed)
                if mode == "dense":
                    want = truth.dense_oracle(name, qi)
                    available = int(truth.mask[name].sum())
                    got = sorted((truth.scores[truth.row[c], qi] for c, _, _ in hits), reverse=True)
                    counts["exact_checked"] += 1
                    counts["exact"] += _same_scores(got, want)
                    counts["recall"] += sum(1 for s in got if s >= want[-1] - TOLERANCE) / max(
                        1, len(want)
                    )
                elif mode == "grep":
                    available = int((truth.grep_rows[qi] & truth.mask[name]).sum())
                elif mode == "hybrid":  # its dense half can return any matching chunk
                    available = int(truth.mask[name].sum())
                else:
                    ranked = (oracle or [[]] * len(truth.queries))[qi]
                    kept = [s for c, d, s in ranked if d in allowed]
                    available = len(kept)
                    decided = len(kept) >= K or len(ranked) < ORACLE_K
                    if mode == "bm25" and oracle is not None and decided:
                        counts["exact_checked"] += 1
                        counts["exact"] += _same_scores([s for _, _, s in hits], kept[:K])
                counts["short"] += len(hits) < min(K, available)
            if "recall" in counts:
                counts["recall"] /= max(1, counts["searches"])
            entry["checks"] = counts


# ----------------------------------------------------------------------------- rounds


def measure(args: argparse.Namespace) -> dict[str, Any]:
    workdir, interpreters, report = begin(args)
    systems = list(interpreters)
    report |= {"modes": args.modes, "queries": args.queries, "sizes": {}}
    total = len(args.sizes) * args.rounds * len(systems)
    count = 0
    for size in args.sizes:
        began = time.perf_counter()
        data = prepare(size, workdir)
        prepared = time.perf_counter() - began
        console.log(f"{size}: data ready in {prepared:.0f} s; checking data")
        truth = Truth(data, args.queries)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in systems}
        for r in range(args.rounds):
            for system in order(systems, r):
                count += 1
                console.log(f"[{count}/{total}] {size}, round {r + 1}/{args.rounds}: {system}")
                interpreter, cwd = interpreters[system]
                extra = ["--modes", *args.modes, "--queries", str(args.queries)]
                run = run_one(system, data, interpreter, cwd, workdir, __file__, extra)
                check(run, truth)
                run["round"] = r + 1
                runs[system].append(run)
                console.log(f"  {run['passages_per_s']:,.0f} passages/s; " + _brief(run))
        report["sizes"][size] = {
            "passages": SIZES[size],
            "chunks": len(truth.row),
            "prepare_s": prepared,
            "wall_s": time.perf_counter() - began,
            # This process's peak so far: preparing the data and the checks' truth.
            "parent_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "selectivity": {
                spec["name"]: truth.selectivity(spec["name"]) for spec in truth.filters
            },
            "matching": {name: int(mask.sum()) for name, mask in truth.mask.items()},
            "runs": runs,
            "summary": {name: fuse(runs[name]) for name in systems},
        }
    return report


def _brief(run: dict[str, Any]) -> str:
    parts = []
    for mode, by_filter in run["modes"].items():
        bad = sum(e["checks"]["wrong"] + e["checks"]["short"] for e in by_filter.values())
        p50s = [e["p50"] for e in by_filter.values()]
        parts.append(
            f"{mode} p50 {by_filter['none']['p50']:.1f} ms unfiltered, "
            f"{max(p50s):.1f} worst, {bad} wrong/short"
        )
    return "; ".join(parts)


def fuse(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One system's rounds: the median of each latency and of the ingest pace, with the
    range, and the correctness counts summed over the rounds."""
    out: dict[str, Any] = {"rounds": len(runs), "modes": {}}
    for key in ("passages_per_s", "disk_mb", "peak_rss_mb"):
        values = [float(r[key]) for r in runs]
        out[key] = statistics.median(values)
        out[f"{key}_range"] = [min(values), max(values)]
    for mode, by_filter in runs[0]["modes"].items():
        out["modes"][mode] = {}
        for name in by_filter:
            entries = [r["modes"][mode][name] for r in runs]
            row: dict[str, Any] = {}
            for stat in ("p50", "p95"):
                values = [float(e[stat]) for e in entries]
                row[stat] = statistics.median(values)
                row[f"{stat}_range"] = [min(values), max(values)]
            checks: dict[str, float] = {}
            for e in entries:
                for key, value in e["checks"].items():
                    checks[key] = checks.get(key, 0) + value
            if "recall" in checks:
                checks["recall"] /= len(entries)
            row["checks"] = checks
            out["modes"][mode][name] = row
    return out


# ----------------------------------------------------------------------------- report

LABELS = {"sift": "sift", "sift-base": "sift (baseline)", "lancedb": "LanceDB", "chroma": "Chroma"}


def _lines(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(system, mode) pairs present, in a stable order."""
    first = next(iter(report["sizes"].values()))["summary"]
    return [(s, m) for s in first for m in ALL_MODES if m in first[s]["modes"]]


def targets(report: dict[str, Any]) -> list[str]:
    """Where the issue's targets stand: sift's filtered p50 against its unfiltered p50
    (at most 1.5x) and against LanceDB's filtered p50 (at most 1x), worst filter each."""
    lines = []
    for size, block in report["sizes"].items():
        lance = block["summary"].get("lancedb", {"modes": {}})
        for system in ("sift", "sift-base"):
            if system in block["summary"]:
                lines += _standing(f"{size} {LABELS[system]}", block["summary"][system], lance)
    return lines


def _standing(label: str, sift: dict[str, Any], lance: dict[str, Any]) -> list[str]:
    lines = []
    for mode, by_filter in sift["modes"].items():
        base = by_filter["none"]["p50"]
        named = [n for n in by_filter if n != "none"]
        worst = max(named, key=lambda n: by_filter[n]["p50"])
        own = by_filter[worst]["p50"] / base
        text = (
            f"- {label} {mode}: filtered p50 up to {own:.2f}x unfiltered "
            f"({worst}: {by_filter[worst]['p50']:.1f} ms against {base:.1f}) "
            f"[{'met' if own <= 1.5 else 'NOT met'}, target 1.5x]"
        )
        theirs = lance["modes"].get(mode)
        if theirs:
            rival = max(named, key=lambda n: by_filter[n]["p50"] / theirs[n]["p50"])
            versus = by_filter[rival]["p50"] / theirs[rival]["p50"]
            text += (
                f"; up to {versus:.2f}x LanceDB's prefilter p50 ({rival}) "
                f"[{'met' if versus <= 1 else 'NOT met'}, target 1x]"
            )
        lines.append(text)
    return lines


def _fmt_checks(checks: dict[str, float]) -> str:
    text = f"{int(checks['wrong'])} / {int(checks['short'])}"
    if "exact_checked" in checks:
        text += f" / {int(checks['exact'])} of {int(checks['exact_checked'])}"
    else:
        text += " / n/a"
    return text + (f" / {checks['recall']:.3f}" if "recall" in checks else " / n/a")


def markdown(report: dict[str, Any]) -> str:
    pairs = _lines(report)
    bad: dict[str, int] = {}
    for size, block in report["sizes"].items():
        for system, row in block["summary"].items():
            for mode, by_filter in row["modes"].items():
                for name, entry in by_filter.items():
                    count = int(entry["checks"]["wrong"] + entry["checks"]["short"])
                    if count:
                        bad[f"{size} {LABELS[system]} {mode} {name}"] = count
    where = "; ".join(f"{place}: {count}" for place, count in bad.items())
    lines = [
        "# Filtered search: sift against LanceDB (prefilter) and Chroma (where)",
        "",
        f"Regenerated with `{report.get('command', '?')}` on sift {report['sift']}"
        + (f", baseline {report['baseline']}" if report.get("baseline") else "")
        + f"; {report['machine']}.",
        "",
        "Where things stand (median p50 over rounds; issue 41's targets):",
        "",
        *targets(report),
        f"- correctness: {sum(bad.values())} results outside the filter or searches short "
        "of k, all systems, sizes and rounds together" + (f" ({where})" if where else ""),
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()) + ".",
    ]
    for size, block in report["sizes"].items():
        summary = block["summary"]
        lines += [
            "",
            f"## {size}: {block['passages']:,} passages, {block['chunks']:,} chunks "
            f"(prepared in {block['prepare_s']:.0f} s, whole size {block['wall_s']:.0f} s, "
            f"checking process peak {block.get('parent_peak_rss_mb', 0):,.0f} MB)",
            "",
            "p50 / p95 ms:",
            "",
            "| filter | share | chunks | "
            + " | ".join(f"{LABELS[s]} {m}" for s, m in pairs)
            + " |",
            "|---|---:|---:|" + "---:|" * len(pairs),
        ]
        for name, share in block["selectivity"].items():
            cells = []
            for system, mode in pairs:
                entry = summary[system]["modes"][mode][name]
                cells.append(f"{entry['p50']:.1f} / {entry['p95']:.1f}")
            lines.append(
                f"| {name} | {share:.4%} | {block['matching'][name]:,} | "
                + " | ".join(cells)
                + " |"
            )
        lines += [
            "",
            "Correctness over every round (wrong results / short searches / exact of checked "
            "/ dense recall@10):",
            "",
            "| system | mode | " + " | ".join(block["selectivity"]) + " |",
            "|---|---|" + "---|" * len(block["selectivity"]),
        ]
        for system, mode in pairs:
            entries = summary[system]["modes"][mode]
            cells = [_fmt_checks(entries[name]["checks"]) for name in block["selectivity"]]
            lines.append(f"| {LABELS[system]} | {mode} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "| system | ingest passages/s (range) | disk MB | peak RSS MB |",
            "|---|---:|---:|---:|",
        ]
        for system, row in summary.items():
            low, high = row["passages_per_s_range"]
            lines.append(
                f"| {LABELS[system]} | {row['passages_per_s']:,.0f} ({low:,.0f}-{high:,.0f}) | "
                f"{row['disk_mb']:,.0f} | {row['peak_rss_mb']:,.0f} |"
            )
        if "sift-base" in block["runs"] and "sift" in block["runs"]:
            paired = _paired(
                block["runs"]["sift"], block["runs"]["sift-base"], lambda r: r["passages_per_s"]
            )
            lines += ["", f"sift's ingest pace / the baseline's, paired by round: {paired}"]
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = list(report["sizes"])
    fig, axes = plt.subplots(1, len(sizes), figsize=(7 * len(sizes), 5.5), squeeze=False)
    colors = plt.get_cmap("tab20").colors  # type: ignore[attr-defined]
    for ax, size in zip(axes[0], sizes, strict=True):
        block = report["sizes"][size]
        share = block["selectivity"]
        for i, (system, mode) in enumerate(_lines(report)):
            entries = block["summary"][system]["modes"][mode]
            color = colors[i % len(colors)]
            names = sorted(SHARES, key=lambda n: -share[n])
            ax.plot(
                [share[n] for n in names],
                [entries[n]["p50"] for n in names],
                marker="o",
                color=color,
                linestyle="--" if system == "sift-base" else "-",
                label=f"{LABELS[system]} {mode}",
            )
            ax.axhline(entries["none"]["p50"], color=color, linestyle=":", linewidth=0.8)
            for name, marker in (("date", "s"), ("t5+kind0", "^")):
                ax.scatter(share[name], entries[name]["p50"], marker=marker, color=color)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("share of documents the filter selects (o: tenant, ■: date, ▲: and)")
        ax.set_ylabel("p50 ms (dotted: unfiltered)")
        ax.set_title(f"{size}: {block['chunks']:,} chunks")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"Filtered search latency (median of rounds); sift {report['sift'][:7]}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=["100k", "1m"])
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--modes", nargs="+", choices=ALL_MODES, default=list(ALL_MODES))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--queries",
        type=int,
        default=QUERIES,
        help=f"timed queries per (mode, filter), at most {QUERIES}; grep words: a third",
    )
    common_options(parser, "sift-filters", list(PARTS))  # --plot: p50 against selectivity
    args = parser.parse_args()
    if args.worker:
        result = worker(args.worker, Path(args.data), Path(args.store), args.modes, args.queries)
        Path(args.out).write_text(json.dumps(result))
        return
    if args.render:
        report = json.loads(Path(args.render).read_text())
    else:
        report = measure(args)
        report["command"] = " ".join(["python", "benchmarks/filters.py", *sys.argv[1:]])
    publish(args, report, markdown, plot)


if __name__ == "__main__":
    main()
