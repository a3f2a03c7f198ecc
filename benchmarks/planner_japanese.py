"""The heuristic planner on JSQuAD: what it plans for Japanese questions, and a preview of
agentic retrieval over an in-memory BM25 corpus analysed by `sift.text`.

    python benchmarks/planner_japanese.py --markdown benchmarks/results/planner_japanese.md

Part 1 lists, for every 20th dev question, the first round of calls the planner makes:
the question itself, then one search per name it found (the same graph and tools as in
English), and a grep per quoted name.

Part 2 is a preview, not the store's figure: the stores do not analyse Japanese yet (that
is the next phase of issue 10), so the episodes run over `AnalyzedCorpus` below, a small
in-process Corpus: BM25 (bm25s, k1 1.5, b 0.75) over the terms of sift's default
analyzer for search (the query weighted by `weighted_query_terms`), RE2 over the text
for grep, the passages themselves as chunks (each JSQuAD paragraph fits one 512-token
chunk). On the same corpus and the same 400 dev
questions it runs: the issue's baseline (bm25s over raw character bigrams), single shot
(one search of the question, `sift.graphs.single_shot`, top 30) and agentic
(`sift.graphs.asearch` with the heuristic planner, default limits). hit@k: the gold
paragraph among the first k distinct documents of the evidence.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import bm25s
import re2
from rich.console import Console
from rich.progress import Progress

from sift.graphs import asearch, single_shot
from sift.graphs.policies.heuristic import HeuristicPlanner
from sift.integrations.chunking import chunk_document
from sift.text import default_analyzer
from sift.types import Chunk, CorpusStats, Document, GrepResult, Hit, PolicyView, UpsertReport

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks" / "jsquad"
KS = (1, 5, 10, 30)
console = Console(stderr=True)


class AnalyzedCorpus:
    """A read-only in-memory Corpus: BM25 over analysed terms, RE2 grep, reads."""

    def __init__(
        self,
        documents: Sequence[Document],
        tokenize: Callable[[str], list[str]],
        query_tokenize: Callable[[str], list[str]] | None = None,
    ):
        self.chunks = [c for d in documents for c in chunk_document(d, 512)]
        self.by_id = {c.chunk_id: c for c in self.chunks}
        self.by_doc: dict[str, list[Chunk]] = {}
        for chunk in self.chunks:
            self.by_doc.setdefault(chunk.doc_id, []).append(chunk)
        self.tokenize = tokenize
        self.query_tokenize = query_tokenize or tokenize
        self.bm25 = bm25s.BM25(k1=1.5, b=0.75)
        self.bm25.index([tokenize(f"{c.title} {c.text}") for c in self.chunks], show_progress=False)
        self.vocab = self.bm25.vocab_dict

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: str = "hybrid",
        vector: Any = None,
        filters: Any = None,
        exclude: Collection[str] = (),
        alpha: float | None = None,
    ) -> list[Hit]:
        terms = [t for t in self.query_tokenize(query) if t in self.vocab]
        if not terms:
            return []
        depth = min(len(self.chunks), k + len(exclude))
        ids, scores = self.bm25.retrieve([terms], k=depth, show_progress=False)
        hits = [
            Hit(chunk=self.chunks[i], score=float(s))
            for i, s in zip(ids[0], scores[0], strict=True)
            if s > 0 and self.chunks[i].chunk_id not in exclude
        ]
        return hits[:k]

    def grep(
        self, pattern: str, *, k: int = 5, filters: Any = None, exclude: Collection[str] = ()
    ) -> GrepResult:
        regex = re2.compile(pattern)
        hits = [
            Hit(chunk=c, score=1.0)
            for c in self.chunks
            if c.chunk_id not in exclude and regex.search(c.text)
        ]
        return GrepResult(hits=hits[:k])

    def read(self, doc_id: str) -> list[Chunk]:
        return list(self.by_doc.get(doc_id, []))

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return [self.by_id[i] for i in chunk_ids if i in self.by_id]

    def stats(self) -> CorpusStats:
        return CorpusStats(
            documents=len(self.by_doc),
            chunks=len(self.chunks),
            embedder="none",
            dim=0,
            backend="memory",
            location=":memory:",
        )

    def upsert(self, documents: Iterable[Document], **_: Any) -> UpsertReport:
        raise NotImplementedError("AnalyzedCorpus is read-only")

    def delete(self, doc_ids: Iterable[str]) -> int:
        raise NotImplementedError("AnalyzedCorpus is read-only")

    def close(self) -> None:
        pass


def load() -> tuple[list[Document], list[dict[str, Any]]]:
    with open(DATA / "corpus.jsonl", encoding="utf-8") as handle:
        docs = [
            Document(id=r["id"], title=r["title"], text=r["text"]) for r in map(json.loads, handle)
        ]
    with open(DATA / "questions.jsonl", encoding="utf-8") as handle:
        questions = [json.loads(line) for line in handle]
    return docs, questions


def show_plans(questions: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| # | question | gold title | sub-queries searched besides the question, in order "
        "| greps |",
        "| --- | --- | --- | --- | --- |",
    ]
    planner = HeuristicPlanner()
    for i, q in enumerate(questions[::20]):
        view = PolicyView(
            question=q["question"], turn=1, max_turns=6, messages=[], seen={}, tokens_used=0,
            threshold=16384, rejection=24576, budget=32768, top_k=30,
        )  # fmt: skip
        calls = planner.step(view).tool_calls
        searches = [str(c.arguments["query"]) for c in calls if c.name == "search_corpus"]
        greps = [str(c.arguments["pattern"]) for c in calls if c.name == "grep_corpus"]
        lines.append(
            f"| {i * 20} | {q['question']} | {q['supporting_titles'][0]} "
            f"| {', '.join(searches[1:])} | {', '.join(greps) or '-'} |"
        )
    return lines


def weighted_query(text: str) -> list[str]:
    """Query terms repeated as often as their weight (bm25s's way of weighing them)."""
    analyzer = default_analyzer()
    return [t for t, w in analyzer.weighted_query_terms(text) for _ in range(int(w))]


def ranked_docs(result: Any) -> list[str]:
    return list(dict.fromkeys(e.doc_id for e in result.evidence))


def episodes(docs: list[Document], questions: list[dict[str, Any]]) -> list[str]:
    analyzer = default_analyzer()
    corpus = AnalyzedCorpus(docs, analyzer.terms, weighted_query)
    raw = AnalyzedCorpus(docs, lambda s: [s[i : i + 2] for i in range(len(s) - 1)])
    modes: dict[str, list[list[str]]] = {"baseline": [], "single_shot": [], "agentic": []}
    turns: list[int] = []

    async def run_all() -> None:
        with Progress(console=console) as progress:
            task = progress.add_task("jsquad episodes", total=len(questions))
            for q in questions:
                text = q["question"]
                base = raw.search(text, k=30)
                modes["baseline"].append(list(dict.fromkeys(h.chunk.doc_id for h in base)))
                shot = await asyncio.to_thread(single_shot, text, corpus, top_k=30, mode="bm25")
                modes["single_shot"].append(ranked_docs(shot))
                result = await asearch(text, corpus, policy=HeuristicPlanner(), top_k=30)
                modes["agentic"].append(ranked_docs(result))
                turns.append(result.usage.turns)
                progress.advance(task)

    asyncio.run(run_all())
    golds = [q["supporting_doc_ids"][0] for q in questions]
    lines = [
        "| mode | " + " | ".join(f"hit@{k}" for k in KS) + " | MRR@10 |",
        "| --- | " + " | ".join("---" for _ in KS) + " | --- |",
    ]
    for mode, ranked in modes.items():
        hits = [
            sum(g in r[:k] for g, r in zip(golds, ranked, strict=True)) / len(golds) for k in KS
        ]
        mrr = sum(
            1.0 / (r.index(g) + 1) for g, r in zip(golds, ranked, strict=True) if g in r[:10]
        ) / len(golds)
        lines.append(f"| {mode} | " + " | ".join(f"{h:.4f}" for h in hits) + f" | {mrr:.4f} |")
    lines += ["", f"Agentic turns: mean {sum(turns) / len(turns):.2f}, max {max(turns)}."]
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--skip-episodes", action="store_true")
    args = parser.parse_args(argv)
    docs, questions = load()
    given = sys.argv[1:] if argv is None else list(argv)
    text = [
        "# The heuristic planner on JSQuAD (Japanese)",
        "",
        f"Command: `{' '.join(['python benchmarks/planner_japanese.py', *given])}`",
        "",
        "## What it plans (every 20th dev question)",
        "",
        *show_plans(questions),
    ]
    if not args.skip_episodes:
        text += [
            "",
            "## Preview: episodes over an in-memory BM25 corpus analysed by sift.text",
            "",
            "Not the store's figure (the stores analyse Japanese in the next phase); see "
            "the module doc of benchmarks/planner_japanese.py for the set-up. 400 dev "
            "questions, whole corpus.",
            "",
            *episodes(docs, questions),
        ]
    out = "\n".join(text) + "\n"
    print(out)
    if args.markdown:
        args.markdown.write_text(out, encoding="utf-8")


if __name__ == "__main__":
    main()
