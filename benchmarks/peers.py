"""sift's embedded store beside the embedded stores a user would pick instead.

    pip install -e ".[peers]"
    python benchmarks/peers.py [--sizes dev 100k] [--rounds-dev 3] [--rounds-100k 2]
        [--systems sift lancedb lancedb-ivf chroma] [--baseline PATH]
        [--json benchmarks/results/peers.json] [--markdown benchmarks/results/peers.md]
        [--plot benchmarks/results/peers.png]
    python benchmarks/peers.py --render benchmarks/results/peers.json   # the tables again

Systems, each given the same chunks and the same vectors:

- sift: `SqliteCorpus` with the static embedder. Its ingest is the whole of it: it is given
  the passages and chunks and embeds them itself (SQLite + tantivy + exact vectors).
  Searches: `search(mode=bm25|dense|hybrid, k=10)`.
- lancedb: LanceDB (embedded, `lancedb.connect`), one table of sift's chunks with sift's
  vectors, its native full-text index on title + text, no vector index (flat search).
  Searches: full-text, vector (cosine), hybrid (its default reranker, RRF).
- lancedb-ivf: the same, plus its default vector index (IVF-PQ, cosine) built at ingest.
- chroma: embedded Chroma (`PersistentClient`), one collection (HNSW, cosine) of sift's
  chunks, their texts and sift's vectors. Vector search only: embedded Chroma has no
  ranked lexical search (its `where_document` filters, it does not rank), so it has no
  BM25 or hybrid row.
- sift-base (with `--baseline PATH`): sift at another commit, `PATH` being its checkout
  with its own venv in `PATH/.venv`, run by that venv's Python through this script's
  worker (which uses only `SqliteCorpus`, `Document` and `get_embedder`).

The chunks are sift's (`chunk_document`, 512 tokens) and the vectors its static embedder's
over `title + "\\n" + chunk`, made once before any system runs; the peers are given them
ready, so their ingest does not pay for chunking or embedding while sift's does. Every
timed search, a peer's included, starts from the question text: the peers embed the
question with the same static embedder inside the timed call, as sift does.

Sizes: `dev` is each of the three dev corpora in ../shared/benchmarks (HotpotQA 6,640,
MuSiQue 6,417, 2WikiMultihopQA 7,005 passages) with its own dev questions. `100k` is the
three dev corpora together (20,062 passages) plus 79,938 synthetic passages made by
store_speed.py's generator (the real corpora's word frequencies, 60-140 words each), with
all 868 dev questions: the same gold passages among five times the distractors.

Each (size, round, system) runs in a fresh subprocess on a fresh store; the order of the
systems rotates each round. Ingest is passages per second from an empty store to a
committed, searchable one (indexes built). Latency is wall time per search over every dev
question after 10 warm-up searches, p50 / p95 in ms; all-gold@10 is the share of questions
whose gold passages (or their near-duplicates) are all among the documents of the first
10 chunks, question text as the query, one search. Disk is the store's size on disk after
the searches; peak memory the subprocess's maximum resident set (it includes the
passages or chunks and vectors it was given, the static model and the Python runtime).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from store_speed import _progress, machine, synthetic  # noqa: E402  (beside this script)

DATA = HERE.parent / ".." / "shared" / "benchmarks"
DEV = ("hotpotqa", "musique", "2wikimultihopqa")
LARGE = 100_000
SYSTEMS = ("sift", "lancedb", "lancedb-ivf", "chroma")
MODES: dict[str, tuple[str, ...]] = {
    "sift": ("bm25", "dense", "hybrid"),
    "sift-base": ("bm25", "dense", "hybrid"),
    "lancedb": ("bm25", "dense", "hybrid"),
    "lancedb-ivf": ("bm25", "dense", "hybrid"),
    "chroma": ("dense",),
}
K = 10
WARMUP = 10
BATCH = 4096

console = Console(stderr=True)


# ----------------------------------------------------------------------------- pure parts


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank `q`-th percentile (0 < q <= 100) of `values`."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, int(np.ceil(q / 100 * len(ordered))))
    return float(ordered[rank - 1])


def ranked_docs(chunk_doc_ids: Iterable[str], k: int = K) -> list[str]:
    """The documents of the first `k` chunks, each once, best first."""
    return list(dict.fromkeys(list(chunk_doc_ids)[:k]))


def all_gold(ranked: Sequence[str], gold: Sequence[str], near: dict[str, list[str]]) -> bool:
    """Every gold passage, or one of its near-duplicates, is among `ranked`."""
    found = set(ranked)
    return bool(gold) and all(g in found or found & set(near.get(g, ())) for g in gold)


def quality(
    questions: Sequence[dict[str, Any]], ranked: Sequence[Sequence[str]]
) -> dict[str, float]:
    """all-gold@10 per dataset of `questions`, `ranked[i]` being question i's documents."""
    if len(questions) != len(ranked):
        raise ValueError(f"{len(ranked)} rankings for {len(questions)} questions")
    by_set: dict[str, list[float]] = {}
    for q, docs in zip(questions, ranked, strict=True):
        hit = all_gold(docs, q["supporting_doc_ids"], q.get("gold_near_duplicate_doc_ids") or {})
        by_set.setdefault(q["dataset"], []).append(float(hit))
    return {name: statistics.fmean(hits) for name, hits in sorted(by_set.items())}


