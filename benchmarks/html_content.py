"""HTML main content: sift's reader (trafilatura after generator-marked furniture is
pruned) against the hand-written HTMLParser reader it replaced, on Debian-shipped
documentation (Sphinx, DocBook, Doxygen, texinfo; English and Japanese).

    python benchmarks/chunk_boundaries.py fetch     # the corpus, if absent
    python benchmarks/html_content.py [FOLDER ...] [--baseline-rev 1d9c2b1] \\
        > benchmarks/results/html_content.md

The baseline reader is read from git (`git show REV:integrations/ingest/_html.py`, read
only) and loaded beside the current one.

Per page, per reader:
- link marks: section titles or passages (text after a heading) that start or end with
  a heading link mark (¶ § #);
- furniture: furniture lines found in the text: the text lines of the page's navigation,
  header, footer and sidebar blocks as the generator marks them (Sphinx sphinxsidebar,
  related, footer; DocBook navheader, navfooter; texinfo nav-panel, header; Doxygen top,
  nav-path, footer; HTML5 nav, header, footer, aside) that occur nowhere in its main
  content, counted when one of them is a line of the extracted text;
- recall: the share of the main content's words (Latin words, and CJK characters) that
  the text holds (main content: the page's role=main / main / article element, else its
  body, less the furniture blocks);
- sections: headings (h1-h6 in the main content) recorded as sections.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import lxml.html

from sift.integrations.ingest import extract, plan_inputs

ROOT = Path(__file__).resolve().parent
MANUALS = ROOT / ".cache" / "manuals" / "docs"
FALLBACK = ROOT / ".cache" / "chunk_docs" / "docs"
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]+|[\u3041-\u30ff\u3400-\u9fff]")
_MARKS = ("¶", "§")
# The generators' furniture, as the reader under test prunes it (kept in step by hand).
_FURNITURE = " | ".join(
    [
        "//nav | //header | //footer | //aside",
        "//*[@role='navigation' or @role='banner' or @role='contentinfo' or @role='search'"
        " or @role='complementary']",
        *(
            f"//*[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]"
            for name in (
                "sphinxsidebar",
                "related",
                "footer",
                "navheader",
                "navfooter",
                "nav-panel",
                "navigation",
                "bd-sidebar",
                "bd-toc",
                "prev-next-area",
            )
        ),
        "//div[@class='header'][not(.//*[@class='headertitle'])]",
        "//*[@id='top' or @id='nav-path' or @id='MSearchBox' or @id='side-nav']",
    ]
)


class _Current:
    """The reader under test, through the public `extract`."""

    def __init__(self) -> None:
        self.texts: dict[str, tuple[str, str, dict[str, Any]]] = {}

    def load(self, folders: list[Path]) -> None:
        for file in plan_inputs([str(f) for f in folders]).files:
            if file.kind == "html":
                for doc in extract(file).documents:
                    self.texts[str(file.path.resolve())] = (doc.title, doc.text, doc.metadata)

    def read(self, path: Path) -> tuple[str, str, dict[str, Any]]:
        return self.texts.get(str(path.resolve()), ("", "", {}))


def _baseline(rev: str) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{rev}:integrations/ingest/_html.py"],
        cwd=ROOT.parent,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "baseline_html.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("baseline_html", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generator(markup: str) -> str:
    if "sphinx" in markup[:20000].lower() or "_static/" in markup[:20000]:
        return "Sphinx"
    if "DocBook" in markup[:5000]:
        return "DocBook"
    if "Doxygen" in markup or "doxygen" in markup[:5000]:
        return "Doxygen"
    if "texi2any" in markup[:5000] or "makeinfo" in markup[:5000]:
        return "texinfo"
    return "other"


def _reference(markup: str) -> tuple[set[str], list[str], int]:
    """(main content tokens, furniture lines, headings in the main content)."""
    root = lxml.html.document_fromstring(re.sub(r"^\s*<\?xml[^>]*\?>", "", markup))
    for element in root.xpath("//script | //style | //noscript | //template"):
        element.drop_tree()
    furniture = []
    for element in root.xpath(_FURNITURE):
        furniture += [" ".join(t.split()) for t in element.itertext()]
        if element.getparent() is not None:
            element.drop_tree()
    marked = root.xpath("//*[@role='main'] | //main | //article")
    main = marked[0] if marked else root.find("body")
    if main is None:
        return set(), [], 0
    text = " ".join(main.itertext())
    flat = " ".join(text.split())
    lines = sorted({f for f in furniture if len(f) >= 4 and f not in flat and _TOKEN.search(f)})
    headings = len(main.xpath(".//h1 | .//h2 | .//h3 | .//h4 | .//h5 | .//h6"))
    return set(_TOKEN.findall(text)), lines, headings


def _score(
    read: Any, path: Path, markup: str, reference: tuple[set[str], list[str], int]
) -> dict[str, float]:
    tokens, furniture, headings = reference
    _, text, layout = read(path, markup)
    titles = layout.get("section_titles", [])
    levels = [level.strip() for t in titles for level in t.split(" > ")]
    marks = sum(level.endswith(_MARKS) or level.startswith(_MARKS) for level in levels)
    starts = layout.get("section_starts", [])
    for start in starts:
        passage = text[start:].split("\n\n", 2)
        after = passage[1] if len(passage) > 1 else ""
        marks += after.startswith(_MARKS)
    own_lines = {" ".join(line.split()) for line in text.splitlines()}
    found = set(_TOKEN.findall(text))
    return {
        "marks": marks,
        "furniture": sum(1 for line in furniture if line in own_lines),
        "recall_hit": len(tokens & found),
        "recall_all": len(tokens),
        "sections": len(titles),
        "headings": headings,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--baseline-rev", default="HEAD")
    args = parser.parse_args()
    folders = args.folders or [MANUALS if MANUALS.is_dir() else FALLBACK]
    baseline = _baseline(args.baseline_rev)
    current = _Current()
    started = time.perf_counter()
    current.load(folders)
    readers: dict[str, Any] = {
        "HTMLParser (before)": lambda path, markup: baseline.html_text(markup),
        "trafilatura (after)": lambda path, markup: current.read(path),
    }
    totals: dict[tuple[str, str], Counter[str]] = {}
    pages: Counter[str] = Counter()
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*.htm*") if p.is_file()):
            markup = path.read_text(encoding="utf-8", errors="replace")
            lang = "ja" if re.search(r"[\u3040-\u30ff]", markup) else "en"
            group = f"{_generator(markup)} {lang}"
            pages[group] += 1
            reference = _reference(markup)
            for name, reader in readers.items():
                score = _score(reader, path, markup, reference)
                totals.setdefault((group, name), Counter()).update(score)
    out = [
        "# HTML main content: trafilatura against the HTMLParser reader",
        "",
        "```",
        f"python benchmarks/html_content.py --baseline-rev {args.baseline_rev}"
        " > benchmarks/results/html_content.md",
        "```",
        "",
        "Corpus: " + ", ".join(f"`{f}`" for f in folders) + ". Measures: see the script.",
        "",
        "| generator | pages | reader | link marks | furniture lines | word recall |"
        " sections / headings |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for group in sorted(pages):
        for name in readers:
            t = totals[(group, name)]
            recall = t["recall_hit"] / t["recall_all"] if t["recall_all"] else 1.0
            out.append(
                f"| {group} | {pages[group]} | {name} | {t['marks']} | {t['furniture']} |"
                f" {100 * recall:.1f}% | {t['sections']} / {t['headings']} |"
            )
    out += ["", f"{sum(pages.values())} pages; {time.perf_counter() - started:.0f} s in all."]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
