"""Page-exact retrieval on real PDFs nobody here wrote: the R manuals Debian ships.

    python benchmarks/pdf_pages.py [--queries 240] [--seed 29]
        [--markdown benchmarks/results/pdf_pages.md] [--json benchmarks/results/pdf_pages.json]

Documents: the seven manuals of Debian's `r-doc-pdf` (R-FAQ, R-admin, R-data, R-exts,
R-intro, R-ints, R-lang; /usr/share/R/doc/manual). The script installs the package when
they are absent (`apt-get install r-doc-pdf`, as root); nothing is committed but this
script and its results.

Ingest: `read_inputs` + `SqliteCorpus.upsert` into a fresh store (the default static
embedder), timed from reading the files to the last commit, in two rounds alternated with
the baseline's; pages/s from each side's best round.

Baseline, same process, same text: the same documents stored without their page tables,
so chunks are packed across pages as sift did before chunks were cut at pages, each cited
by the page its first character is on (what `page` used to say).

Queries, reproducibly (seeded `random.Random(seed)`): every page's sentences (split at
. ! ? followed by white space) of 8 to 40 words, with at least 6 distinct content words
(letters only, 4+ characters, not in a short stop list), that occur once in the whole
corpus (white space normalised) are candidates; pages are drawn at random without
replacement, one candidate sentence each, until `--queries` are drawn. A query is the
sentence's 6 rarest content words (fewest pages holding them; ties by first occurrence),
in sentence order: a keyword query, not the sentence. Its answer is the page the sentence
is on (document id and page number).

Metrics, per mode: page-exact hit@1 and hit@5 (an evidence item among the first k whose
document and `page` are the answer's) and MRR@10 (1/rank of the first such item).
Modes: single-shot hybrid (`sift.graphs.single_shot`, top 10) and agentic
(`sift.graphs.asearch`, heuristic planner, default limits, top 10), on both stores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sift.graphs import asearch, single_shot
from sift.integrations.ingest import read_inputs
from sift.integrations.stores.locations import LOCATION_KEYS
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document, SearchResult

MANUALS = Path("/usr/share/R/doc/manual")
NAMES = ("R-FAQ", "R-admin", "R-data", "R-exts", "R-intro", "R-ints", "R-lang")
PACKAGE = "r-doc-pdf"
ROUNDS = 2
console = Console(stderr=True)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[A-Za-z]{4,}")
_STOP = frozenset(
    [
        "this",
        "that",
        "with",
        "from",
        "have",
        "will",
        "when",
        "which",
        "there",
        "their",
        "then",
        "than",
        "they",
        "them",
        "these",
        "those",
        "been",
        "were",
        "what",
        "where",
        "also",
        "into",
        "only",
        "more",
        "most",
        "some",
        "such",
        "each",
        "other",
        "same",
        "does",
        "used",
        "using",
        "uses",
        "about",
        "after",
        "before",
        "should",
        "would",
        "could",
        "must",
        "following",
        "example",
        "see",
        "section",
        "page",
        "file",
        "files",
        "function",
        "functions",
        "value",
        "values",
        "case",
        "note",
    ]
)


def ensure_manuals() -> list[Path]:
    paths = [MANUALS / f"{name}.pdf" for name in NAMES]
    if all(p.is_file() for p in paths):
        return paths
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        sys.exit(f"the R manuals are absent: run `apt-get install {PACKAGE}` as root, then again")
    console.print(f"installing Debian's {PACKAGE} (the R manuals) with apt-get")
    subprocess.run(
        [apt, "install", "-y", "--no-install-recommends", PACKAGE],
        check=True,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"{PACKAGE} installed, but these are missing: {', '.join(missing)}")
    return paths


@dataclass(frozen=True)
class Query:
    text: str
    doc_id: str
    page: int
    sentence: str


def _pages(document: Document) -> list[str]:
    starts = [*document.metadata["page_starts"], len(document.text)]
    return [document.text[a:b] for a, b in pairwise(starts)]


def _content_words(sentence: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(sentence) if w.lower() not in _STOP]


def build_queries(documents: list[Document], count: int, seed: int) -> list[Query]:
    pages = [(d.id, n, text) for d in documents for n, text in enumerate(_pages(d), start=1)]
    page_words: Counter[str] = Counter()
    sentence_count: Counter[str] = Counter()
    per_page: list[list[str]] = []
    for _, _, text in pages:
        sentences = [" ".join(s.split()) for s in _SENTENCE_END.split(text)]
        per_page.append(sentences)
        sentence_count.update(sentences)
        page_words.update(set(_content_words(text)))
    candidates: list[list[str]] = []
    for sentences in per_page:
        candidates.append(
            [
                s
                for s in sentences
                if 8 <= len(s.split()) <= 40
                and sentence_count[s] == 1
                and len(set(_content_words(s))) >= 6
            ]
        )
    rng = random.Random(seed)
    order = [i for i, c in enumerate(candidates) if c]
    rng.shuffle(order)
    queries: list[Query] = []
    for index in order[:count]:
        doc_id, page, _ = pages[index]
        sentence = rng.choice(candidates[index])
        words = list(dict.fromkeys(_content_words(sentence)))
        rarest = set(sorted(words, key=lambda w: (page_words[w], words.index(w)))[:6])
        queries.append(Query(" ".join(w for w in words if w in rarest), doc_id, page, sentence))
    return queries


def ingest(paths: list[Path], store: Path, *, by_page: bool) -> tuple[SqliteCorpus, float]:
    """A fresh store of the PDFs, and the seconds from reading the files to the last
    commit (`read_inputs` and `upsert`, as `sift index` does in one process)."""
    started = time.perf_counter()
    documents = read_inputs(paths)
    if not by_page:
        documents = (
            d.model_copy(
                update={"metadata": {k: v for k, v in d.metadata.items() if k not in LOCATION_KEYS}}
            )
            for d in documents
        )
    corpus = SqliteCorpus(store)
    corpus.upsert(documents)
    return corpus, time.perf_counter() - started


def cited_pages(
    result: SearchResult, corpus: SqliteCorpus, starts: dict[str, list[int]]
) -> list[tuple[str, int]]:
    """(doc_id, page) of each evidence item: its `page`, or, in the baseline store, the
    page its chunk's first character is on (what `page` said before chunks were cut at
    pages)."""
    missing = [e.chunk_id for e in result.evidence if "page" not in e.metadata]
    offsets = {c.chunk_id: c.start for c in corpus.get_chunks(missing)} if missing else {}
    out = []
    for item in result.evidence:
        page = item.metadata.get("page")
        if page is None:
            page = bisect_right(starts[item.doc_id], offsets[item.chunk_id])
        out.append((item.doc_id, int(page)))
    return out


def score(ranked: list[tuple[str, int]], query: Query) -> tuple[bool, bool, float]:
    answer = (query.doc_id, query.page)
    rank = next((i for i, hit in enumerate(ranked[:10], start=1) if hit == answer), None)
    return rank == 1, rank is not None and rank <= 5, 1 / rank if rank else 0.0


def run_mode(
    corpus: SqliteCorpus, queries: list[Query], mode: str, starts: dict[str, list[int]]
) -> dict[str, Any]:
    totals = [0.0, 0.0, 0.0]
    started = time.perf_counter()
    with Progress(
        TextColumn(f"[bold]{mode}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task(mode, total=len(queries))
        for query in queries:
            if mode.startswith("single-shot"):
                result = single_shot(query.text, corpus, top_k=10)
            else:
                result = asyncio.run(asearch(query.text, corpus, top_k=10))
            for i, value in enumerate(score(cited_pages(result, corpus, starts), query)):
                totals[i] += float(value)
            progress.advance(task)
            done = int(progress.tasks[0].completed)
            if not console.is_terminal and done % 40 == 0:
                console.print(f"{mode}: {done}/{len(queries)}")  # progress in a log file
    n = len(queries)
    return {
        "hit@1": round(totals[0] / n, 3),
        "hit@5": round(totals[1] / n, 3),
        "mrr@10": round(totals[2] / n, 3),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=240)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    paths = ensure_manuals()
    with tempfile.TemporaryDirectory() as tmp:
        documents = list(read_inputs(paths))
        pages = sum(d.metadata["page_count"] for d in documents)
        starts = {d.id: d.metadata["page_starts"] for d in documents}
        queries = build_queries(documents, args.queries, args.seed)
        console.print(f"{len(documents)} PDFs, {pages:,} pages, {len(queries)} queries")
        results: dict[str, Any] = {"pdfs": len(documents), "pages": pages, "stores": {}}
        labels = {False: "before (chunks across pages)", True: "sift"}
        # Ingest timed in alternated rounds (before, sift, before, sift), so that warming up
        # and a load change on this shared box do not favour one side; the best round counts.
        seconds: dict[bool, list[float]] = {False: [], True: []}
        corpora: dict[bool, SqliteCorpus] = {}
        for round_ in range(ROUNDS):
            for by_page in (False, True):
                corpus, took = ingest(paths, Path(tmp) / f"{by_page}-{round_}", by_page=by_page)
                seconds[by_page].append(took)
                if round_ == ROUNDS - 1:
                    corpora[by_page] = corpus
                else:
                    corpus.close()
        for by_page, corpus in corpora.items():
            try:
                best = min(seconds[by_page])
                entry: dict[str, Any] = {
                    "ingest_seconds": [round(t, 2) for t in seconds[by_page]],
                    "pages_per_second": round(pages / best, 1),
                    "chunks": corpus.stats().chunks,
                    "modes": {},
                }
                for mode in ("single-shot hybrid", "agentic"):
                    entry["modes"][mode] = run_mode(corpus, queries, mode, starts)
                results["stores"][labels[by_page]] = entry
            finally:
                corpus.close()
    results["queries"] = len(queries)
    results["seed"] = args.seed
    results["examples"] = [q.__dict__ for q in queries[:5]]
    results["machine"] = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    console.print_json(data=results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", "utf-8")
    if args.markdown:
        args.markdown.write_text(markdown(results), encoding="utf-8")


def _standing(results: dict[str, Any]) -> str:
    now = results["stores"]["sift"]["modes"]
    before = results["stores"]["before (chunks across pages)"]["modes"]
    return (
        "Where things stand: with chunks cut at every page, the cited page is the answer's "
        f"for {now['single-shot hybrid']['hit@1']:.3f} of the queries at rank 1 in "
        f"single-shot search and {now['agentic']['hit@1']:.3f} in agentic search, against "
        f"{before['single-shot hybrid']['hit@1']:.3f} and {before['agentic']['hit@1']:.3f} "
        "when short pages were packed into one chunk cited by its first page (the same "
        "text, queries and store otherwise)."
    )


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# Page-exact retrieval on the R manuals (Debian's r-doc-pdf)",
        "",
        "Regenerate: `python benchmarks/pdf_pages.py --markdown benchmarks/results/pdf_pages.md "
        "--json benchmarks/results/pdf_pages.json` (installs `r-doc-pdf` with apt-get when "
        "the PDFs are absent; how the queries are built: the script's docstring).",
        "",
        f"{results['pdfs']} PDFs, {results['pages']:,} pages, {results['queries']} keyword "
        f"queries (seed {results['seed']}), each answered by one page. A hit is an evidence "
        "item whose document and `page` are the answer's. Machine: "
        f"{results['machine']} (shared, loaded: times are upper bounds).",
        "",
        _standing(results),
        "",
        "| store | mode | hit@1 | hit@5 | MRR@10 | seconds |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for label, entry in results["stores"].items():
        for mode, m in entry["modes"].items():
            lines.append(
                f"| {label} | {mode} | {m['hit@1']:.3f} | {m['hit@5']:.3f} | "
                f"{m['mrr@10']:.3f} | {m['seconds']} |"
            )
    lines += [
        "",
        "Ingest (reading the PDFs with PDFium, chunking, embedding, storing), rounds "
        "alternated; pages/s from the best round:",
        "",
        "| store | chunks | seconds, each round | pages/s |",
        "| --- | --- | --- | --- |",
    ]
    for label, entry in results["stores"].items():
        rounds = ", ".join(f"{t:.2f}" for t in entry["ingest_seconds"])
        lines.append(f"| {label} | {entry['chunks']:,} | {rounds} | {entry['pages_per_second']} |")
    lines += ["", "Example queries (sentence → query → answer page):", ""]
    for q in results["examples"]:
        lines.append(f'- "{q["sentence"]}" → `{q["text"]}` → {q["doc_id"]} p. {q["page"]}')
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