def order(systems: Sequence[str], round_index: int) -> list[str]:
    """The systems' order in a round: rotated by one each round, so that none is always
    first (a fresh box) or last (a box warmed and loaded by the others)."""
    shift = round_index % len(systems)
    return [*systems[shift:], *systems[:shift]]


NUMBERS = ("passages_per_s", "disk_mb", "peak_rss_mb")


def fuse_rounds(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One system's rounds at one size as one row: the median of each figure over the
    rounds (three rounds: the middle one; two: their mean), with its spread (min, max),
    and the quality of the first round (searches are deterministic; the rounds' quality
    is checked to agree and any disagreement is reported)."""
    if not runs:
        raise ValueError("no runs")
    out: dict[str, Any] = {"rounds": len(runs)}
    for key in NUMBERS:
        values = [float(r[key]) for r in runs]
        out[key] = statistics.median(values)
        out[f"{key}_range"] = [min(values), max(values)]
    out["modes"] = {}
    for mode in runs[0]["modes"]:
        rows = [r["modes"][mode] for r in runs]
        entry: dict[str, Any] = {}
        for stat in ("p50", "p95"):
            values = [float(row[stat]) for row in rows]
            entry[stat] = statistics.median(values)
            entry[f"{stat}_range"] = [min(values), max(values)]
        entry["all_gold"] = rows[0]["all_gold"]
        spread = {
            name: [row["all_gold"][name] for row in rows]
            for name in rows[0]["all_gold"]
            if len({row["all_gold"][name] for row in rows}) > 1
        }
        if spread:
            entry["all_gold_rounds"] = spread
        out["modes"][mode] = entry
    return out


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


# ----------------------------------------------------------------------------- data


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def _passages(size: str) -> Iterator[dict[str, Any]]:
    if size in DEV:
        yield from _read_jsonl(DATA / size / "corpus.jsonl")
        return
    real = 0
    for name in DEV:
        for row in _read_jsonl(DATA / name / "corpus.jsonl"):
            real += 1
            yield row
    yield from synthetic(LARGE - real)


def _questions(size: str) -> list[dict[str, Any]]:
    names = [size] if size in DEV else list(DEV)
    keep = ("id", "dataset", "question", "supporting_doc_ids", "gold_near_duplicate_doc_ids")
    out = []
    for name in names:
        for q in _read_jsonl(DATA / name / "questions.jsonl"):
            out.append({key: q.get(key) for key in keep} | {"dataset": name})
    return out


def prepare(size: str, workdir: Path) -> Path:
    """The size's passages, questions, sift's chunks and their static vectors, written once
    under `workdir/size` (reused when already there)."""
    folder = workdir / size
    if (folder / "done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    passages = list(_passages(size))
    chunks, vectors = chunk_and_embed(passages, size)
    _write_jsonl(folder / "passages.jsonl", passages)
    _write_jsonl(folder / "chunks.jsonl", chunks)
    np.save(folder / "vectors.npy", vectors)
    _write_jsonl(folder / "questions.jsonl", _questions(size))
    (folder / "done").write_text(f"{len(passages)} passages, {len(chunks)} chunks\n")
    return folder


def chunk_and_embed(
    passages: Sequence[dict[str, Any]], label: str
) -> tuple[list[dict[str, Any]], np.ndarray]:
    """sift's chunks of `passages` (id, doc_id, text) and their static vectors."""
    from sift.integrations.chunking import chunk_document
    from sift.integrations.embedders import get_embedder
    from sift.types import Document

    embedder = get_embedder("static")
    chunks: list[dict[str, Any]] = []
    blocks: list[np.ndarray] = []
    with _progress() as progress:
        task = progress.add_task(f"chunk and embed {label}", total=len(passages))
        for start in range(0, len(passages), BATCH):
            texts = []
            for row in passages[start : start + BATCH]:
                doc = Document(id=row["id"], title=row.get("title", ""), text=row["text"])
                for chunk in chunk_document(doc, 512):
                    # What sift embeds for a chunk (stores/_documents.py: chunk_and_embed).
                    text = f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text
                    chunks.append({"id": chunk.chunk_id, "doc_id": doc.id, "text": text})
                    texts.append(text)
            blocks.append(np.asarray(embedder.embed(texts), dtype=np.float32))
            progress.advance(task, min(BATCH, len(passages) - start))
    return chunks, np.vstack(blocks)


# ----------------------------------------------------------------------------- worker


def _disk_mb(path: Path) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue
    return total / 2**20


Search = Callable[[str], list[str]]


def _load_sift(data: Path) -> Any:
    from sift.types import Document

    return [Document.model_validate(row) for row in _read_jsonl(data / "passages.jsonl")]


def _ingest_sift(docs: Any, store_dir: Path, progress: Progress) -> None:
    from sift.integrations.embedders import get_embedder
    from sift.integrations.stores.sqlite import SqliteCorpus

    task = progress.add_task("ingest", total=len(docs))
    store = SqliteCorpus(store_dir / "store", embedder=get_embedder("static"))
    report = store.upsert(docs, on_progress=lambda n: progress.advance(task, n))
    if report.failed:
        raise RuntimeError(f"sift refused {len(report.failed)} passages: {report.failed[:3]}")
    store.close()
    progress.remove_task(task)


def _open_sift(store_dir: Path) -> dict[str, Search]:
    from sift.integrations.stores.sqlite import SqliteCorpus

    store = SqliteCorpus(store_dir / "store")

    def mode(m: str) -> Search:
        return lambda q: [hit.chunk.doc_id for hit in store.search(q, k=K, mode=m)]

    return {m: mode(m) for m in MODES["sift"]}


def _load_chunks(data: Path) -> Any:
    return _read_jsonl(data / "chunks.jsonl"), np.load(data / "vectors.npy")


def _query_vector() -> Callable[[str], np.ndarray]:
    from sift.integrations.embedders import get_embedder

    embedder = get_embedder("static")
    return lambda q: np.asarray(embedder.embed([q])[0], dtype=np.float32)


def _extra_fields(chunks: Sequence[dict[str, Any]]) -> list[str]:
    """The chunks' fields beyond id, doc_id and text (none here; filters.py adds metadata),
    stored by the peers as columns or metadata."""
    return [key for key in (chunks[0] if chunks else {}) if key not in ("id", "doc_id", "text")]


def _ingest_lancedb(given: Any, store_dir: Path, progress: Progress, *, vector_index: bool) -> None:
    import lancedb
    import pyarrow as pa

    chunks, vectors = given
    dim = vectors.shape[1]
    extra = _extra_fields(chunks)
    schema = pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("doc_id", pa.string()),
            pa.field("text", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
            *(
                pa.field(key, pa.int64() if isinstance(chunks[0][key], int) else pa.string())
                for key in extra
            ),
        ]
    )
    task = progress.add_task("ingest", total=len(chunks))
    db = lancedb.connect(str(store_dir / "lance"))
    table = db.create_table("chunks", schema=schema)
    for at in range(0, len(chunks), BATCH):
        part = chunks[at : at + BATCH]
        block = vectors[at : at + len(part)]
        table.add(
            pa.table(
                {
                    "id": [c["id"] for c in part],
                    "doc_id": [c["doc_id"] for c in part],
                    "text": [c["text"] for c in part],
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(block.reshape(-1)), dim),
                    **{key: [c[key] for c in part] for key in extra},
                },
                schema=schema,
            )
        )
        progress.advance(task, len(part))
    table.create_fts_index("text")
    if vector_index:
        table.create_index(metric="cosine", vector_column_name="vector")
    progress.remove_task(task)


