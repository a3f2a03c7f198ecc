"""Fixtures every test folder may use, and the rule that nothing is skipped silently."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

# A warm `sift serve` freezes the heap (gc.freeze): in this process it would freeze every
# test's objects, so that later tests could no longer find leaks by collecting them. The
# services the tests start in-process leave the heap alone; test_http_admission checks
# the freeze itself.
os.environ.setdefault("SIFT_SERVER_FREEZE_HEAP", "false")
# Services started by tests search on worker threads unless a test asks for search
# processes (the shared `served` service does, and test_http_processes): spawning them
# for every app would cost seconds each.
os.environ.setdefault("SIFT_SERVER_SEARCH_PROCESSES", "0")

from sift.types import Document

ROOT = Path(__file__).resolve().parents[1]


def load_script(path: Path, name: str) -> ModuleType:
    """A script or example of the repository (benchmarks/, examples/) imported as module
    `name`, registered in sys.modules (LangGraph and dataclasses resolve annotations
    through it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def colliding_build(tmp_path: Path) -> Callable[[str], ModuleType]:
    """Builds one of sift's C parts (its source, from the repository root) with 4 hash bits
    (SIFT_HASH_MASK, integrations/embedders/_pieces_table.h): nearly every key shares its hash with
    others, so the code that tells them apart runs."""

    def build(source: str) -> ModuleType:
        compiler = shutil.which("gcc") or shutil.which("cc")
        if compiler is None:
            pytest.skip("no C compiler to build the colliding variant")
        name = Path(source).stem
        target = tmp_path / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
        include = sysconfig.get_paths()["include"]
        flags = [
            "-O2",
            "-std=c11",
            "-shared",
            "-fPIC",
            f"-I{include}",
        ]
        subprocess.run(
            [compiler, *flags, "-DSIFT_HASH_MASK=0xF", str(ROOT / source), "-o", str(target)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        spec = importlib.util.spec_from_file_location(name, target)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return build


@pytest.fixture
def leaked_transports() -> Iterator[Callable[[], list[str]]]:
    """Call it at the end of a test: the network transports the test opened and dropped
    without closing them (asyncio reports each as a ResourceWarning when it is collected).

    Garbage from earlier tests is collected first, so only this test's leaks count."""
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)

        def leaked() -> list[str]:
            gc.collect()
            return [
                str(w.message)
                for w in caught
                if issubclass(w.category, ResourceWarning) and "unclosed" in str(w.message)
            ]

        yield leaked


# What pytest says when a skip was given no reason of its own.
_NO_REASON = ("unconditional skip", "condition:", "could not import")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """A skip must say why and what to set or install to run the test: one without a
    reason of its own fails instead."""
    report: pytest.TestReport = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ").strip()
        if reason in ("", "Skipped") or reason.lower().startswith(_NO_REASON):
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} was skipped without saying why or what to set or install "
                f"to run it ({reason!r}): give the skip a reason"
            )
    return report


# ---------------------------------------------------------------------- benchmark data

# Small samples of the shared dev sets, committed (tests/data/benchmarks/README.md).
SAMPLES = ROOT / "tests" / "data" / "benchmarks"
# The whole dev sets, beside the repository; absent from a fresh clone.
SHARED = ROOT.parent / "shared" / "benchmarks"


@pytest.fixture(scope="session")
def samples() -> Path:
    """The committed samples of the dev sets: <name>/corpus.jsonl and questions.jsonl for
    hotpotqa, musique, 2wikimultihopqa and jsquad, in the shared schema."""
    return SAMPLES


@pytest.fixture(scope="session")
def shared_benchmarks() -> Path:
    """The whole dev sets at ../shared/benchmarks, for tests of a whole set (its counts, a
    whole-corpus run), not a sample. Where they are absent the test skips, naming them;
    under .ci/run (SIFT_REQUIRE_SHARED=1) it fails instead, so CI never passes by skipping
    them. The one place that decides: every test reaching ../shared asks for this."""
    if (SHARED / "README.md").is_file():
        return SHARED
    message = f"the shared benchmarks are absent: put them at ../shared/benchmarks ({SHARED})"
    if os.environ.get("SIFT_REQUIRE_SHARED") == "1":
        pytest.fail(f"{message}; SIFT_REQUIRE_SHARED=1 requires them", pytrace=False)
    pytest.skip(message)


