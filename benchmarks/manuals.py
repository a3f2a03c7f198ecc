"""Agentic search on real documents nobody here wrote: manuals Debian ships (issue 44).

    python benchmarks/manuals.py fetch          # apt-get download + dpkg-deb -x, pick files
    python benchmarks/manuals.py questions      # benchmarks/data/manuals/questions.jsonl
    python benchmarks/manuals.py run [--systems single-shot,agentic] [--half tune|held|all]
        [--limit N] [--before DIR] [--markdown benchmarks/results/manuals.md]
        [--json benchmarks/results/manuals.json]

Corpus (`fetch`): the HTML and PDF manuals of the Debian packages in `PACKAGES`, English
and Japanese, downloaded with `apt-get download` into benchmarks/.cache/manuals/debs,
unpacked with `dpkg-deb -x` into .../root, and the chosen files copied (.gz decompressed)
into .../docs/<package>/<path below the package's documentation folder>. A file of a
Japanese package is kept only when its text is Japanese (Japanese characters at least
`JA_FILE_SHARE` of its letters: several Japanese packages ship untranslated chapters), and
an HTML file with less than `MIN_FILE_CHARS` characters of text (redirects, indexes) is
not kept; both read the text by a rule of the script's own (`plain_text`), so that the
files kept do not move when sift's HTML reader changes. The packages in `EXCLUDED` are
refused whatever the list says: their documents are kept apart for an independent check
(and r-doc-pdf has its own benchmark). A file with the same bytes as one already kept is
not kept (Exim ships each chapter under two names). The manifest
(benchmarks/data/manuals/manifest.json) records each package's version, language and
format, and each file with its page count (a PDF's pages; an HTML file is one page).

Locations: the docs root is read with `read_inputs(naming=SourceNaming(root=docs))`, so a
document id is `<package>/<path>`, the id `sift index` gives the file when the docs root
is indexed from its own folder. A location is a PDF page (`page`) or an HTML section
(`section`: the heading path, as sift's chunks record it). A chunk matches a gold
location when its document is the gold's and its `page` is the gold's, or the last heading
of its `section` is the gold's last heading, both normalised (`¶` removed, white space
collapsed, case folded): `gold_matches`.

Words: a Latin "word" is a run of letters and digits; a Japanese "word" is a maximal run
of one script (kanji, hiragana or katakana), the way sift's analyzer cuts script runs
before it makes bigrams (so 設定ファイルの場所 is four words: 設定 ファイル の 場所).
Text is NFKC-normalised and lower-cased first (`words`).

Questions (`questions`), all drawn with `random.Random(SEED)`, rules applied in order:
- words (a): a section heading (HTML) or PDF outline entry, numbering removed, unique in
  the corpus, not a generic heading (`GENERIC_HEADINGS`), 2-8 words (Japanese: 4-30
  characters), whose location holds at least `MIN_SECTION_CHARS` of text; put into a
  paraphrasing template (English or Japanese, by the heading's script) with the manual's
  product name. When the question copies a run of 4 words from the gold passage
  (`copied_run`), the heading is cut to its content words (function words and hiragana
  dropped) and checked again; still copied: dropped. Gold: the section, or the outline
  entry's page (and the next page, when the entry's section runs on).
- identifier (b): command-line options (--foo-bar), upper-case names with an underscore
  (FOO_BAR: environment variables and constants), functions written name() , paths
  under /etc/ and files named *.h / *.conf / *.cfg, and TeX/LilyPond commands (\\fooBar),
  that occur in 1 to 3 locations of the corpus (`find_identifiers`); gold: every one.
- two_place (c): two identifiers of one manual, each in exactly one location, the two in
  different documents or pages; or two headings of the words pool from different
  documents of one manual. Both golds listed (`place` 0 and 1).
- unanswerable (d): identifiers made by splicing two real identifiers of one manual
  (--foo-bar + --baz-qux gives --foo-qux) that occur nowhere in the extracted text (case
  folded, with and without their punctuation), asked like (b); and off-topic questions
  (`OFF_TOPIC`) none of whose anchor terms occurs in the extracted text.
The split (`tune` / `held`) is a stable hash of the question's id. Each draw has a random
stream of its own, seeded by `SEED` and what is drawn (`draw`), so that a changed rule
moves only the questions it touches.

Run (`run`): the docs root indexed into a cached embedded store (SqliteCorpus, default
static embedder; rebuilt when the docs or sift's ingest/index code change), each question
asked with single-shot hybrid (`single_shot`, top 30) and agentic search (`asearch`,
heuristic planner, top 30), a few questions in flight. With `--before DIR` the other
checkout's sift answers the same questions first, in a fresh interpreter.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

if TYPE_CHECKING:
    from sift.types import Document, SearchResult

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# Another checkout runs as store_ab.py runs it (its `farm` of symlinks).
sys.path.insert(0, str(HERE))
import store_ab  # noqa: E402

CACHE = HERE / ".cache" / "manuals"
DEBS = CACHE / "debs"
ROOT = CACHE / "root"
DOCS = CACHE / "docs"
STORES = CACHE / "stores"
DATA = HERE / "data" / "manuals"
MANIFEST = DATA / "manifest.json"
QUESTIONS = DATA / "questions.jsonl"
# A reading of a seeded sample of the questions beside their gold text, by a person: the
# results quote it (regenerate it when the questions change).
HAND_CHECK = DATA / "hand_check.md"
SEED = 44
console = Console(stderr=True)

# Kept apart for an independent check (issue 44), and r-doc-pdf has its own benchmark
# (pdf_pages.py). A package whose name starts with one of these (its translations, such
# as debian-reference-ja) or whose source package is one of these is refused too.
EXCLUDED = frozenset(
    {
        "bzip2-doc",
        "nettle-dev",
        "valgrind",
        "fontconfig",
        "shared-mime-info",
        "asymptote-doc",
        "libtasn1-doc",
        "bash-doc",
        "debian-faq",
        "debmake-doc",
        "installation-guide",
        "maint-guide-ja",
        "debian-reference",
        "developers-reference",
        "gnuplot-doc",
        "r-doc-pdf",
    }
)

JA_FILE_SHARE = 0.15
MIN_FILE_CHARS = 400
MIN_SECTION_CHARS = {"en": 250, "ja": 100}
MAX_IDENTIFIER_LOCATIONS = 3
TARGETS: dict[tuple[str, str], int] = {
    ("words", "en"): 110,
    ("words", "ja"): 75,
    ("identifier", "en"): 75,
    ("identifier", "ja"): 45,
    ("two_place", "en"): 50,
    ("two_place", "ja"): 30,
    ("unanswerable", "en"): 55,
    ("unanswerable", "ja"): 45,
}
KINDS = ("words", "identifier", "two_place", "unanswerable")
SYSTEMS = ("single-shot", "agentic")
TOP_K = 30
CONCURRENCY = 4


# --------------------------------------------------------------------------- packages


@dataclass(frozen=True)
class Package:
    name: str
    language: str
    product: str
    # Globs relative to the unpacked package root; the files kept are those matching one
    # of `include` and none of `exclude` (fnmatch over the path below the root: a `*`
    # crosses folders).
    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    # A product name per file (fnmatch over the path below the package's folder), for
    # packages that ship the manuals of several programs.
    products: tuple[tuple[str, str], ...] = ()

    def product_of(self, below: str) -> str:
        return next((p for pattern, p in self.products if fnmatch(below, pattern)), self.product)


_TEX = "usr/share/doc/texlive-doc/"
PACKAGES: tuple[Package, ...] = (
    Package(
        "sphinx-doc",
        "en",
        "Sphinx",
        ("usr/share/doc/sphinx-doc/html/*.html",),
        ("*/_sources/*", "*/_static/*", "*/_modules/*", "*/genindex*", "*/search.html"),
    ),
    Package("exim4-doc-html", "en", "Exim", ("usr/share/doc/exim4-doc-html/spec_html/*.html",)),
    Package("libpam-doc", "en", "Linux-PAM", ("usr/share/doc/libpam-doc/html/*.html",)),
    Package(
        "debian-kernel-handbook",
        "en",
        "the Debian kernel",
        ("usr/share/doc/debian-kernel-handbook/kernel-handbook.html/*.html",),
    ),
    Package("zsh-doc", "en", "zsh", ("usr/share/doc/zsh-common/html/*.html",)),
    Package("git-doc", "en", "Git", ("usr/share/doc/git-doc/*.html",)),
    Package(
        "sqlite3-doc",
        "en",
        "SQLite",
        ("usr/share/doc/sqlite3/*.html",),
        # Release notes and syntax diagrams: 300 pages of little prose.
        ("*/releaselog/*", "*/syntax/*", "*/session/*"),
    ),
    Package(
        "debian-edu-doc-en",
        "en",
        "Debian Edu",
        ("usr/share/doc/debian-edu-doc-en/debian-edu-bookworm-manual.pdf",),
    ),
    Package("gle-graphics-manual", "en", "GLE", ("usr/share/gle-graphics/doc/gle-manual.pdf",)),
    Package(
        "debian-handbook",
        "ja",
        "Debian 管理者ハンドブック",
        ("usr/share/doc/debian-handbook/html/ja-JP/*.html",),
        ("*/Common_Content/*",),
    ),
    Package("aptitude-doc-ja", "ja", "aptitude", ("usr/share/doc/aptitude/html/ja/*.html",)),
    Package(
        "apt-doc",
        "ja",
        "APT",
        (
            "usr/share/doc/apt-doc/guide.ja.html/*.html",
            "usr/share/doc/apt-doc/offline.ja.html/*.html",
        ),
    ),
    Package(
        "lilypond-doc-html-ja",
        "ja",
        "LilyPond",
        (
            "usr/share/doc/lilypond/html/Documentation/learning/*.ja.html",
            "usr/share/doc/lilypond/html/Documentation/usage/*.ja.html",
            "usr/share/doc/lilypond/html/Documentation/notation/*.ja.html",
        ),
    ),
    Package(
        "texlive-lang-japanese",
        "ja",
        "pLaTeX",
        tuple(
            _TEX + p
            for p in (
                "latex/lshort-japanese/jlshort.pdf",
                "luatex/luatexja/luatexja-ja.pdf",
                "platex/base/platex.pdf",
                "ptex/ptex-manual/ptex-manual.pdf",
                "support/mendex-doc/mendex.pdf",
                "latex/jlreq/jlreq-ja.pdf",
                "platex/pxchfon/pxchfon.pdf",
                "fonts/ptex-fontmaps/kanji-config-updmap.pdf",
                "latex/bxjscls/bxjscls-manual.pdf",
                "latex/pbibtex-manual/pbibtex-manual.pdf",
            )
        ),
        products=(
            ("*jlshort*", "LaTeX"),
            ("*luatexja*", "LuaTeX-ja"),
            ("*ptex-manual*", "pTeX"),
            ("*mendex*", "mendex"),
            ("*jlreq*", "jlreq"),
            ("*pxchfon*", "pxchfon"),
            ("*kanji-config-updmap*", "kanji-config-updmap"),
            ("*bxjscls*", "BXjscls"),
            ("*pbibtex*", "pBibTeX"),
        ),
    ),
)


class ExcludedPackageError(ValueError):
    """A package whose documents are kept apart for the independent check."""


def check_allowed(name: str, source: str | None = None) -> None:
    """Refuses the excluded packages, their translations and their source's packages."""
    for candidate in filter(None, (name, source)):
        if candidate in EXCLUDED or any(candidate.startswith(f"{e}-") for e in EXCLUDED):
            raise ExcludedPackageError(
                f"{name} is excluded from this benchmark (its documents are kept apart for "
                "an independent check); remove it from PACKAGES"
            )