def _open_lancedb(store_dir: Path) -> dict[str, Search]:
    import lancedb

    table = lancedb.connect(str(store_dir / "lance")).open_table("chunks")
    embed = _query_vector()

    def docs(rows: list[dict[str, Any]]) -> list[str]:
        return [row["doc_id"] for row in rows]

    def bm25(q: str) -> list[str]:
        return docs(table.search(q, query_type="fts").select(["doc_id"]).limit(K).to_list())

    def dense(q: str) -> list[str]:
        search: Any = table.search(embed(q), vector_column_name="vector")
        search = search.distance_type("cosine")
        return docs(search.select(["doc_id"]).limit(K).to_list())

    def hybrid(q: str) -> list[str]:
        search: Any = table.search(query_type="hybrid", vector_column_name="vector")
        search = search.vector(embed(q)).text(q).distance_type("cosine")
        return docs(search.select(["doc_id"]).limit(K).to_list())

    return {"bm25": bm25, "dense": dense, "hybrid": hybrid}


def _chroma_client(store_dir: Path) -> Any:
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(
        path=str(store_dir / "chroma"), settings=Settings(anonymized_telemetry=False)
    )


def _ingest_chroma(given: Any, store_dir: Path, progress: Progress) -> None:
    chunks, vectors = given
    extra = _extra_fields(chunks)
    client = _chroma_client(store_dir)
    collection = client.create_collection(
        "chunks", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
    )
    step = min(BATCH, client.get_max_batch_size())
    task = progress.add_task("ingest", total=len(chunks))
    for at in range(0, len(chunks), step):
        part = chunks[at : at + step]
        collection.add(
            ids=[c["id"] for c in part],
            embeddings=vectors[at : at + len(part)],
            documents=[c["text"] for c in part],
            metadatas=[{"doc_id": c["doc_id"], **{key: c[key] for key in extra}} for c in part],
        )
        progress.advance(task, len(part))
    progress.remove_task(task)


