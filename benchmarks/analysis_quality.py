"""Lexical analysis by language: plain BM25 quality and speed of each way of cutting text.

    python benchmarks/analysis_quality.py [--skip-english] [--skip-morph]
        [--markdown benchmarks/results/analysis.md]
        [--plot benchmarks/results/analysis_jsquad_hit_at_k.png]

Every run is bm25s (the eval extra) over the whole corpus (title + " " + text), the
question text as the query, nothing else: the analysis is the only thing that changes.

JSQuAD (../shared/benchmarks/jsquad, 400 dev questions, one gold paragraph each): hit@k
(the gold paragraph among the first k) and MRR@10, with bm25s's defaults (k1 1.5, b 0.75),
for:
- the issue's baseline: character bigrams of the raw string (spaces and punctuation too);
- sift's analyzer (`sift.text.Analyzer`) in each CJK mode, and its default with the
  query weighted as `weighted_query_terms` says (what a store is to build);
- SudachiPy + sudachidict-core (split modes A and C, normalised forms) and fugashi +
  unidic-lite (surface forms), each alone and beside sift's default terms.

English dev sets (hotpotqa, musique, 2wikimultihopqa): all-gold@10 (every gold passage,
or one of its listed near-duplicates, in the first 10) with tantivy's BM25 parameters
(k1 1.2, b 0.75), today's analysis (tantivy's `en_stem`: words of letters and digits,
lower-cased, tokens of 40 bytes or more dropped, English Snowball stemming) against sift's
default analyzer.

Speed: terms per second of the analysis alone over each corpus (one thread, the loaded
shared machine: compare rows of one run, not runs).

The morphological rows need `pip install sudachipy sudachidict-core fugashi unidic-lite`
(not a sift dependency); --skip-morph leaves them out.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bm25s
import Stemmer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sift.text import Analyzer, default_analyzer

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks"
ENGLISH = ("hotpotqa", "musique", "2wikimultihopqa")
KS = (1, 2, 3, 5, 10, 20, 50)
WEIGHTED = "sift default, weighted query (the default)"

console = Console(stderr=True)
Tokenize = Callable[[str], list[str]]


@dataclass
class Question:
    text: str
    gold: list[set[str]]


@dataclass
class Row:
    dataset: str
    analysis: str
    hits: dict[int, float] = field(default_factory=dict)  # hit@k, or all-gold@k
    mrr10: float = 0.0
    terms_per_s: float = 0.0
    index_terms: int = 0
    vocabulary: int = 0


def load(name: str) -> tuple[list[str], list[str], list[Question]]:
    ids, texts = [], []
    with open(DATA / name / "corpus.jsonl", encoding="utf-8") as handle:
        for row in map(json.loads, handle):
            ids.append(row["id"])
            texts.append(f"{row['title']} {row['text']}")
    questions = []
    with open(DATA / name / "questions.jsonl", encoding="utf-8") as handle:
        for row in map(json.loads, handle):
            near = row.get("gold_near_duplicate_doc_ids") or {}
            gold = [{g, *near.get(g, [])} for g in row["supporting_doc_ids"]]
            questions.append(Question(row["question"], gold))
    return ids, texts, questions


# ------------------------------------------------------------------------- analyses


def raw_bigrams(text: str) -> list[str]:
    """The issue's baseline: bigrams of the raw string, spaces and punctuation included."""
    return [text[i : i + 2] for i in range(len(text) - 1)]


_TANTIVY_WORD = re.compile(r"[^\W_]+")
_ENGLISH = Stemmer.Stemmer("english")


def tantivy_en_stem(text: str) -> list[str]:
    """tantivy's `en_stem` as the store configures it today: SimpleTokenizer (runs of
    alphanumeric characters), RemoveLongFilter(40 bytes), LowerCaser, English stemmer."""
    words = [w for w in _TANTIVY_WORD.findall(text.lower()) if len(w.encode("utf-8")) < 40]
    return _ENGLISH.stemWords(words)