# ---------------------------------------------------------------------- Japanese text

JSQUAD = SAMPLES / "jsquad"
# Whole articles, so a question's gold paragraph must be told from its article's others.
_JSQUAD_ARTICLES = ("梅雨", "国際連合平和維持活動")
_TOKYO_WARD = re.compile("東京都[^。]*区")


@dataclass(frozen=True)
class JapaneseSample:
    """A small mixed corpus: whole JSQuAD articles, the paragraphs naming a Tokyo ward
    (東京都…区, for grep), a Japanese page with Latin names and two English pages; and
    real JSQuAD dev questions with their gold paragraph."""

    documents: list[Document]
    # (question, gold document id)
    questions: list[tuple[str, str]]

    def gold(self, question: str) -> str:
        return dict(self.questions)[question]


# A Japanese page holding Latin names, beside English pages about the same thing.
APPLE_JA = Document(
    id="ja-apple",
    title="アップル",
    text=(
        "アップル（Apple Inc.）は、アメリカ合衆国カリフォルニア州クパチーノに本社を置く"
        "企業である。iPhone、iPad、iPodなどの製品を製作・販売している。"
    ),
    metadata={"lang": "ja"},
)
ENGLISH_PAGES = [
    Document(
        id="en-ipod",
        title="iPod",
        text="The iPod is a line of portable media players. Sales ended in 2022.",
        metadata={"lang": "en"},
    ),
    Document(
        id="en-rain",
        title="Rainy season",
        text="The rainy season is the time of year when most of a region's rain falls.",
        metadata={"lang": "en"},
    ),
]


@pytest.fixture(scope="session")
def japanese_sample() -> JapaneseSample:
    rows = [json.loads(line) for line in (JSQUAD / "corpus.jsonl").open(encoding="utf-8")]
    keep = [r for r in rows if r["title"] in _JSQUAD_ARTICLES or _TOKYO_WARD.search(r["text"])]
    documents = [
        Document(id=r["id"], title=r["title"], text=r["text"], metadata={"lang": "ja"})
        for r in keep
    ]
    ids = {d.id for d in documents}
    questions = []
    for line in (JSQUAD / "questions.jsonl").open(encoding="utf-8"):
        record = json.loads(line)
        gold = record["supporting_doc_ids"][0]
        if gold in ids:
            questions.append((record["question"], gold))
    return JapaneseSample([*documents, APPLE_JA, *ENGLISH_PAGES], questions)


# --------------------------------------------------------------------------- small disks

_PROBE = "mount -t tmpfs -o size=1m tmpfs {mnt} && test -d {mnt}"


def _small_disk_reason(tmp_path: Path) -> str | None:
    """Why a size-limited folder cannot be made here, or None when it can: a tmpfs mounted
    in a private mount namespace (`unshare -rm`, unprivileged through a user namespace)."""
    if shutil.which("unshare") is None:
        return "no `unshare` to mount a size-limited tmpfs: apt-get install util-linux"
    mnt = tmp_path / "probe"
    mnt.mkdir()
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", _PROBE.format(mnt=mnt)],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return (
            "cannot mount a size-limited tmpfs in a private mount namespace here "
            f"(unshare -rm: {probe.stderr.strip() or probe.returncode}): allow "
            "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)"
        )
    return None


@pytest.fixture
def small_disk(tmp_path: Path) -> Path:
    """A folder where a script run with `unshare -rm sh -c` may mount a tmpfs (of a size
    it chooses, remounted read-only if it likes): a full disk or a read-only mount."""
    reason = _small_disk_reason(tmp_path)
    if reason:
        pytest.skip(reason)
    mnt = tmp_path / "disk"
    mnt.mkdir()
    return mnt


@pytest.fixture
def in_mount_namespace(small_disk: Path, tmp_path: Path) -> Callable[[str], Any]:
    """Runs a shell script in a private mount namespace (`unshare -rm`), where it may
    mount a tmpfs on `small_disk`; its completed process, output as text."""

    def run(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["unshare", "-rm", "sh", "-c", script],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            timeout=300,
            check=False,
        )

    return run