def _open_chroma(store_dir: Path) -> dict[str, Search]:
    collection = _chroma_client(store_dir).get_collection("chunks", embedding_function=None)
    embed = _query_vector()

    def dense(q: str) -> list[str]:
        found = collection.query(
            query_embeddings=embed(q).reshape(1, -1), n_results=K, include=["metadatas"]
        )
        return [str(meta["doc_id"]) for meta in (found["metadatas"] or [[]])[0]]

    return {"dense": dense}


Ingest = Callable[[Any, Path, Progress], None]
Opener = Callable[[Path], dict[str, Search]]
# Per system: what it is given (read before the clock), its ingest, its searches.
SYSTEM_PARTS: dict[str, tuple[Callable[[Path], Any], Ingest, Opener]] = {
    "sift": (_load_sift, _ingest_sift, _open_sift),
    "lancedb": (
        _load_chunks,
        lambda g, s, p: _ingest_lancedb(g, s, p, vector_index=False),
        _open_lancedb,
    ),
    "lancedb-ivf": (
        _load_chunks,
        lambda g, s, p: _ingest_lancedb(g, s, p, vector_index=True),
        _open_lancedb,
    ),
    "chroma": (_load_chunks, _ingest_chroma, _open_chroma),
}


def timed_ingest(
    system: str,
    data: Path,
    store_dir: Path,
    progress: Progress,
    load: Callable[[Path], Any],
    ingest: Callable[[Any, Path, Progress], None],
) -> dict[str, Any]:
    """A worker's result so far: `system`'s ingest of `data` into `store_dir`, timed."""
    passages = int((data / "done").read_text().split()[0])
    result: dict[str, Any] = {"system": system, "passages": passages, "load_start": _load()}
    # What the system is given is read before the clock starts: the clock times the store.
    given = load(data)
    start = time.perf_counter()
    ingest(given, store_dir, progress)
    result["ingest_s"] = time.perf_counter() - start
    result["passages_per_s"] = passages / result["ingest_s"]
    return result