_KANJI_KANA = "\u3041-\u30fa\u30fc-\u30ff\u3400-\u9fff\uf900-\ufaff々〆"
_JOINED = re.compile(f"([{_KANJI_KANA}]+)|[^\\W_{_KANJI_KANA}]+")


def joined_bigrams(text: str) -> list[str]:
    """The rejected variant: kanji and kana as one run, so bigrams cross between them
    (東京都に gives 都に too); words stemmed as sift does."""
    out: list[str] = []
    for match in _JOINED.finditer(unicodedata.normalize("NFKC", text).lower()):
        run = match.group(1)
        if run is None:
            out.append(_ENGLISH.stemWord(match.group()))
        elif len(run) == 1:
            out.append(run)
        else:
            out += [run[i : i + 2] for i in range(len(run) - 1)]
    return out


def sudachi(mode: str) -> Tokenize:
    from sudachipy import Dictionary, SplitMode

    tokenizer = Dictionary(dict="core").create(mode=getattr(SplitMode, mode))

    def tokenize(text: str) -> list[str]:
        out: list[str] = []
        # Sudachi refuses inputs over about 49 KB: feed it sentence by sentence.
        for sentence in re.split(r"(?<=[。！？\n])", text):
            if sentence:
                out += [
                    unicodedata.normalize("NFKC", m.normalized_form()).lower()
                    for m in tokenizer.tokenize(sentence)
                    if m.part_of_speech()[0] not in ("補助記号", "空白")
                ]
        return out

    return tokenize


def fugashi_unidic() -> Tokenize:
    import fugashi

    tagger = fugashi.Tagger()

    def tokenize(text: str) -> list[str]:
        return [
            unicodedata.normalize("NFKC", w.surface).lower()
            for w in tagger(text)
            if w.feature.pos1 not in ("補助記号", "空白")
        ]

    return tokenize


def weighted_query(text: str) -> list[str]:
    """The query as a store builds it from `weighted_query_terms`: each term repeated
    as often as its (whole-number) weight, which is how bm25s weighs query terms."""
    return [
        term
        for term, weight in default_analyzer().weighted_query_terms(text)
        for _ in range(int(weight))
    ]


def beside_sift(words: Tokenize, japanese_only: bool = False) -> Tokenize:
    """Dictionary words beside sift's default terms (marked, so a word and an equal
    bigram stay two features); `japanese_only` keeps only words with kanji or kana."""
    analyzer = default_analyzer()

    def tokenize(text: str) -> list[str]:
        found = words(text)
        if japanese_only:
            found = [w for w in found if re.search(f"[{_KANJI_KANA}]", w)]
        return analyzer.terms(text) + ["w:" + w for w in found]

    return tokenize


# ------------------------------------------------------------------------- scoring


def evaluate(
    dataset: str,
    label: str,
    tokenize: Tokenize,
    ids: Sequence[str],
    texts: Sequence[str],
    questions: Sequence[Question],
    *,
    k1: float,
    b: float,
    progress: Progress,
    query_tokenize: Tokenize | None = None,
) -> Row:
    task = progress.add_task(f"{dataset}: {label}", total=len(texts) + len(questions))
    started = time.perf_counter()
    docs = []
    for text in texts:
        docs.append(tokenize(text))
        progress.advance(task)
    elapsed = time.perf_counter() - started
    index_terms = sum(map(len, docs))
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.index(docs, show_progress=False)
    vocab = retriever.vocab_dict
    depth = max(KS)
    found = {k: 0 for k in KS}
    reciprocal = 0.0
    for question in questions:
        progress.advance(task)
        query = [t for t in (query_tokenize or tokenize)(question.text) if t in vocab]
        if not query:
            continue
        results, _ = retriever.retrieve([query], k=min(depth, len(ids)), show_progress=False)
        ranked = [ids[i] for i in results[0]]
        for k in KS:
            top = set(ranked[:k])
            if all(top & gold for gold in question.gold):
                found[k] += 1
        if len(question.gold) == 1:
            for rank, doc_id in enumerate(ranked[:10]):
                if doc_id in question.gold[0]:
                    reciprocal += 1.0 / (rank + 1)
                    break
    progress.remove_task(task)
    n = len(questions)
    return Row(
        dataset=dataset,
        analysis=label,
        hits={k: found[k] / n for k in KS},
        mrr10=reciprocal / n,
        terms_per_s=index_terms / elapsed,
        index_terms=index_terms,
        vocabulary=len(vocab),
    )