# --------------------------------------------------------------------------- pure rules

_TOKEN = re.compile(
    r"[a-z0-9]+|[\u4e00-\u9fff\u3005\u3006\u3007]+|[\u3041-\u309f]+|[\u30a0-\u30ff\u31f0-\u31ff]+"
)
_JA_CHAR = re.compile(r"[\u3041-\u30ff\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_HIRAGANA = re.compile(r"[\u3041-\u309f]+")
_JA_PARTICLE = re.compile(
    r"(?<![\u3041-\u309f])(?:について|として|による|における|に関する|から|まで|での|への|との|"
    r"の|を|に|が|と|へ|や|で|は|も)(?![\u3041-\u309f])"
)
RUN_WORDS = 4


def words(text: str) -> list[str]:
    """The words of `text` (module docstring, "Words")."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def copied_run(question: str, passage: str, n: int = RUN_WORDS) -> tuple[str, ...] | None:
    """The first run of `n` words of `question` that `passage` holds too, or None."""
    q = words(question)
    held = {tuple(g) for g in _ngrams(words(passage), n)}
    return next((g for g in _ngrams(q, n) if g in held), None)


def _ngrams(items: list[str], n: int) -> Iterator[tuple[str, ...]]:
    return (tuple(items[i : i + n]) for i in range(len(items) - n + 1))


def japanese_share(text: str) -> float:
    """Japanese characters among the letters of `text` (Latin letters count one each)."""
    ja = len(_JA_CHAR.findall(text))
    return ja / max(1, ja + len(_LATIN.findall(text)))


def language_of(text: str) -> str:
    return "ja" if japanese_share(text) >= JA_FILE_SHARE else "en"


def normalise_heading(title: str) -> str:
    """The last heading of a section path, as gold matching compares it."""
    last = title.split(" > ")[-1]
    last = last.replace("\u00b6", "").replace("\uf0c1", "")
    return " ".join(unicodedata.normalize("NFKC", last).split()).casefold()


def gold_matches(gold: dict[str, Any], doc_id: str, metadata: dict[str, Any]) -> bool:
    """Whether a chunk (its document and metadata) is at the gold location."""
    if doc_id != gold["doc_id"]:
        return False
    if "page" in gold:
        page = metadata.get("page")
        if page is None:
            return False
        pages = metadata.get("pages") or [page, page]
        return int(pages[0]) <= int(gold["page"]) <= int(pages[-1])
    if "section" in gold:
        section = metadata.get("section")
        return isinstance(section, str) and normalise_heading(section) == normalise_heading(
            gold["section"]
        )
    return True


def draw(seed: int, *key: str) -> random.Random:
    """A random stream of its own for each decision (which template for this heading,
    which order for this manual's identifiers), so that a rule that drops one candidate
    does not redraw every question after it. A string seed is hashed the same way on every
    run and machine."""
    return random.Random("|".join((str(seed), *key)))


def split_of(question_id: str) -> str:
    """`tune` or `held`, stable across runs, machines and Python versions."""
    return "tune" if hashlib.sha256(question_id.encode()).digest()[0] % 2 == 0 else "held"


# Identifiers as users type them. An option has at least one inner hyphen (--foo-bar) so
# that it is distinctive; an upper-case name has an underscore; a function is written
# with its parentheses, as in prose.
IDENTIFIER_PATTERNS: dict[str, re.Pattern[str]] = {
    "option": re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])"),
    "variable": re.compile(r"(?<![\w$])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w(])"),
    "function": re.compile(r"(?<![\w.])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\(\)"),
    "file": re.compile(
        r"(?<![\w/.-])(?:/etc/[\w.+-]+(?:/[\w.+-]+)*\w|(?:[\w+-]+/)*[\w+-]{3,}\.(?:h|conf|cfg))"
        r"(?![\w/-]|\.\w)"
    ),
    "command": re.compile(r"(?<![\w\\])\\[a-zA-Z]{6,}(?![a-zA-Z@])"),
}


def find_identifiers(text: str) -> list[tuple[str, str]]:
    """(type, identifier) of each distinct identifier in `text`, in order of appearance."""
    found: dict[str, str] = {}
    hits = []
    for kind, pattern in IDENTIFIER_PATTERNS.items():
        for match in pattern.finditer(text):
            hits.append((match.start(), kind, match.group()))
    for _, kind, ident in sorted(hits):
        if kind == "variable" and len(ident) < 6:
            continue
        # A short plain stem (line.h) is as often a name with a suffix as a header.
        if ident.endswith(".h") and re.fullmatch(r"[a-z]{1,5}\.h", ident):
            continue
        found.setdefault(ident, kind)
    return [(kind, ident) for ident, kind in found.items()]


_PLACEHOLDER_PARTS = frozenset(
    ("foo", "bar", "baz", "qux", "xyz", "abc", "abcd", "xxx", "some", "my", "example", "your")
)


def placeholder(ident: str) -> bool:
    """A made-up name of an example (some_function(), ABCD_XYZ), a serial number or a
    token run together: not what a user asks about."""
    parts = [p for p in re.split(r"[-_/.()\\]+", ident.casefold()) if p]
    return (
        any(p in _PLACEHOLDER_PARTS for p in parts)
        or re.search(r"\d{4}", ident) is not None
        or len(ident) > 40
    )


def splice(a: str, b: str) -> str | None:
    """An identifier that looks real: the head of `a` joined to the tail of `b`."""
    for sep, prefix, suffix in (("-", "--", ""), ("_", "", "()"), ("_", "", "")):
        if a.startswith(prefix) and b.startswith(prefix) and a.endswith(suffix):
            core_a = a[len(prefix) : len(a) - len(suffix)]
            core_b = b[len(prefix) : len(b) - len(suffix)]
            pa, pb = core_a.split(sep), core_b.split(sep)
            if len(pa) < 2 or len(pb) < 2:
                return None
            spliced = sep.join([*pa[: max(1, len(pa) // 2)], *pb[max(1, len(pb) // 2) :]])
            if spliced in (core_a, core_b):
                return None
            return prefix + spliced + suffix
    return None


def identifier_core(ident: str) -> str:
    return ident.strip("-/()\\").casefold()


_NUMBERING = re.compile(
    r"^(?:(?:chapter|appendix|part|section)\s+[\w.]+\s*[-:.]?\s*|第\s*[\d０-９]+\s*[章節部]\s*|"
    r"付録\s*[A-Z]\.?\s*|[A-Z]\.(?=\d)|(?:\d+\.)+\d*\s*|\d+\s+(?![次乗つ個回本年月日分秒倍番])(?=\D))",
    re.IGNORECASE,
)
GENERIC_HEADINGS = frozenset(
    (
        "introduction",
        "overview",
        "description",
        "options",
        "synopsis",
        "name",
        "examples",
        "example",
        "notes",
        "note",
        "bugs",
        "author",
        "authors",
        "navigation",
        "preface",
        "index",
        "summary",
        "background",
        "usage",
        "configuration",
        "files",
        "environment",
        "errors",
        "copyright",
        "license",
        "warning",
        "caution",
        "tip",
        "important",
        "contents",
        "see also",
        "quick search",
        "table of contents",
        "this page",
        "next topic",
        "previous topic",
        "related topics",
        "on this page",
        "site navigation",
        "return value",
        "return values",
        "概要",
        "はじめに",
        "目次",
        "例",
        "注意",
        "ナビゲーション",
        "序文",
        "索引",
        "まとめ",
        "設定",
        "使い方",
        "参考文献",
        "謝辞",
        "ライセンス",
        "変更履歴",
        "関連項目",
        "警告",
        "ヒント",
        "重要",
    )
)
_STOP = frozenset(
    (
        "a",
        "an",
        "the",
        "of",
        "to",
        "for",
        "in",
        "on",
        "with",
        "and",
        "or",
        "by",
        "from",
        "is",
        "are",
        "be",
        "at",
        "as",
        "into",
        "its",
        "it",
        "this",
        "that",
        "your",
        "how",
        "what",
        "when",
        "using",
        "use",
    )
)


def clean_heading(title: str) -> str:
    """A heading without its numbering, `¶` marks and trailing man-page section."""
    text = " ".join(title.replace("\u00b6", "").split())
    for _ in range(2):
        text = _NUMBERING.sub("", text).strip(" -:.")
    return re.sub(r"\s*\(\d\)$", "", text).strip()


def content_topic(heading: str, lang: str) -> str:
    """The heading cut to its content words: English function words dropped; in
    Japanese the particles (a hiragana run that is exactly の, を, について, ...) dropped,
    okurigana and verb endings kept (繰り返し, 組み込む stay whole)."""
    if lang == "ja":
        pieces = _JA_PARTICLE.split(heading)
        return " ".join(p for p in (p.strip(" 、。・？?") for p in pieces) if p)
    return " ".join(w for w in heading.split() if w.casefold() not in _STOP)


# --------------------------------------------------------------------------- templates

WORD_TEMPLATES = {
    "en": (
        "How do I deal with {topic} in {product}?",
        "Where can I read about {topic} for {product}?",
        "I need to understand {topic} when working with {product}. Which part explains it?",
        "What does the {product} documentation tell me about {topic}?",
        "Can you point me to where {product} covers {topic}?",
    ),
    "ja": (
        "{product}で「{topic}」について知りたいのですが、どこに説明がありますか?",
        "{product}の{topic}について教えてください。",
        "{topic}に関する{product}の説明はどこで読めますか?",
        "{product}を使っていて{topic}が分かりません。解説している箇所は?",
    ),
}
IDENTIFIER_TEMPLATES = {
    "en": {
        "option": (
            "What does the {ident} option do in {product}?",
            "When would I pass {ident} in {product}?",
        ),
        "variable": ("What is {ident} in {product}?", "What does {ident} mean for {product}?"),
        "function": ("What does {ident} do in {product}?", "How do I call {ident}?"),
        # Not "what goes in it": most files are named in passing, not described.
        "file": (
            "What is {ident} used for in {product}?",
            "Where do the {product} docs mention {ident}?",
        ),
        "command": ("What does the {ident} command do in {product}?", "How is {ident} used?"),
    },
    "ja": {
        "option": ("{product}の {ident} オプションは何をしますか?", "{ident} はいつ指定しますか?"),
        "variable": ("{product}の {ident} とは何ですか?", "{ident} の意味を教えてください。"),
        "function": ("{ident} は何をする関数ですか?", "{product}で {ident} の使い方は?"),
        "file": (
            "{product}の文書で {ident} が出てくるのはどこですか?",
            "{product}で {ident} は何に使いますか?",
        ),
        "command": ("{product}の {ident} は何をする命令ですか?", "{ident} の使い方を教えて。"),
    },
}
TWO_IDENTIFIER_TEMPLATES = {
    # Not "how do they differ": two identifiers drawn apart are seldom comparable.
    "en": ("What do {a} and {b} each do in {product}?", "In {product}, what are {a} and {b} for?"),
    "ja": (
        "{product}の {a} と {b} はそれぞれ何をしますか?",
        "{a} と {b} はそれぞれ何に使いますか?",
    ),
}
TWO_TOPIC_TEMPLATES = {
    "en": (
        "For {product} I need both {a} and {b}: where is each explained?",
        "In {product}, what do I need to know about {a} and also about {b}?",
    ),
    "ja": (
        "{product}で「{a}」と「{b}」の両方を調べたい。それぞれどこに書いてありますか?",
        "{product}の{a}と{b}について、それぞれ説明を探しています。",
    ),
}
# Questions no manual here answers, each with anchor terms the corpus must not hold
# (`anchor_found`).
OFF_TOPIC: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "en": (
        ("What is the recommended daily intake of vitamin D for adults?", ("vitamin",)),
        ("How long should I boil an egg for a runny yolk?", ("yolk",)),
        ("Which football club won the 1998 UEFA Champions League final?", ("uefa",)),
        ("How do I configure Kubernetes pod autoscaling?", ("kubernetes",)),
        ("What is the airspeed of a swallow carrying a coconut?", ("coconut",)),
        ("How do I renew a passport at the embassy?", ("passport", "embassy")),
        ("What are the symptoms of a sprained ankle?", ("ankle", "sprain*")),
        ("How do I train a neural network with PyTorch?", ("pytorch",)),
        ("Which wine goes well with grilled trout?", ("trout",)),
        ("How do I set up a Terraform remote backend on S3?", ("terraform",)),
        ("How tall is Mount Kilimanjaro?", ("kilimanjaro",)),
        ("What is the capital gains tax rate for cryptocurrency?", ("cryptocurrenc*",)),
        ("How do I fix a flat bicycle tyre?", ("bicycle", "tyre")),
        ("How do I deploy a React app on Vercel?", ("vercel",)),
        ("How often should I water a cactus in winter?", ("cactus",)),
        ("What is the plot of the novel Moby-Dick?", ("moby",)),
        ("How do I bake sourdough bread without a Dutch oven?", ("sourdough",)),
        ("How do I configure an Nvidia CUDA toolkit on Windows?", ("cuda",)),
        ("How are Premier League points calculated?", ("premier league",)),
        ("How do I add a formula to a Google Sheets cell?", ("google sheets",)),
        (
            "What is the best time of year to see the northern lights?",
            ("aurora", "northern lights"),
        ),
        ("How do I register a trademark in the European Union?", ("euipo", "european union")),
        ("How do I replace the brake pads on a car?", ("brake pad",)),
        ("What are the rules of cricket's LBW decision?", ("cricket",)),
        ("How do I migrate a MongoDB replica set to Atlas?", ("mongodb",)),
    ),
    "ja": (
        ("成人が一日に摂るべきビタミンDの量はどれくらいですか?", ("ビタミン",)),
        ("半熟卵を作るには何分ゆでればよいですか?", ("半熟", "ゆで")),
        ("富士山の登山シーズンはいつですか?", ("富士山", "登山")),
        ("東京から大阪まで新幹線で何時間かかりますか?", ("新幹線",)),
        ("確定申告の期限はいつまでですか?", ("確定申告",)),
        ("パスポートの更新に必要な書類は何ですか?", ("パスポートの更新",)),
        ("Kubernetes でポッドを自動スケールするには?", ("kubernetes", "ポッド")),
        ("足首を捻挫したときの応急処置は?", ("捻挫",)),
        ("美味しいカレーの作り方を教えてください。", ("カレーライス", "スパイス")),
        ("桜の開花予想はどうやって決まりますか?", ("開花",)),
        ("PyTorch でニューラルネットワークを学習させる方法は?", ("pytorch", "ニューラル")),
        ("自転車のパンクを修理するには?", ("自転車",)),
        ("日本の消費税率はいくらですか?", ("消費税",)),
        ("猫に与えてはいけない食べ物は何ですか?", ("猫",)),
        ("住宅ローンの金利の選び方は?", ("住宅ローン", "金利")),
        ("将棋の駒の動かし方を教えてください。", ("将棋",)),
        ("サボテンに水をやる頻度は?", ("サボテン",)),
        ("エクセルでピボットグラフを作る方法は?", ("エクセル", "ピボット")),
        ("年金の受給開始年齢は何歳ですか?", ("年金",)),
        ("花粉症の症状を和らげる方法は?", ("花粉",)),
        ("Google Cloud Functions の料金はどのように計算されますか?", ("google cloud",)),
        ("京都でおすすめの紅葉スポットはどこですか?", ("紅葉",)),
        ("運転免許証の住所変更の手続きは?", ("免許",)),
        ("地震が起きたときに最初にすべきことは?", ("地震",)),
        ("パンを発酵させる適切な温度は?", ("発酵",)),
    ),
}


# --------------------------------------------------------------------------- fetch


def _apt_env() -> dict[str, str]:
    return {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}


def _apt_show(name: str) -> dict[str, str]:
    done = subprocess.run(
        ["apt-cache", "show", "--no-all-versions", name],
        capture_output=True,
        text=True,
        check=False,
    )
    fields: dict[str, str] = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition(": ")
        if sep and not line.startswith(" ") and key not in fields:
            fields[key] = value.strip()
    return fields


def _download(package: Package) -> Path:
    DEBS.mkdir(parents=True, exist_ok=True)
    fields = _apt_show(package.name)
    if not fields:
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=_apt_env())
        fields = _apt_show(package.name)
    if not fields:
        sys.exit(f"apt knows no package {package.name}")
    check_allowed(package.name, fields.get("Source", "").split(" ")[0] or None)
    version = fields["Version"]
    quoted = version.replace(":", "%3a")
    have = sorted(DEBS.glob(f"{package.name}_{quoted}_*.deb"))
    if not have:
        subprocess.run(
            ["apt-get", "download", "-q", f"{package.name}={version}"],
            cwd=DEBS,
            check=True,
            env=_apt_env(),
            capture_output=True,
        )
        have = sorted(DEBS.glob(f"{package.name}_{quoted}_*.deb"))
    if not have:
        sys.exit(f"apt-get download {package.name} left no .deb in {DEBS}")
    return have[0]


def _pattern_base(pattern: str) -> str:
    parts = pattern.split("/")
    fixed = [p for p in parts[: next(i for i, p in enumerate(parts) if any(c in p for c in "*?["))]]
    return "/".join(fixed)


def _package_files(package: Package, unpacked: Path) -> tuple[Path, list[Path]]:
    bases = [_pattern_base(p) if any(c in p for c in "*?[") else p.rsplit("/", 1)[0]
             for p in package.include]  # fmt: skip
    base = unpacked / os.path.commonpath(bases)
    files = []
    for path in sorted(unpacked.rglob("*")):
        below = path.relative_to(unpacked).as_posix()
        if not path.is_file() or not any(fnmatch(below, p) for p in package.include):
            continue
        if any(fnmatch(below, p) for p in package.exclude):
            continue
        files.append(path)
    return base, files


_SCRIPT_OR_STYLE = re.compile(r"<(script|style|head)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def plain_text(path: Path) -> str:
    """An HTML file's visible text by a rule of this script's own (tags dropped), so that
    which files are kept does not move when sift's HTML reader changes."""
    import html

    markup = path.read_bytes().decode("utf-8", errors="replace")
    return " ".join(html.unescape(_TAG.sub(" ", _SCRIPT_OR_STYLE.sub(" ", markup))).split())


def _pdf_pages(path: Path) -> int:
    import pypdf

    return len(pypdf.PdfReader(path).pages)


def fetch() -> dict[str, Any]:
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        sys.exit("fetch needs Debian's apt-get and dpkg-deb")
    for package in PACKAGES:
        check_allowed(package.name)
    if DOCS.exists():
        shutil.rmtree(DOCS)
    manifest: dict[str, Any] = {"packages": [], "files": []}
    dropped: Counter[str] = Counter()
    # Exim's chunked spec ships every chapter twice (ch-<name>.html and ch<n>.html): a
    # copy would make every heading and identifier in it look twice as common.
    seen: set[str] = set()
    with _bar() as bar:
        task = bar.add_task("fetch", total=len(PACKAGES))
        for package in PACKAGES:
            bar.update(task, description=f"fetch {package.name}")
            deb = _download(package)
            unpacked = ROOT / package.name
            if unpacked.exists():
                shutil.rmtree(unpacked)
            unpacked.mkdir(parents=True)
            subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
            base, files = _package_files(package, unpacked)
            kept: list[dict[str, Any]] = []
            for source in files:
                below = source.relative_to(base).as_posix().removesuffix(".gz")
                target = DOCS / package.name / below
                target.parent.mkdir(parents=True, exist_ok=True)
                if source.name.endswith(".gz"):
                    with gzip.open(source, "rb") as raw:
                        target.write_bytes(raw.read())
                else:
                    shutil.copyfile(source, target)
                fmt = "pdf" if target.suffix == ".pdf" else "html"
                digest = hashlib.sha256(target.read_bytes()).hexdigest()
                reason = None
                if digest in seen:
                    reason = "same bytes as another file (kept: the first by path)"
                elif fmt == "html":
                    text = plain_text(target)
                    if len(text) < MIN_FILE_CHARS:
                        reason = "too little text"
                    elif package.language == "ja" and language_of(text) != "ja":
                        reason = "not Japanese (untranslated)"
                if reason is not None:
                    dropped[f"{package.name}: {reason}"] += 1
                    target.unlink()
                    continue
                seen.add(digest)
                pages = _pdf_pages(target) if fmt == "pdf" else 1
                kept.append(
                    {
                        "path": f"{package.name}/{below}",
                        "package": package.name,
                        "language": package.language,
                        "format": fmt,
                        "pages": pages,
                        "product": package.product_of(below),
                        "sha256": digest,
                    }
                )
            version = deb.name.split("_")[1].replace("%3a", ":")
            manifest["packages"].append(
                {
                    "name": package.name,
                    "version": version,
                    "language": package.language,
                    "format": sorted({f["format"] for f in kept}),
                    "files": len(kept),
                    "pages": sum(f["pages"] for f in kept),
                }
            )
            manifest["files"] += kept
            bar.advance(task)
    manifest["dropped_files"] = dict(sorted(dropped.items()))
    manifest["pages"] = _page_totals(manifest["files"])
    DATA.mkdir(parents=True, exist_ok=True)
    MANIFEST.write_text(manifest_json(manifest), "utf-8")
    console.print_json(data={"pages": manifest["pages"], "dropped_files": dropped})
    return manifest


def manifest_json(manifest: dict[str, Any]) -> str:
    """The manifest with a line per package and per file, so that a refetch diffs by file."""
    lines = []
    for key, value in manifest.items():
        if isinstance(value, list):
            rows = ",\n".join(f"  {json.dumps(v, ensure_ascii=False)}" for v in value)
            lines.append(f" {json.dumps(key)}: [\n{rows}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _page_totals(files: list[dict[str, Any]]) -> dict[str, int]:
    totals: Counter[str] = Counter()
    for f in files:
        totals[f"{f['language']} {f['format']}"] += f["pages"]
        totals["all"] += f["pages"]
    return dict(sorted(totals.items()))


def load_manifest() -> dict[str, Any]:
    if not MANIFEST.is_file():
        sys.exit(f"no {MANIFEST}: run `python benchmarks/manuals.py fetch` first")
    manifest: dict[str, Any] = json.loads(MANIFEST.read_text("utf-8"))
    return manifest


def check_docs(manifest: dict[str, Any]) -> None:
    """The docs root holds exactly the manifest's files, unchanged."""
    for f in manifest["files"]:
        path = DOCS / f["path"]
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != f["sha256"]:
            sys.exit(f"{path} is missing or differs from the manifest: run `fetch` again")


# --------------------------------------------------------------------------- locations


@dataclass(frozen=True)
class Location:
    doc_id: str
    lang: str  # the manual's language (the manifest's)
    product: str
    text: str
    page: int | None = None
    section: str | None = None

    @property
    def text_lang(self) -> str:
        return language_of(self.text)

    @property
    def key(self) -> tuple[str, str]:
        where = (
            f"p{self.page}"
            if self.page is not None
            else f"s{normalise_heading(self.section or '')}"
        )
        return (self.doc_id, where)

    def gold(self) -> dict[str, Any]:
        if self.page is not None:
            return {"doc_id": self.doc_id, "page": self.page}
        return {"doc_id": self.doc_id, "section": self.section}


@dataclass
class Corpus:
    documents: list[Document]
    locations: list[Location]
    outlines: dict[str, list[tuple[str, int]]]
    products: dict[str, str]
    all_text: str = field(repr=False, default="")


def read_corpus(manifest: dict[str, Any]) -> Corpus:
    from sift.integrations.ingest import SourceNaming, read_inputs

    check_docs(manifest)
    products = {f["path"]: f["product"] for f in manifest["files"]}
    langs = {f["path"]: f["language"] for f in manifest["files"]}
    documents = list(read_inputs([DOCS], naming=SourceNaming(root=DOCS.resolve()), jobs=2))
    locations: list[Location] = []
    outlines: dict[str, list[tuple[str, int]]] = {}
    for d in documents:
        product = products[d.id]
        meta: dict[str, Any] = d.metadata
        if "page_starts" in meta:
            starts = [*meta["page_starts"], len(d.text)]
            for n, (a, b) in enumerate(pairwise(starts), start=1):
                text = d.text[a:b]
                locations.append(Location(d.id, langs[d.id], product, text, page=n))
            outlines[d.id] = _outline(DOCS / d.id)
        elif "section_starts" in meta:
            starts = [*meta["section_starts"], len(d.text)]
            titles: list[str] = meta["section_titles"]
            for title, (a, b) in zip(titles, pairwise(starts), strict=True):
                if title and b > a:
                    text = d.text[a:b]
                    locations.append(Location(d.id, langs[d.id], product, text, section=title))
    return Corpus(documents, locations, outlines, products, "\n".join(d.text for d in documents))


def _outline(path: Path) -> list[tuple[str, int]]:
    """(title, page) of each outline entry of a PDF, in document order."""
    import pypdf

    reader = pypdf.PdfReader(path)
    entries: list[tuple[str, int]] = []

    def walk(items: Iterable[Any]) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # an entry without a usable destination has no page
                continue
            if page is not None and page >= 0:
                entries.append((str(item.title), page + 1))

    try:
        walk(reader.outline)
    except Exception:  # a damaged outline: the PDF simply offers no headings
        return []
    return entries


# --------------------------------------------------------------------------- questions


@dataclass
class Candidate:
    kind: str
    lang: str
    question: str
    gold: list[dict[str, Any]]
    source: str
    package: str
    identifier: str | None = None


def _package(doc_id: str) -> str:
    return doc_id.split("/", 1)[0]


def _topic_text(heading: str, lang: str) -> str:
    """A heading as a user would write it mid-sentence: Title Case words lower-cased,
    names in capitals or CamelCase kept."""
    if lang != "en":
        return heading
    return " ".join(w.lower() if re.fullmatch(r"[A-Z][a-z]+(?:[-'][A-Za-z]+)*", w) else w
                    for w in heading.split())  # fmt: skip


def heading_pool(
    corpus: Corpus, dropped: Counter[str]
) -> list[tuple[Location, list[Location], str]]:
    """(first location, gold locations, cleaned heading) of each usable heading."""
    by_key = {loc.key: loc for loc in corpus.locations}
    raw: list[tuple[list[Location], str]] = []
    for loc in corpus.locations:
        if loc.section is not None:
            raw.append(([loc], loc.section.split(" > ")[-1]))
    for doc_id, entries in corpus.outlines.items():
        for (title, page), nxt in zip(entries, [*entries[1:], None], strict=False):
            first = by_key.get((doc_id, f"p{page}"))
            if first is None:
                continue
            if _squash(clean_heading(title)) not in _squash(first.text):
                dropped["words: outline entry not on its page"] += 1
                continue
            if nxt is not None and nxt[1] == page and _empty_entry(title, nxt[0], first.text):
                dropped["words: outline entry with no text before the next one"] += 1
                continue
            golds = [first]
            if nxt is not None and nxt[1] > page and (doc_id, f"p{page + 1}") in by_key:
                golds.append(by_key[(doc_id, f"p{page + 1}")])
            raw.append((golds, title))
    counts = Counter(normalise_heading(clean_heading(h)) for _, h in raw)
    pool = []
    for golds, title in raw:
        heading = clean_heading(title)
        norm = normalise_heading(heading)
        lang = language_of(heading) if _JA_CHAR.search(heading) else "en"
        n_words = len(words(heading))
        if norm in GENERIC_HEADINGS or not norm:
            dropped["words: generic heading"] += 1
        elif counts[norm] > 1:
            dropped["words: heading not unique in the corpus"] += 1
        elif lang == "en" and not 2 <= n_words <= 8:
            dropped["words: heading not 2-8 words"] += 1
        elif lang == "ja" and not 4 <= len(heading) <= 30:
            dropped["words: Japanese heading not 4-30 characters"] += 1
        elif not lang == golds[0].lang == golds[0].text_lang:
            dropped["words: heading, its text and its manual in different languages"] += 1
        elif sum(len(_content(g.text)) for g in golds) - len(heading) < MIN_SECTION_CHARS[lang]:
            dropped["words: too little text under the heading"] += 1
        elif not re.search(r"[A-Za-z\u3041-\u30ff\u4e00-\u9fff]{2}", heading):
            dropped["words: heading without words"] += 1
        elif not _topical(heading, lang, golds[0].product):
            dropped["words: nothing but the product's name and generic words"] += 1
        else:
            pool.append((golds[0], golds, heading))
    return pool


def _empty_entry(title: str, next_title: str, page_text: str) -> bool:
    """Whether the next outline entry follows this one on the page with (almost) nothing
    between them: a heading without a section (LuaTeX-ja's 「合成」（未完）)."""
    text = _squash(page_text)
    here = text.find(_squash(clean_heading(title)))
    there = text.find(_squash(clean_heading(next_title)), here + 1)
    return here >= 0 and there >= 0 and there - here - len(_squash(clean_heading(title))) < 40


_VAGUE = frozenset(
    ("場合", "方法", "使い方", "概要", "例", "詳細", "一般", "基本", "その他", "注意", "使用")
)


def _topical(heading: str, lang: str, product: str) -> bool:
    """Whether the heading names a topic of its own once the product's name and vague
    words are gone (LuaTeX-ja の場合, "the case of LuaTeX-ja", names none)."""
    product_words = set(words(product))
    left = [
        w
        for w in content_topic(heading, lang).split()
        if w not in _VAGUE and not set(words(w)) <= product_words
    ]
    return bool(left)


def _content(text: str) -> str:
    """Text without the bracketed navigation links of texinfo pages ([ << ] [ Up ] ...),
    which fill some sections that hold nothing else."""
    return re.sub(r"\[[^\[\]]{0,60}\]", "", text)


def _squash(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split()).casefold()


def _passage(golds: Sequence[Location]) -> str:
    return "\n".join(g.text for g in golds)


def words_questions(
    pool: list[tuple[Location, list[Location], str]], seed: int, dropped: Counter[str]
) -> list[Candidate]:
    out = []
    for first, golds, heading in pool:
        lang = first.lang
        template = draw(seed, "words", first.doc_id, heading).choice(WORD_TEMPLATES[lang])
        passage = _passage(golds)
        question = None
        for source, topic in (
            ("heading", heading),
            ("heading-keywords", content_topic(heading, lang)),
        ):
            text = template.format(topic=_topic_text(topic, lang), product=first.product)
            if topic and copied_run(text, passage) is None:
                question = (source, text)
                break
        if question is None:
            dropped["words: copies 4 words of the gold passage"] += 1
            continue
        out.append(
            Candidate(
                "words",
                lang,
                question[1],
                [g.gold() for g in golds],
                f"words/{question[0]}",
                _package(first.doc_id),
            )
        )
    return out


def identifier_index(
    corpus: Corpus, dropped: Counter[str]
) -> dict[str, tuple[str, list[Location]]]:
    """Each identifier's type and the locations that hold it: literally, or for a
    function, its name in any form (a reference page writes `pam_start(pam_handle_t
    *pamh, ...)`, not `pam_start()`)."""
    places: dict[str, dict[tuple[str, str], Location]] = defaultdict(dict)
    kinds: dict[str, str] = {}
    for loc in corpus.locations:
        for kind, ident in find_identifiers(loc.text):
            kinds.setdefault(ident, kind)
            places[ident].setdefault(loc.key, loc)
    names = {ident[:-2]: ident for ident, kind in kinds.items() if kind == "function"}
    for loc in corpus.locations:
        for token in set(re.findall(r"\w+", loc.text)) & names.keys():
            places[names[token]].setdefault(loc.key, loc)
    index = {}
    for ident, where in places.items():
        if ident.endswith(".h") and all(_only_included(ident, loc.text) for loc in where.values()):
            dropped["identifier: a header named only in #include lines"] += 1
            continue
        index[ident] = (kinds[ident], list(where.values()))
    return index


def _only_included(header: str, text: str) -> bool:
    """Whether every mention of `header` in `text` is an #include line of a listing (a
    system header such as signal.h, which the manuals use but never describe)."""
    mentions = len(re.findall(re.escape(header), text))
    included = len(re.findall(r"#\s*include\s*[<\"]" + re.escape(header), text))
    return mentions == included


def _round_robin(groups: dict[str, list[Candidate]], rng: random.Random) -> list[Candidate]:
    """Candidates taken a package at a time, so that no manual fills a kind alone."""
    names = sorted(groups)
    for name in names:
        rng.shuffle(groups[name])
    out = []
    while any(groups[n] for n in names):
        for name in names:
            if groups[name]:
                out.append(groups[name].pop())
    return out


def identifier_questions(
    index: dict[str, tuple[str, list[Location]]], seed: int, dropped: Counter[str]
) -> list[Candidate]:
    out = []
    for ident, (kind, locations) in sorted(index.items()):
        if placeholder(ident):
            dropped["identifier: placeholder, serial number or over 40 characters"] += 1
            continue
        if len(locations) > MAX_IDENTIFIER_LOCATIONS:
            dropped[f"identifier: in more than {MAX_IDENTIFIER_LOCATIONS} locations"] += 1
            continue
        langs = {loc.lang for loc in locations}
        if len(langs) > 1 or len({loc.product for loc in locations}) > 1:
            dropped["identifier: in locations of two languages or manuals"] += 1
            continue
        lang, product = locations[0].lang, locations[0].product
        template = draw(seed, "identifier", ident).choice(IDENTIFIER_TEMPLATES[lang][kind])
        out.append(
            Candidate(
                "identifier",
                lang,
                template.format(ident=ident, product=product),
                [loc.gold() for loc in locations],
                f"identifier/{kind}",
                _package(locations[0].doc_id),
                identifier=ident,
            )
        )
    return out


def two_place_questions(
    index: dict[str, tuple[str, list[Location]]],
    pool: list[tuple[Location, list[Location], str]],
    seed: int,
    dropped: Counter[str],
) -> list[Candidate]:
    out = []
    singles: dict[tuple[str, str], list[tuple[str, Location]]] = defaultdict(list)
    for ident, (_, locations) in sorted(index.items()):
        if len(locations) == 1 and not placeholder(ident):
            loc = locations[0]
            singles[(loc.lang, loc.product)].append((ident, loc))
    for (lang, product), items in sorted(singles.items()):
        draw(seed, "two-identifiers", lang, product).shuffle(items)
        used: set[tuple[str, str]] = set()
        for (a, la), (b, lb) in zip(items[::2], items[1::2], strict=False):
            if la.key == lb.key or la.key in used or lb.key in used:
                dropped["two_place: both identifiers in one location"] += 1
                continue
            used |= {la.key, lb.key}
            template = draw(seed, "two", a, b).choice(TWO_IDENTIFIER_TEMPLATES[lang])
            out.append(
                Candidate(
                    "two_place",
                    lang,
                    template.format(a=a, b=b, product=product),
                    [{**la.gold(), "place": 0}, {**lb.gold(), "place": 1}],
                    "two_place/identifiers",
                    _package(la.doc_id),
                    identifier=f"{a} {b}",
                )
            )
    topics: dict[tuple[str, str], list[tuple[Location, list[Location], str]]] = defaultdict(list)
    for item in pool:
        topics[(item[0].lang, item[0].product)].append(item)
    for (lang, product), pairs in sorted(topics.items()):
        draw(seed, "two-headings", lang, product).shuffle(pairs)
        for (fa, ga, ha), (fb, gb, hb) in zip(pairs[::2], pairs[1::2], strict=False):
            if fa.doc_id == fb.doc_id:
                dropped["two_place: both headings in one document"] += 1
                continue
            template = draw(seed, "two", ha, hb).choice(TWO_TOPIC_TEMPLATES[lang])
            ta, tb = (_topic_text(content_topic(h, lang), lang) for h in (ha, hb))
            if not ta or not tb:
                dropped["two_place: a heading without content words"] += 1
                continue
            question = template.format(a=ta, b=tb, product=product)
            if copied_run(question, _passage(ga)) or copied_run(question, _passage(gb)):
                dropped["two_place: copies 4 words of a gold passage"] += 1
                continue
            gold = [{**g.gold(), "place": 0} for g in ga] + [{**g.gold(), "place": 1} for g in gb]
            out.append(
                Candidate(
                    "two_place", lang, question, gold, "two_place/headings", _package(fa.doc_id)
                )
            )
    return out


def anchor_found(anchor: str, folded: str) -> bool:
    """Whether an off-topic anchor occurs in the case-folded text: Latin anchors as whole
    words (a trailing `*`: as a prefix), Japanese ones anywhere."""
    if re.search(r"[a-z]", anchor):
        stem = re.escape(anchor.rstrip("*").casefold())
        tail = "" if anchor.endswith("*") else r"\b"
        return re.search(rf"\b{stem}{tail}", folded) is not None
    return anchor.casefold() in folded


def absent(term: str, haystack_folded: str) -> bool:
    """Whether `term` occurs nowhere in the (case-folded) text, with or without its
    punctuation (--foo-bar, foo-bar, foo_bar, foobar)."""
    core = identifier_core(term)
    variants = {core, core.replace("-", "_"), core.replace("_", "-"), re.sub(r"[-_]", "", core)}
    variants |= {re.sub(r"[-_]", " ", core)}
    return not any(v in haystack_folded for v in variants if v)


def unanswerable_questions(
    corpus: Corpus,
    index: dict[str, tuple[str, list[Location]]],
    seed: int,
    dropped: Counter[str],
) -> list[Candidate]:
    folded = corpus.all_text.casefold()
    squashed = re.sub(r"[-_\s]", "", folded)
    by_manual: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for ident, (kind, locations) in sorted(index.items()):
        if kind in ("option", "variable", "function") and not placeholder(ident):
            loc = locations[0]
            by_manual[(loc.lang, loc.product, kind, _package(loc.doc_id))].append(ident)
    out = []
    for (lang, product, kind, package), idents in sorted(by_manual.items()):
        draw(seed, "splice", lang, product, kind, package).shuffle(idents)
        seen: set[str] = set()
        for a, b in zip(idents[::2], idents[1::2], strict=False):
            fake = splice(a, b)
            if fake is None or fake in seen:
                dropped["unanswerable: identifiers that do not splice"] += 1
                continue
            if not absent(fake, folded) or re.sub(r"[-_]", "", identifier_core(fake)) in squashed:
                dropped["unanswerable: spliced identifier occurs in the corpus"] += 1
                continue
            seen.add(fake)
            template = draw(seed, "fake", fake).choice(IDENTIFIER_TEMPLATES[lang][kind])
            out.append(
                Candidate(
                    "unanswerable",
                    lang,
                    template.format(ident=fake, product=product),
                    [],
                    "unanswerable/spliced-identifier",
                    package,
                    identifier=fake,
                )
            )
    for lang, items in OFF_TOPIC.items():
        for question, anchors in items:
            if any(anchor_found(a, folded) for a in anchors):
                dropped["unanswerable: off-topic anchor occurs in the corpus"] += 1
                continue
            out.append(Candidate("unanswerable", lang, question, [], "unanswerable/off-topic", "-"))
    return out


def select(candidates: list[Candidate], seed: int, dropped: Counter[str]) -> list[Candidate]:
    chosen: list[Candidate] = []
    for (kind, lang), target in TARGETS.items():
        rng = draw(seed, "select", kind, lang)
        pool = [c for c in candidates if c.kind == kind and c.lang == lang]
        if kind == "unanswerable":
            # Off-topic questions are few and hand-written: all of them, then spliced ones.
            off = [c for c in pool if c.source.endswith("off-topic")]
            rest = [c for c in pool if not c.source.endswith("off-topic")]
            picked = (
                off[: target // 2]
                + _round_robin(_groups(rest), rng)[: target - len(off[: target // 2])]
            )
        elif kind == "identifier":
            # Round robin over (package, identifier type): options alone would fill it.
            groups: dict[str, list[Candidate]] = defaultdict(list)
            for c in pool:
                groups[f"{c.package} {c.source}"].append(c)
            picked = _round_robin(groups, rng)[:target]
        else:
            picked = _round_robin(_groups(pool), rng)[:target]
        if len(picked) < target:
            console.print(f"[yellow]{kind}/{lang}: {len(picked)} of {target} wanted")
        dropped[f"{kind}/{lang}: candidates beyond the target"] += len(pool) - len(picked)
        chosen += picked
    return chosen


def _groups(pool: Iterable[Candidate]) -> dict[str, list[Candidate]]:
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for c in pool:
        groups[c.package].append(c)
    return groups


def build_questions(corpus: Corpus, seed: int = SEED) -> tuple[list[dict[str, Any]], Counter[str]]:
    dropped: Counter[str] = Counter()
    pool = heading_pool(corpus, dropped)
    index = identifier_index(corpus, dropped)
    candidates = words_questions(pool, seed, dropped)
    candidates += identifier_questions(index, seed, dropped)
    candidates += two_place_questions(index, pool, seed, dropped)
    candidates += unanswerable_questions(corpus, index, seed, dropped)
    made = Counter(f"{c.kind}/{c.lang}" for c in candidates)
    console.print(f"candidates: {dict(sorted(made.items()))}")
    chosen = select(candidates, seed, dropped)
    rows = []
    numbers: Counter[str] = Counter()
    for c in chosen:
        numbers[f"{c.kind}-{c.lang}"] += 1
        qid = f"{c.kind}-{c.lang}-{numbers[f'{c.kind}-{c.lang}']:03d}"
        row: dict[str, Any] = {
            "id": qid,
            "lang": c.lang,
            "kind": c.kind,
            "question": c.question,
            "gold": c.gold,
        }
        if c.identifier is not None:
            row["identifier"] = c.identifier
        row |= {"split": split_of(qid), "source": c.source}
        rows.append(row)
    return rows, dropped


def questions_command() -> None:
    manifest = load_manifest()
    console.print("reading the docs root")
    corpus = read_corpus(manifest)
    console.print(f"{len(corpus.documents)} documents, {len(corpus.locations)} locations")
    rows, dropped = build_questions(corpus)
    QUESTIONS.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    counts = Counter(f"{r['kind']}/{r['lang']}" for r in rows)
    console.print(f"{len(rows)} questions: {dict(sorted(counts.items()))}")
    console.print("dropped, by rule:")
    for rule, n in sorted(dropped.items()):
        console.print(f"  {n:6d}  {rule}")
    summary = {"questions": dict(sorted(counts.items())), "dropped": dict(sorted(dropped.items()))}
    (DATA / "questions_summary.json").write_text(
        json.dumps(summary, indent=1, ensure_ascii=False) + "\n", "utf-8"
    )


# --------------------------------------------------------------------------- run

_INDEX_CODE = (
    "sift.integrations.ingest",
    "sift.integrations.stores",
    "sift.integrations.chunking",
    "sift.integrations.embedders",
    "sift.text",
)


def index_fingerprint() -> str:
    """A hash of the code that decides what the store holds (the readers too: a store
    built by other code is rebuilt, never reused)."""
    try:
        from sift.integrations.eval import code_fingerprint
    except ImportError:  # a checkout from before sift eval had it (`--before`)
        return _old_checkout_fingerprint()
    return code_fingerprint(_INDEX_CODE)


def _old_checkout_fingerprint() -> str:
    """Where an older checkout's index code lives and its files' sizes: enough to keep
    its store apart from this code's, and reused while that checkout stays put."""
    import importlib.util

    digest = hashlib.sha256()
    for name in _INDEX_CODE:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        root = Path(spec.origin).resolve().parent
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{path}:{path.stat().st_size}\n".encode())
    return "old-" + digest.hexdigest()[:12]


def open_store(manifest: dict[str, Any], bar: Progress) -> tuple[Any, bool]:
    """The docs root in a cached SqliteCorpus (default static embedder)."""
    from sift.integrations.ingest import SourceNaming, read_inputs
    from sift.integrations.stores.sqlite import SqliteCorpus

    docs_hash = hashlib.sha256(
        "".join(f"{f['path']}:{f['sha256']}\n" for f in manifest["files"]).encode()
    ).hexdigest()[:12]
    folder = STORES / f"{docs_hash}-{index_fingerprint()}"
    done = folder / "complete"
    if done.is_file():
        return SqliteCorpus(folder / "store"), False
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    check_docs(manifest)
    task = bar.add_task("index", total=len(manifest["files"]))
    corpus = SqliteCorpus(folder / "store")
    documents = read_inputs(
        [DOCS],
        naming=SourceNaming(root=DOCS.resolve()),
        jobs=2,
        on_file=lambda _: bar.advance(task),
    )
    report = corpus.upsert(documents)
    if report.failed:
        sys.exit(f"{len(report.failed)} documents failed to index: {report.failed[:3]}")
    done.write_text(json.dumps({"chunks": report.chunks_written}), encoding="utf-8")
    return corpus, True


def _bar() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


def is_not_found(flags: Iterable[str]) -> bool:
    return any(f == "not_found" or f.startswith("not_found:") for f in flags)


def outcome(question: dict[str, Any], result: SearchResult, latency_s: float) -> dict[str, Any]:
    """What one answer scores: each gold place's first rank, the identifier's, flags."""
    places: dict[int, int | None] = {}
    for gold in question["gold"]:
        place = int(gold.get("place", 0))
        places.setdefault(place, None)
        rank = next(
            (
                i
                for i, e in enumerate(result.evidence, start=1)
                if gold_matches(gold, e.doc_id, e.metadata)
            ),
            None,
        )
        if rank is not None and (places[place] is None or rank < (places[place] or 0)):
            places[place] = rank
    out: dict[str, Any] = {
        "ranks": [places[p] for p in sorted(places)],
        "latency_ms": round(latency_s * 1000, 1),
        "peak_tokens": result.usage.peak_context_tokens,
        "turns": result.usage.turns,
        "tool_calls": result.usage.tool_calls,
        "flags": list(result.flags),
        "evidence": len(result.evidence),
    }
    if question.get("identifier") and question["kind"] == "identifier":
        ident = question["identifier"]
        out["identifier_rank"] = next(
            (i for i, e in enumerate(result.evidence[:TOP_K], start=1) if ident in e.text), None
        )
    if result.error:
        out["error"] = result.error
    return out


async def _answer_all(
    questions: list[dict[str, Any]], corpus: Any, systems: Sequence[str], bar: Progress, label: str
) -> dict[str, dict[str, dict[str, Any]]]:
    from sift.graphs import asearch, single_shot
    from sift.types import SearchResult

    outcomes: dict[str, dict[str, dict[str, Any]]] = {s: {} for s in systems}
    gate = asyncio.Semaphore(CONCURRENCY)
    for system in systems:
        task = bar.add_task(f"{label}: {system}", total=len(questions))

        async def one(question: dict[str, Any], system: str = system, task: Any = task) -> None:
            async with gate:
                started = time.perf_counter()
                try:
                    if system == "single-shot":
                        result = await asyncio.to_thread(
                            single_shot, question["question"], corpus, top_k=TOP_K
                        )
                    else:
                        result = await asearch(question["question"], corpus, top_k=TOP_K)
                except Exception as exc:  # one bad question must not sink the run
                    result = SearchResult(
                        question=question["question"],
                        stopped_because="error",
                        error=f"{type(exc).__name__}: {exc}",
                    )
                latency = time.perf_counter() - started
            outcomes[system][question["id"]] = outcome(question, result, latency)
            bar.advance(task)

        await asyncio.gather(*(one(q) for q in questions))
    return outcomes


def load_questions(half: str, limit: int | None) -> list[dict[str, Any]]:
    if not QUESTIONS.is_file():
        sys.exit(f"no {QUESTIONS}: run `python benchmarks/manuals.py questions` first")
    rows = [json.loads(line) for line in QUESTIONS.read_text("utf-8").splitlines() if line]
    if half != "all":
        rows = [r for r in rows if r["split"] == half]
    if limit is not None:
        # Every kind and language keeps its share when the run is cut short.
        rng = random.Random(SEED)
        rows = sorted(rng.sample(rows, min(limit, len(rows))), key=lambda r: r["id"])
    return rows


def answer(questions: list[dict[str, Any]], systems: Sequence[str], label: str) -> dict[str, Any]:
    """Every question answered by every system with this interpreter's sift."""
    import sift

    manifest = load_manifest()
    with _bar() as bar:
        corpus, rebuilt = open_store(manifest, bar)
        try:
            started = time.perf_counter()
            outcomes = asyncio.run(_answer_all(questions, corpus, systems, bar, label))
            wall = time.perf_counter() - started
            chunks = corpus.stats().chunks
        finally:
            corpus.close()
    return {
        "sift": str(Path(sift.__file__).resolve().parent),
        "store_rebuilt": rebuilt,
        "chunks": chunks,
        "wall_s": round(wall, 1),
        "outcomes": outcomes,
    }


def answer_before(
    checkout: Path, systems: Sequence[str], half: str, limit: int | None
) -> dict[str, Any]:
    """The same questions answered by another checkout's sift, in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as folder:
        farm = store_ab.farm(checkout.resolve(), Path(folder))
        out = Path(folder) / "before.json"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(farm), env.get("PYTHONPATH")]))
        command = [sys.executable, __file__, "run", "--worker", str(out), "--half", half]
        command += ["--systems", ",".join(systems)]
        if limit is not None:
            command += ["--limit", str(limit)]
        done = subprocess.run(command, env=env, check=False)
        if done.returncode != 0 or not out.is_file():
            sys.exit(f"the run of {checkout} failed (exit {done.returncode})")
        result: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return result


def _revision(checkout: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "unknown"


# --------------------------------------------------------------------------- metrics


def _p50(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def summarise(
    questions: list[dict[str, Any]], outcomes: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The figures of one system over `questions`."""
    rows = [(q, outcomes[q["id"]]) for q in questions if q["id"] in outcomes]
    if not rows:
        return {"n": 0}
    answered = [(q, o) for q, o in rows if q["kind"] != "unanswerable"]
    out: dict[str, Any] = {"n": len(rows)}
    for k in (1, 5, 10):
        hits = [any(r is not None and r <= k for r in o["ranks"]) for _, o in answered]
        out[f"hit@{k}"] = round(sum(hits) / len(hits), 3) if hits else None
    two = [o for q, o in rows if q["kind"] == "two_place"]
    if two:
        out["all@10"] = round(
            sum(all(r is not None and r <= 10 for r in o["ranks"]) for o in two) / len(two), 3
        )
    ident = [o for q, o in rows if q["kind"] == "identifier"]
    if ident:
        top3 = [o.get("identifier_rank") is not None and o["identifier_rank"] <= 3 for o in ident]
        out["ident@3"] = round(sum(top3) / len(ident), 3)
    flagged = [is_not_found(o["flags"]) for _, o in rows]
    out["not_found"] = round(sum(flagged) / len(flagged), 3)
    out["latency_p50_ms"] = _p50([o["latency_ms"] for _, o in rows])
    peaks = [float(o["peak_tokens"]) for _, o in rows]
    out["peak_p50"] = _p50(peaks)
    out["peak_max"] = int(max(peaks))
    out["turns_p50"] = _p50([float(o["turns"]) for _, o in rows])
    out["calls_p50"] = _p50([float(o["tool_calls"]) for _, o in rows])
    out["errors"] = sum(1 for _, o in rows if o.get("error"))
    return out


def report(questions: list[dict[str, Any]], sides: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Figures by side, system, half, kind and language."""
    figures: dict[str, Any] = {}
    for side, run in sides.items():
        for system, outcomes in run["outcomes"].items():
            entry: dict[str, Any] = {}
            for half in ("all", "tune", "held"):
                qs = [q for q in questions if half == "all" or q["split"] == half]
                groups: dict[str, Any] = {"all": summarise(qs, outcomes)}
                for kind in KINDS:
                    for lang in ("all", "en", "ja"):
                        sub = [q for q in qs if q["kind"] == kind and lang in ("all", q["lang"])]
                        groups[f"{kind}/{lang}"] = summarise(sub, outcomes)
                entry[half] = groups
            figures[f"{side} {system}"] = entry
    return figures


# --------------------------------------------------------------------------- reports

_COLUMNS = (
    ("n", "n"),
    ("hit@1", "hit@1"),
    ("hit@5", "hit@5"),
    ("hit@10", "hit@10"),
    ("all@10", "all-gold@10"),
    ("ident@3", "identifier in top 3"),
    ("not_found", "not-found flag"),
    ("latency_p50_ms", "p50 ms"),
    ("peak_p50", "peak tokens p50"),
    ("peak_max", "peak tokens max"),
    ("turns_p50", "turns p50"),
    ("calls_p50", "tool calls p50"),
)


_SHARES = frozenset({"hit@1", "hit@5", "hit@10", "all@10", "ident@3", "not_found"})


def _cell(value: Any, key: str = "hit@1") -> str:
    if value is None:
        return "-"
    if key in _SHARES:
        return f"{value:.3f}"
    return f"{value:,.1f}" if isinstance(value, float) and value < 10 else f"{value:,.0f}"


def markdown(result: dict[str, Any]) -> str:
    manifest = result["manifest"]
    figures = result["figures"]
    pages = manifest["pages"]
    counts = Counter(f"{q['kind']}/{q['lang']}" for q in result["questions"])
    lines = [
        "# Real documents: manuals Debian ships (issue 44)",
        "",
        f"Regenerate: `{result['command']}` (after `python benchmarks/manuals.py fetch` and "
        "`python benchmarks/manuals.py questions`; how the corpus and the questions are "
        "built: the script's docstring).",
        "",
        "## Where things stand",
        "",
        *_standing(figures, result["labels"]),
        "",
        "## Corpus",
        "",
        f"{pages['all']:,} pages ({_pairs(pages)}; "
        "an HTML file counts as one page), "
        f"{sum(p['files'] for p in manifest['packages'])} files, indexed into "
        f"{result['chunks']:,} chunks. Packages (Debian 12):",
        "",
        "| package | version | language | format | files | pages |",
        "| --- | --- | --- | --- | ---: | ---: |",
    ]
    for p in manifest["packages"]:
        lines.append(
            f"| {p['name']} | {p['version']} | {p['language']} | {', '.join(p['format'])} | "
            f"{p['files']} | {p['pages']:,} |"
        )
    lines += [
        "",
        f"{len(result['questions'])} questions run ({_pairs(counts)}); "
        f"half: {result['half']}. Top {TOP_K} evidence items per question; a hit@k is a gold "
        "location (document and page, or section) among the first k. Machine: "
        f"{result['machine']} (shared: latencies are upper bounds; {CONCURRENCY} questions "
        "in flight).",
        "",
    ]
    for half in ("all", "tune", "held"):
        lines += [f"## {half.capitalize()} {'questions' if half == 'all' else 'half'}", ""]
        for kind in KINDS:
            keys = [k for k, _ in _COLUMNS if _relevant(k, kind)]
            lines += [
                f"### {kind}",
                "",
                "| system | lang | " + " | ".join(dict(_COLUMNS)[k] for k in keys) + " |",
                "| --- | --- | " + " | ".join("---:" for _ in keys) + " |",
            ]
            for name, entry in figures.items():
                for lang in ("all", "en", "ja"):
                    row = entry[half][f"{kind}/{lang}"]
                    if row.get("n"):
                        lines.append(
                            f"| {name} | {lang} | "
                            + " | ".join(_cell(row.get(k), k) for k in keys)
                            + " |"
                        )
            lines.append("")
    lines += [
        "## Hand check",
        "",
        result.get("hand_check", "Not done for this run."),
        "",
        "Per-question outcomes (ranks of each gold place, latency, peak tokens, turns, tool "
        "calls, flags): the JSON beside this file.",
    ]
    return "\n".join(lines) + "\n"


def _pairs(counts: dict[str, int] | Counter[str]) -> str:
    return ", ".join(f"{k}: {v:,}" for k, v in sorted(counts.items()) if k != "all")


def _relevant(key: str, kind: str) -> bool:
    if key in ("hit@1", "hit@5", "hit@10"):
        return kind != "unanswerable"
    if key == "all@10":
        return kind == "two_place"
    if key == "ident@3":
        return kind == "identifier"
    return True


def _standing(figures: dict[str, Any], labels: dict[str, str]) -> list[str]:
    out = []
    for name, entry in figures.items():
        rows = entry["all"]
        answered = ", ".join(
            f"{kind} {_cell(rows[f'{kind}/all'].get('hit@5'))}" for kind in KINDS[:3]
        )
        out.append(
            f"- {name}: hit@5 {answered}; not-found flag on unanswerable "
            f"{_cell(rows['unanswerable/all'].get('not_found'))} against "
            f"{_cell(_answered_flag(entry))} on answerable; p50 "
            f"{_cell(rows['all'].get('latency_p50_ms'), 'ms')} ms, peak context p50 "
            f"{_cell(rows['all'].get('peak_p50'), 'peak')} tokens "
            f"(max {_cell(rows['all'].get('peak_max'), 'peak')})."
        )
    out.append("")
    out.append("Sides: " + "; ".join(f"{k} = {v}" for k, v in labels.items()) + ".")
    return out


def _answered_flag(entry: dict[str, Any]) -> float | None:
    rows = entry["all"]
    total = sum(rows[f"{k}/all"].get("n", 0) for k in KINDS[:3])
    if not total:
        return None
    flagged = sum(
        rows[f"{k}/all"].get("n", 0) * (rows[f"{k}/all"].get("not_found") or 0) for k in KINDS[:3]
    )
    return round(flagged / total, 3)


def plot(result: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        console.print("matplotlib is not installed: no plot")
        return
    figures = result["figures"]
    kinds = KINDS[:3]
    fig, axes = plt.subplots(1, len(kinds), figsize=(4 * len(kinds), 3.4), sharey=True)
    for ax, kind in zip(axes, kinds, strict=True):
        for name, entry in figures.items():
            row = entry["all"][f"{kind}/all"]
            ax.plot(
                [1, 5, 10], [row.get(f"hit@{k}") or 0 for k in (1, 5, 10)], marker="o", label=name
            )
        ax.set_title(kind)
        ax.set_xlabel("k")
        ax.set_xticks([1, 5, 10])
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("hit@k")
    axes[0].set_ylim(0, 1)
    axes[-1].legend(fontsize=8, loc="lower right")
    fig.suptitle("Debian manuals: hit@k by kind")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def run_command(args: argparse.Namespace) -> None:
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        sys.exit(f"unknown systems {unknown}; valid: {', '.join(SYSTEMS)}")
    questions = load_questions(args.half, args.limit)
    if args.worker:
        result = answer(questions, systems, "before")
        Path(args.worker).write_text(json.dumps(result, ensure_ascii=False), "utf-8")
        return
    sides: dict[str, dict[str, Any]] = {}
    labels: dict[str, str] = {}
    if args.before is not None:
        if not (args.before / "core").is_dir():
            sys.exit("--before must name a checkout of sift (a folder holding core/)")
        name = f"before {_revision(args.before)}"
        sides[name] = answer_before(args.before, systems, args.half, args.limit)
        labels[name] = f"{args.before} ({sides[name]['sift']})"
    name = f"this {_revision(REPO)}" if args.before is not None else "sift"
    sides[name] = answer(questions, systems, name)
    labels[name] = f"this checkout, {_revision(REPO)} plus its working tree ({sides[name]['sift']})"
    if args.before is not None and sides[next(iter(sides))]["sift"] == sides[name]["sift"]:
        sys.exit("both sides imported the same sift")
    import platform

    command = "python benchmarks/manuals.py run" + "".join(f" {a}" for a in sys.argv[2:] if a)
    result = {
        "command": command,
        "half": args.half,
        "labels": labels,
        "manifest": {k: load_manifest()[k] for k in ("packages", "pages")},
        "chunks": sides[name]["chunks"],
        "machine": (
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
        ),
        "questions": questions,
        "figures": report(questions, sides),
        "outcomes": {
            f"{side} {system}": o
            for side, run in sides.items()
            for system, o in run["outcomes"].items()
        },
    }
    if args.hand_check.is_file():
        result["hand_check"] = args.hand_check.read_text("utf-8").strip()
    for key, figures in result["figures"].items():
        console.print(key, {k: v for k, v in figures["all"]["all"].items()})
    if args.json:
        slim = {k: v for k, v in result.items() if k != "questions"}
        slim["question_ids"] = [q["id"] for q in questions]
        args.json.write_text(json.dumps(slim, indent=1, ensure_ascii=False) + "\n", "utf-8")
    if args.markdown:
        args.markdown.write_text(markdown(result), encoding="utf-8")
        plot(result, args.markdown.with_suffix(".png"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="download the packages and pick their manuals")
    sub.add_parser("questions", help="build the questions from the docs root")
    run = sub.add_parser("run", help="index the docs and answer the questions")
    run.add_argument("--systems", default=",".join(SYSTEMS))
    run.add_argument("--half", choices=("tune", "held", "all"), default="all")
    run.add_argument("--limit", type=int)
    run.add_argument("--json", type=Path)
    run.add_argument("--markdown", type=Path)
    run.add_argument("--before", type=Path, help="another checkout of sift, run first")
    run.add_argument(
        "--hand-check", type=Path, default=HAND_CHECK, help="a file whose text the markdown quotes"
    )
    run.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.command == "fetch":
        fetch()
    elif args.command == "questions":
        questions_command()
    else:
        run_command(args)


if __name__ == "__main__":
    main()