def worker(system: str, data: Path, store_dir: Path) -> dict[str, Any]:
    """One fresh store of `system` over `data`: ingest, then every question in every mode."""
    load, ingest, open_store = SYSTEM_PARTS[system]
    questions = _read_jsonl(data / "questions.jsonl")
    with _progress() as progress:
        result = timed_ingest(system, data, store_dir, progress, load, ingest)
        # Searches on a freshly opened store, as a CLI or a server would see it.
        searches = open_store(store_dir)
        result["modes"] = {}
        for mode, search in searches.items():
            for q in questions[:WARMUP]:
                search(q["question"])
            times, ranked = [], []
            task = progress.add_task(f"{system} {mode}", total=len(questions))
            for q in questions:
                begin = time.perf_counter()
                docs = search(q["question"])
                times.append((time.perf_counter() - begin) * 1000)
                ranked.append(ranked_docs(docs))
                progress.advance(task)
            progress.remove_task(task)
            result["modes"][mode] = {
                "p50": percentile(times, 50),
                "p95": percentile(times, 95),
                "ranked": ranked,
            }
    result["disk_mb"] = _disk_mb(store_dir)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["load_end"] = _load()
    return result


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


# ----------------------------------------------------------------------------- rounds


def _commit(checkout: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(checkout), "log", "-1", "--format=%h %s"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    dirty = subprocess.run(
        ["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return out.stdout.strip()[:90] + (" (with uncommitted changes)" if dirty else "")


def run_one(
    system: str,
    data: Path,
    python: str,
    cwd: Path,
    scratch: Path,
    script: str = __file__,
    extra: Sequence[str] = (),
) -> dict[str, Any]:
    """`system` in a fresh subprocess (its own Python) on a fresh store under `scratch`,
    run by `script`'s `--worker` (this one's, or another benchmark's with the same flags
    and its own `extra` ones)."""
    worker_system = "sift" if system == "sift-base" else system
    with tempfile.TemporaryDirectory(prefix=f"{Path(script).stem}-{system}-", dir=scratch) as tmp:
        out = Path(tmp) / "result.json"
        command = [
            python,
            str(Path(script).resolve()),
            "--worker",
            worker_system,
            "--data",
            str(data),
            "--store",
            str(Path(tmp) / "store"),
            "--out",
            str(out),
            *extra,
        ]
        # Lance logs a deprecation warning per search at WARN; errors still show.
        env = os.environ | {"LANCE_LOG": "error", "RUST_LOG": "error"}
        done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{system} on {data.name} failed (exit {done.returncode})")
        result: dict[str, Any] = json.loads(out.read_text())
    result["system"] = system
    return result


def score(run: dict[str, Any], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with each mode's rankings replaced by its all-gold@10 per dataset."""
    for entry in run["modes"].values():
        entry["all_gold"] = quality(questions, entry.pop("ranked"))
    return run


def interpreters_for(systems: Sequence[str], baseline: str | None) -> dict[str, tuple[str, Path]]:
    """The Python and the working folder of each system's worker: this one's, and with
    a `baseline` checkout, "sift-base" (after "sift") run by its venv's Python."""
    interpreters: dict[str, tuple[str, Path]] = {}
    for name in systems:
        interpreters[name] = (sys.executable, HERE.parent)
        if name == "sift" and baseline:
            base = Path(baseline).resolve()
            python = base / ".venv" / "bin" / "python"
            if not python.exists():
                raise SystemExit(f"--baseline {base}: no venv at {python}")
            interpreters["sift-base"] = (str(python), base)
    return interpreters


def begin(args: argparse.Namespace) -> tuple[Path, dict[str, tuple[str, Path]], dict[str, Any]]:
    """A measurement's work folder (made), its systems' interpreters (`interpreters_for`)
    and the head of its report: the machine, the commits and the versions."""
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "machine": machine(),
        "sift": _commit(HERE.parent),
        "baseline": _commit(Path(args.baseline)) if args.baseline else None,
        "versions": _versions(),
    }
    return workdir, interpreters_for(args.systems, args.baseline), report


def measure(args: argparse.Namespace) -> dict[str, Any]:
    workdir, interpreters, report = begin(args)
    systems = list(interpreters)
    wanted = set(args.sizes) | (set(DEV) if "dev" in args.sizes else set())
    sizes = [name for name in (*DEV, "100k") if name in wanted]
    report["sizes"] = {}
    rounds_of = {size: args.rounds_100k if size == "100k" else args.rounds_dev for size in sizes}
    total = sum(rounds_of.values()) * len(systems)
    count = 0
    for size in sizes:
        data = prepare(size, workdir)
        questions = _read_jsonl(data / "questions.jsonl")
        rounds = rounds_of[size]
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in systems}
        for r in range(rounds):
            for system in order(systems, r):
                count += 1
                console.log(f"[{count}/{total}] {size}, round {r + 1}/{rounds}: {system}")
                interpreter, cwd = interpreters[system]
                run = score(run_one(system, data, interpreter, cwd, workdir), questions)
                run["round"] = r + 1
                runs[system].append(run)
                console.log(
                    f"  {run['passages_per_s']:,.0f} passages/s, "
                    + ", ".join(f"{m} p50 {e['p50']:.1f} ms" for m, e in run["modes"].items())
                    + f", {run['peak_rss_mb']:,.0f} MB peak, {run['disk_mb']:,.0f} MB disk"
                )
        with open(data / "chunks.jsonl", encoding="utf-8") as handle:
            chunks = sum(1 for _ in handle)
        report["sizes"][size] = {
            "passages": runs[systems[0]][0]["passages"],
            "chunks": chunks,
            "questions": len(questions),
            "runs": runs,
            "summary": {name: fuse_rounds(runs[name]) for name in systems},
        }
    return report


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("sift-harness", "lancedb", "pylance", "chromadb", "tantivy", "numpy"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


# ----------------------------------------------------------------------------- report


LABELS = {
    "sift": "sift",
    "sift-base": "sift (baseline)",
    "lancedb": "LanceDB, FTS, no vector index",
    "lancedb-ivf": "LanceDB, FTS + IVF-PQ",
    "chroma": "Chroma (embedded)",
}
SIZE_LABELS = {
    "hotpotqa": "HotpotQA",
    "musique": "MuSiQue",
    "2wikimultihopqa": "2WikiMultihopQA",
    "100k": "100k",
}


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| corpus | system | ingest passages/s | BM25 p50 / p95 ms | dense p50 / p95 ms | "
        "hybrid p50 / p95 ms | disk MB | peak RSS MB |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for size, block in report["sizes"].items():
        for system, row in block["summary"].items():
            cells = []
            for mode in ("bm25", "dense", "hybrid"):
                entry = row["modes"].get(mode)
                cells.append(f"{entry['p50']:.1f} / {entry['p95']:.1f}" if entry else "n/a")
            lines.append(
                f"| {SIZE_LABELS[size]} | {LABELS[system]} | {row['passages_per_s']:,.0f} | "
                + " | ".join(cells)
                + f" | {row['disk_mb']:,.0f} | {row['peak_rss_mb']:,.0f} |"
            )
    lines += ["", *quality_table(report)]
    systems = list(next(iter(report["sizes"].values()))["summary"])
    peers = [name for name in systems if name not in ("sift", "sift-base")]
    lines += ["", *versus(report, "sift", peers)]
    if "sift-base" in systems:
        lines += ["", *versus(report, "sift", ["sift-base"])]
    return "\n".join(lines) + "\n"


SPEED = (("bm25", "BM25"), ("dense", "dense"), ("hybrid", "hybrid"))


def _paired(a: list[dict[str, Any]], b: list[dict[str, Any]], value: Any) -> str:
    """`value(a) / value(b)` per round (the two ran in the same round, back to back or
    near it), as the median with the rounds' range: what alternating rounds are for."""
    ratios = []
    for run_a, run_b in zip(a, b, strict=False):
        x, y = value(run_a), value(run_b)
        if x is not None and y:
            ratios.append(x / y)
    if not ratios:
        return "n/a"
    low, high = min(ratios), max(ratios)
    return f"{statistics.median(ratios):.2f}x ({low:.2f}-{high:.2f})"


def _p50(mode: str) -> Any:
    return lambda run: run["modes"][mode]["p50"] if mode in run["modes"] else None


def versus(report: dict[str, Any], ours: str, theirs: Sequence[str]) -> list[str]:
    """`ours` against each of `theirs`, per size: ingest pace as ours / theirs, latency as
    theirs / ours (above 1: ours is faster), per round, median and range."""
    lines = [
        f"| corpus | {LABELS[ours]} against | ingest | "
        + " | ".join(f"{label} p50" for _, label in SPEED)
        + " | disk | peak RSS |",
        "|---|---|---:|" + "---:|" * len(SPEED) + "---:|---:|",
    ]
    for size, block in report["sizes"].items():
        runs = block["runs"]
        for other in theirs:
            if other not in runs or ours not in runs:
                continue
            cells = [_paired(runs[ours], runs[other], lambda r: r["passages_per_s"])]
            cells += [_paired(runs[other], runs[ours], _p50(mode)) for mode, _ in SPEED]
            cells += [
                _paired(runs[ours], runs[other], lambda r: r["disk_mb"]),
                _paired(runs[ours], runs[other], lambda r: r["peak_rss_mb"]),
            ]
            lines.append(f"| {SIZE_LABELS[size]} | {LABELS[other]} | " + " | ".join(cells) + " |")
    return lines


def quality_table(report: dict[str, Any]) -> list[str]:
    """all-gold@10 per system and mode: one column per dev set searched alone, and one per
    dev set searched within the 100k corpus."""
    columns = [(size, size) for size in DEV if size in report["sizes"]]
    if "100k" in report["sizes"]:
        columns += [("100k", name) for name in DEV]
    systems = list(next(iter(report["sizes"].values()))["summary"])
    head = [SIZE_LABELS[name] + (" in 100k" if size == "100k" else "") for size, name in columns]
    lines = [
        "| system | search | " + " | ".join(head) + " |",
        "|---|---|" + "---:|" * len(columns),
    ]
    for system in systems:
        for mode in ("bm25", "dense", "hybrid"):
            cells = []
            for size, name in columns:
                entry = report["sizes"][size]["summary"][system]["modes"].get(mode)
                cells.append(f"{entry['all_gold'][name]:.3f}" if entry else "n/a")
            if all(c == "n/a" for c in cells):
                continue
            lines.append(f"| {LABELS[system]} | {mode} | " + " | ".join(cells) + " |")
    return lines


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = list(report["sizes"])
    systems = list(next(iter(report["sizes"].values()))["summary"])
    panels = [
        ("ingest passages/s", lambda row: row["passages_per_s"]),
        ("BM25 p50 ms", lambda row: row["modes"].get("bm25", {}).get("p50")),
        ("dense p50 ms", lambda row: row["modes"].get("dense", {}).get("p50")),
        ("hybrid p50 ms", lambda row: row["modes"].get("hybrid", {}).get("p50")),
        ("peak RSS MB", lambda row: row["peak_rss_mb"]),
        ("disk MB", lambda row: row["disk_mb"]),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    width = 0.8 / len(systems)
    x = np.arange(len(sizes))
    for ax, (title, value) in zip(axes.flat, panels, strict=True):
        for i, system in enumerate(systems):
            heights = [value(report["sizes"][s]["summary"][system]) for s in sizes]
            ax.bar(
                x + i * width,
                [np.nan if h is None else h for h in heights],
                width,
                label=LABELS[system],
            )
        ax.set_title(title)
        ax.set_xticks(x + width * (len(systems) - 1) / 2, [SIZE_LABELS[s] for s in sizes])
        if "ms" in title:
            ax.set_yscale("log")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"sift beside embedded peers (median of rounds); sift {report['sift'][:7]}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        nargs="+",
        choices=("dev", "100k", *DEV),
        default=["dev", "100k"],
        help="dev: each dev corpus alone (or name one); 100k: all three and synthetic passages",
    )
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--rounds-dev", type=int, default=3)
    parser.add_argument("--rounds-100k", type=int, default=2)
    common_options(parser, "sift-peers", list(SYSTEM_PARTS))
    args = parser.parse_args()
    if args.worker:
        result = worker(args.worker, Path(args.data), Path(args.store))
        Path(args.out).write_text(json.dumps(result))
        return
    if args.render:
        report = json.loads(Path(args.render).read_text())
    else:
        if not DATA.is_dir():
            raise SystemExit(f"no dev data at {DATA} (../shared/benchmarks beside the checkout)")
        report = measure(args)
        report["command"] = " ".join(["python", "benchmarks/peers.py", *sys.argv[1:]])
    publish(args, report, markdown, plot)


def common_options(parser: argparse.ArgumentParser, workdir: str, workers: list[str]) -> None:
    """The options peers.py shares with filters.py: the baseline, the work folder, the
    outputs, and the worker's hidden flags (what `run_one` passes)."""
    parser.add_argument("--baseline", help="a checkout of sift with its own venv in .venv")
    parser.add_argument(
        "--workdir",
        default=os.path.join(tempfile.gettempdir(), workdir),
        help="where the prepared chunks, vectors and the fresh stores go (reused)",
    )
    parser.add_argument("--json", help="write every run and the summary here")
    parser.add_argument("--markdown", help="print the tables here too")
    parser.add_argument("--plot", help="a PNG of the summary")
    parser.add_argument("--render", help="write --markdown/--plot from an earlier --json (no run)")
    parser.add_argument("--worker", choices=workers, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)


def publish(
    args: argparse.Namespace,
    report: dict[str, Any],
    tables: Callable[[dict[str, Any]], str],
    draw: Callable[[dict[str, Any], Path], None],
) -> None:
    """The tables printed, and written where `common_options`' outputs ask."""
    table = tables(report)
    print(table)
    if args.json and not args.render:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(table)
    if args.plot:
        draw(report, Path(args.plot))


if __name__ == "__main__":
    main()