# ------------------------------------------------------------------------- output


def markdown(rows: list[Row], command: str) -> str:
    lines = [
        "# Lexical analysis: plain BM25 by analysis",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, bm25s "
        f"{bm25s.__version__}, sift analyzer spec `{default_analyzer().spec}`. Shared, "
        "loaded 2-core machine: terms/s compare rows of one run.",
        "",
        "## JSQuAD (400 dev questions, whole corpus of 2,304 paragraphs; k1 1.5, b 0.75)",
        "",
        "| analysis | hit@1 | hit@5 | hit@10 | hit@20 | MRR@10 | index terms | vocabulary "
        "| terms/s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        if r.dataset == "jsquad":
            lines.append(
                f"| {r.analysis} | {r.hits[1]:.4f} | {r.hits[5]:.4f} | {r.hits[10]:.4f} "
                f"| {r.hits[20]:.4f} | {r.mrr10:.4f} | {r.index_terms:,} | {r.vocabulary:,} "
                f"| {r.terms_per_s / 1e6:.2f} M |"
            )
    english = [r for r in rows if r.dataset != "jsquad"]
    if english:
        lines += [
            "",
            "## English dev sets (whole corpus; k1 1.2, b 0.75 as tantivy)",
            "",
            "all-gold@k: every gold passage (or a listed near-duplicate) in the first k.",
            "",
            "| dataset | analysis | all-gold@2 | all-gold@10 | all-gold@20 | terms/s |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for r in english:
            lines.append(
                f"| {r.dataset} | {r.analysis} | {r.hits[2]:.4f} | {r.hits[10]:.4f} "
                f"| {r.hits[20]:.4f} | {r.terms_per_s / 1e6:.2f} M |"
            )
    lines += ["", READING]
    return "\n".join(lines) + "\n"


READING = """## Reading

- The default (`sift.text.default_analyzer()`): bigrams within one script, every
  kanji also alone, a run of one character kept, and the query weighted by
  `weighted_query_terms` (in a query holding CJK an alphabetic word or a number weighs
  2: a CJK word gives several terms, a Latin name or a year one). It beats the issue's
  baseline on every hit@k and on MRR@10, needs no dictionary, and is what a store builds.
- Bigrams across kanji and kana lose (the "rejected" row): 都に, のは join words that
  do not belong together. Every kanji alone adds MRR (a kanji is often a word); every
  kana alone adds nothing.
- The dictionaries (SudachiPy + sudachidict-core, fugashi + unidic-lite) alone do about
  as well as the default; beside it they gain a question or two over the weighted
  query, for a 190 MB (Sudachi) or 250 MB (unidic-lite) dictionary and a fraction of
  the speed. Most of what they added came from counting Latin names and numbers again
  (their Japanese words alone add little: the "Japanese words only" row), which the
  weighted query does without them: no `ja` extra.
- English: the default's BM25 equals today's tantivy analysis on MuSiQue and 2Wiki and
  is one question lower on HotpotQA (0.002): same words, same stemmer; NFKC and the
  40-character cut (tantivy cuts at 40 bytes) account for the difference.
"""


def plot(rows: list[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (whole, zoom) = plt.subplots(1, 2, figsize=(13, 5.5))
    jsquad = [r for r in rows if r.dataset == "jsquad"]
    colours = plt.get_cmap("tab20")(range(20))
    for i, r in enumerate(jsquad):
        style: dict[str, Any] = {"marker": "o", "markersize": 3, "label": r.analysis}
        if r.analysis == WEIGHTED:
            style.update(color="black", linewidth=3, markersize=5)
        elif r.analysis.startswith("baseline"):
            style.update(color="red", linewidth=2, linestyle="--")
        else:
            style.update(color=colours[i % 20], linewidth=1)
        whole.plot(KS, [r.hits[k] for k in KS], **style)
        if r.hits[10] > 0.5:  # the zoom leaves out what is far below (today's analysis)
            zoom.plot(KS, [r.hits[k] for k in KS], **style)
    for ax, title in ((whole, "all analyses"), (zoom, "zoom: the analyses above 0.5")):
        ax.set_xscale("log")
        ax.set_xticks(KS, [str(k) for k in KS])
        ax.set_xlabel("k (documents)")
        ax.set_ylabel("hit@k (gold paragraph in the first k)")
        ax.set_title(f"JSQuAD dev, plain BM25: {title}")
        ax.grid(True, alpha=0.3)
    zoom.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-english", action="store_true")
    parser.add_argument("--skip-morph", action="store_true")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--replot", type=Path, help="only redraw --plot from a --json file")
    args = parser.parse_args(argv)
    if args.replot:
        saved = json.loads(args.replot.read_text(encoding="utf-8"))
        rows = [Row(**{**r, "hits": {int(k): v for k, v in r["hits"].items()}}) for r in saved]
        plot(rows, args.plot)
        return

    jsquad: list[tuple[str, Tokenize]] = [
        ("baseline: raw character bigrams", raw_bigrams),
        ("today: tantivy en_stem", tantivy_en_stem),
    ]
    jsquad.append(("bigrams across kanji and kana (rejected)", joined_bigrams))
    jsquad += [
        (f"sift {mode}", Analyzer(cjk=mode).terms)
        for mode in ("bigram", "bigram+han", "unigram+bigram")
    ]
    jsquad.append((WEIGHTED, default_analyzer().terms))
    if not args.skip_morph:
        for mode in ("A", "C"):
            jsquad.append((f"sudachi {mode}", sudachi(mode)))
        jsquad.append(("fugashi unidic-lite", fugashi_unidic()))
        jsquad.append(("sift default + sudachi A", beside_sift(sudachi("A"))))
        jsquad.append(("sift default + sudachi C", beside_sift(sudachi("C"))))
        jsquad.append(
            ("sift default + sudachi C, Japanese words only", beside_sift(sudachi("C"), True))
        )
        jsquad.append(("sift default + fugashi", beside_sift(fugashi_unidic())))

    rows: list[Row] = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        ids, texts, questions = load("jsquad")
        for label, tokenize in jsquad:
            weighted = weighted_query if label == WEIGHTED else None
            row = evaluate(
                "jsquad",
                label,
                tokenize,
                ids,
                texts,
                questions,
                k1=1.5,
                b=0.75,
                progress=progress,
                query_tokenize=weighted,
            )
            console.print(f"jsquad {label}: hit@10 {row.hits[10]:.4f} MRR@10 {row.mrr10:.4f}")
            rows.append(row)
        if not args.skip_english:
            for name in ENGLISH:
                ids, texts, questions = load(name)
                for label, tokenize in (
                    ("today: tantivy en_stem", tantivy_en_stem),
                    ("sift default", default_analyzer().terms),
                ):
                    row = evaluate(
                        name,
                        label,
                        tokenize,
                        ids,
                        texts,
                        questions,
                        k1=1.2,
                        b=0.75,
                        progress=progress,
                    )
                    console.print(f"{name} {label}: all-gold@10 {row.hits[10]:.4f}")
                    rows.append(row)

    given = sys.argv[1:] if argv is None else list(argv)
    command = " ".join(["python benchmarks/analysis_quality.py", *given])
    text = markdown(rows, command.strip())
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    if args.plot:
        plot(rows, args.plot)
    if args.json:
        args.json.write_text(
            json.dumps([r.__dict__ for r in rows], indent=1, default=float), encoding="utf-8"
        )


if __name__ == "__main__":
    main()
