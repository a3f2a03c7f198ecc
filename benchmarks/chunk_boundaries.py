"""Where chunks are cut in real manuals: the share of chunks that start or end inside a
word or a URL.

    python benchmarks/chunk_boundaries.py fetch          # the fallback corpus (apt-get)
    python benchmarks/chunk_boundaries.py measure [FOLDER ...] --label after \\
        [--json benchmarks/results/chunk_boundaries_after.json]
    python benchmarks/chunk_boundaries.py measure [FOLDER ...] --label before \\
        --baseline-rev REV [--json benchmarks/results/chunk_boundaries_before.json]
    python benchmarks/chunk_boundaries.py report \\
        benchmarks/results/chunk_boundaries_before.json \\
        benchmarks/results/chunk_boundaries_after.json \\
        > benchmarks/results/chunk_boundaries.md

Documents: every HTML and PDF file under the folders given (default: the manuals corpus
of `benchmarks/manuals.py`, benchmarks/.cache/manuals/docs, else the fallback corpus that
`fetch` builds in benchmarks/.cache/chunk_docs from Debian doc packages: Sphinx, DocBook,
Doxygen and texinfo HTML and PDFs, English and Japanese). Each file is read by sift's
readers (`extract`) and chunked as a store chunks it (`chunk_spans_within` at its page
and section starts, 512 tokens). `--baseline-rev` reads HTML and PDF with the readers of
that git revision instead (`git show`, read only), for the "before" column.

A boundary between two consecutive chunks of a document is inside a word when
- both sides are CJK letters (kana or kanji, not punctuation) with nothing or one line
  break between them (a blank line, a page or section start is a real boundary), or
- both sides are letters or digits with nothing between them, or
- the first chunk ends with a letter and a hyphen and the second starts with a lower-case
  letter, nothing or one line break between (a hyphenated line wrap); and inside a URL
  when the first chunk's last token and the next chunk's first token, joined, hold a URL
  (`http(s)://`, `ftp://`, `www.`) that starts before the cut and ends after it (the
  first token not ending in sentence punctuation, nothing or one line break between).
The figure is the share of chunks that start or end at such a boundary. A heading line
of CJK text followed by a line of CJK text also counts (the detector sees no layout), in
both columns alike.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from sift.integrations.chunking import chunk_spans_within
from sift.integrations.ingest import InputFile, extract, plan_inputs
from sift.integrations.stores.locations import boundaries
from sift.types import Document

ROOT = Path(__file__).resolve().parent
MANUALS = ROOT / ".cache" / "manuals" / "docs"
FALLBACK = ROOT / ".cache" / "chunk_docs"
# Debian doc packages of the fallback corpus (none of those kept for the independent
# check of issue 43): Sphinx (groonga-doc en/ja, debian-policy), DocBook (aptitude-doc-ja,
# debian-edu-doc-ja), Doxygen (libjsoncpp-doc), texinfo (libffi-dev), PDFs (debian-policy,
# debian-edu-doc-ja).
PACKAGES = (
    "groonga-doc",
    "debian-policy",
    "aptitude-doc-ja",
    "debian-edu-doc-ja",
    "libjsoncpp-doc",
    "libffi-dev",
)
CHUNK_TOKENS = 512

_CJK_LETTER = re.compile(
    r"[\u3041-\u3096\u30a1-\u30fa\u30fc\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)
_URL = re.compile(r"(?:(?:https?|ftp)://|www\.)[^\s<>\"'）」』、。]+")
_TOKEN_TAIL = re.compile(r"\S+$")
_TOKEN_HEAD = re.compile(r"^\S+")
_SENTENCE_PUNCT = tuple(".,;:!?)]}」』）。、")


def _thin_gap(gap: str) -> bool:
    return gap.count("\n") <= 1 and not gap.strip()


def boundary_kind(text: str, end: int, start: int) -> str | None:
    """'word' or 'url' when the cut between text[:end] and text[start:] falls inside a
    word or a URL, else None."""
    gap = text[end:start]
    if not _thin_gap(gap) or end == 0 or start >= len(text):
        return None
    left, right = text[end - 1], text[start]
    tail = _TOKEN_TAIL.search(text, max(0, end - 300), end)
    head = _TOKEN_HEAD.search(text[start : start + 300])
    if tail and head and not tail.group(0).endswith(_SENTENCE_PUNCT):
        joined = tail.group(0) + head.group(0)
        cut = len(tail.group(0))
        if any(m.start() < cut < m.end() for m in _URL.finditer(joined)):
            return "url"
    if _CJK_LETTER.match(left) and _CJK_LETTER.match(right):
        return "word"
    if not gap and left.isalnum() and right.isalnum():
        return "word"
    if (
        left == "-"
        and end >= 2
        and text[end - 2].isalpha()
        and not _CJK_LETTER.match(text[end - 2])
        and right.islower()
    ):
        return "word"
    return None


@dataclass
class Tally:
    files: int = 0
    chunks: int = 0
    inside_word: int = 0
    inside_url: int = 0
    bad_chunks: int = 0
    examples: list[str] = field(default_factory=list)

    def share(self) -> float:
        return self.bad_chunks / self.chunks if self.chunks else 0.0


def _group(source: str, fmt: str, text: str) -> str:
    lang = "ja" if re.search(r"[\u3040-\u30ff]", text[:20000]) else "en"
    return f"{fmt} {lang}"


def baseline_reader(rev: str) -> Callable[[InputFile], list[Document]]:
    """Reads HTML and PDF files with the readers of git revision `rev` (its modules
    loaded from `git show`, read only), other files as today."""
    import importlib.util
    import tempfile

    folder = Path(tempfile.mkdtemp())
    modules: dict[str, Any] = {}
    for name in ("_html", "_pdf"):
        source = subprocess.run(
            ["git", "show", f"{rev}:integrations/ingest/{name}.py"],
            cwd=ROOT.parent,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        path = folder / f"baseline{name}.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"baseline{name}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[name] = module

    def read(file: InputFile) -> list[Document]:
        meta = {"source": str(file.absolute)}
        try:
            if file.kind == "html":
                return [modules["_html"].html_document(file.path, file.doc_id, meta)]
            if file.kind == "pdf":
                extracted = modules["_pdf"].pdf_file(file.path, file.doc_id, meta, file.source)
                return list(extracted.documents)
        except Exception:  # refused or unreadable: skipped, as today
            return []
        return list(extract(file).documents)

    return read


def current_reader(file: InputFile) -> list[Document]:
    return list(extract(file).documents)


def measure(
    folders: list[Path], examples: int, read: Callable[[InputFile], list[Document]]
) -> dict[str, Any]:
    plan = plan_inputs([str(f) for f in folders])
    files = [f for f in plan.files if f.kind in ("html", "pdf")]
    tallies: dict[str, Tally] = {}
    started = time.perf_counter()
    skipped: Counter[str] = Counter()
    for file in files:
        documents = read(file)
        if not documents:
            skipped[file.kind] += 1
        for doc in documents:
            text = doc.text
            spans = chunk_spans_within(text, boundaries(doc.metadata), CHUNK_TOKENS)
            fmt = str(doc.metadata.get("format", file.kind))
            tally = tallies.setdefault(_group(file.source, fmt, text), Tally())
            tally.files += 1
            tally.chunks += len(spans)
            bad = [False] * len(spans)
            for at, ((_, end, _), (start, _, _)) in enumerate(pairwise(spans)):
                kind = boundary_kind(text, end, start)
                if kind is None:
                    continue
                bad[at] = bad[at + 1] = True
                if kind == "url":
                    tally.inside_url += 1
                else:
                    tally.inside_word += 1
                if len(tally.examples) < examples:
                    left = text[max(0, end - 20) : end].replace("\n", "⏎")
                    right = text[start : start + 20].replace("\n", "⏎")
                    tally.examples.append(f"{file.source}: …{left} | {right}…")
            tally.bad_chunks += sum(bad)
    return {
        "folders": [str(f) for f in folders],
        "files": len(files),
        "skipped": dict(skipped),
        "seconds": round(time.perf_counter() - started, 1),
        "groups": {
            name: {
                "files": t.files,
                "chunks": t.chunks,
                "inside_word": t.inside_word,
                "inside_url": t.inside_url,
                "bad_chunks": t.bad_chunks,
                "share": round(t.share(), 4),
                "examples": t.examples,
            }
            for name, t in sorted(tallies.items())
        },
    }


def _total(groups: dict[str, Any]) -> dict[str, Any]:
    chunks = sum(g["chunks"] for g in groups.values())
    bad = sum(g["bad_chunks"] for g in groups.values())
    return {
        "files": sum(g["files"] for g in groups.values()),
        "chunks": chunks,
        "inside_word": sum(g["inside_word"] for g in groups.values()),
        "inside_url": sum(g["inside_url"] for g in groups.values()),
        "bad_chunks": bad,
        "share": round(bad / chunks, 4) if chunks else 0.0,
    }


def report(runs: list[dict[str, Any]]) -> str:
    names = sorted({name for run in runs for name in run["groups"]})
    lines = [
        "# Chunks starting or ending inside a word or URL",
        "",
        "```",
        "python benchmarks/chunk_boundaries.py fetch",
        "python benchmarks/chunk_boundaries.py measure --label before --baseline-rev a73e1a5 \\",
        "    --json benchmarks/results/chunk_boundaries_before.json",
        "python benchmarks/chunk_boundaries.py measure --label after \\",
        "    --json benchmarks/results/chunk_boundaries_after.json",
        "python benchmarks/chunk_boundaries.py report benchmarks/results/chunk_boundaries_*.json"
        " > benchmarks/results/chunk_boundaries.md",
        "```",
        "",
        "Corpus: " + ", ".join(f"`{f}`" for f in runs[-1]["folders"]) + ".",
        "How a boundary is judged: see the script's docstring. 512-token chunks, cut at page"
        " and section starts as a store cuts them. A chunk is counted once when it starts"
        " or ends at such a boundary.",
        "",
        "| group | "
        + " | ".join(f"{r['label']}: chunks | inside word | inside URL | share" for r in runs)
        + " |",
        "|---|" + "---:|---:|---:|---:|" * len(runs),
    ]
    for name in [*names, "all"]:
        cells = []
        for run in runs:
            g = _total(run["groups"]) if name == "all" else run["groups"].get(name)
            if g is None:
                cells.append("– | – | – | –")
                continue
            cells.append(
                f"{g['chunks']} | {g['inside_word']} | {g['inside_url']} | {100 * g['share']:.2f}%"
            )
        label = (
            f"**{name}**"
            if name == "all"
            else f"{name} ({run['groups'].get(name, {}).get('files', 0)} files)"
        )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for run in runs:
        lines += ["", f"Examples ({run['label']}):", ""]
        shown = [e for g in run["groups"].values() for e in g["examples"][:4]]
        lines += [f"- `{e}`" for e in shown] or ["- none"]
    return "\n".join(lines) + "\n"


def fetch() -> None:
    FALLBACK.mkdir(parents=True, exist_ok=True)
    debs = FALLBACK / "debs"
    debs.mkdir(exist_ok=True)
    subprocess.run(["apt-get", "download", *PACKAGES], cwd=debs, check=True)
    root = FALLBACK / "root"
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    docs = FALLBACK / "docs"
    docs.mkdir(exist_ok=True)
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in (".html", ".htm", ".pdf", ".gz") or not path.is_file():
            continue
        if path.suffix == ".gz" and not path.name.endswith(".pdf.gz"):
            continue
        target = docs / path.relative_to(root / "usr" / "share" / "doc")
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.name.endswith(".pdf.gz"):
            import gzip

            target = target.with_name(path.name[: -len(".gz")])
            target.write_bytes(gzip.decompress(path.read_bytes()))
        else:
            target.write_bytes(path.read_bytes())
    print(f"corpus: {docs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="build the fallback corpus from Debian doc packages")
    run = sub.add_parser("measure", help="measure the corpus")
    run.add_argument("folders", nargs="*", type=Path)
    run.add_argument("--label", default="after")
    run.add_argument("--json", type=Path)
    run.add_argument("--examples", type=int, default=12)
    run.add_argument("--baseline-rev", help="read HTML and PDF as this git revision did")
    rep = sub.add_parser("report", help="a Markdown table of measure runs")
    rep.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args()
    if args.command == "fetch":
        fetch()
        return
    if args.command == "report":
        runs = [json.loads(p.read_text(encoding="utf-8")) for p in args.runs]
        runs.sort(key=lambda r: r["label"] != "before")
        sys.stdout.write(report(runs))
        return
    folders = args.folders or [MANUALS if MANUALS.is_dir() else FALLBACK / "docs"]
    read = baseline_reader(args.baseline_rev) if args.baseline_rev else current_reader
    result = {"label": args.label, **measure(folders, args.examples, read)}
    out = json.dumps(result, ensure_ascii=False, indent=1)
    if args.json:
        args.json.write_text(out + "\n", encoding="utf-8")
    total = _total(result["groups"])
    print(
        f"{args.label}: {result['files']} files, {total['chunks']} chunks, "
        f"{total['inside_word']} inside a word, {total['inside_url']} inside a URL, "
        f"share {100 * total['share']:.2f}% ({result['seconds']} s)"
    )
    for name, g in result["groups"].items():
        print(f"  {name}: {g['chunks']} chunks, share {100 * g['share']:.2f}%")
        for example in g["examples"][:5]:
            print(f"    {example}")


if __name__ == "__main__":
    main()
