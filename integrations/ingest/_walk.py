"""Which files an ingest reads, the document id of each, and which stored documents a
sync removes.

Identity: a file's document id never depends on how its path was spelled. It is the
file's path relative to a root folder (`root`: a store records the one it was first
indexed with, see `default_root`), so `docs/a.pdf`, `./docs/a.pdf`, `/home/me/docs/a.pdf`
and a run over `docs/..` all name the same document. The root is the current folder when
everything given lies inside it, else the folder holding what was given, so a folder
given from outside is named the same on a store's first run and on any later one: its
name, then the path below it (`../b/notes` stores `notes/sub/x.md`). A file outside the
recorded root is named that way too, by the folder given on the command line (a file
given directly, by its folder's name and its own), so an id never holds `..` and never
names an absolute path. With an explicit `prefix` it is that prefix plus the path below
the folder given (or the file's name, for a file given directly): for ids that stay the
same when the files move. Ids are in Unicode NFC, so a name spelled decomposed (macOS)
prints and matches like the same name typed. Why this rule: docs/decisions/0019.

`InputFile.former_id` is the id an earlier sift gave the file (relative to the root even
outside it, `../b/notes/x.md`; not NFC; or, in a store that records no root, relative to
the folder given itself, as `default_root` chose before 0019), when it differs: `sift
index` renames such a stored document and reports it.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sift.integrations.ingest._jsonl import is_jsonl
from sift.integrations.ingest._results import InputError, InputProblem

__all__ = [
    "HEAVY_KINDS",
    "SUPPORTED_SUFFIXES",
    "FileKind",
    "InputFile",
    "InputPlan",
    "SourceNaming",
    "default_root",
    "file_kind",
    "plan_inputs",
    "stale_documents",
]

FileKind = Literal["text", "markdown", "html", "pdf", "docx", "pptx", "csv", "tsv", "jsonl"]

_KINDS: dict[str, FileKind] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
}
SUPPORTED_SUFFIXES = (*_KINDS, ".jsonl.gz")
# Formats whose reading is CPU-bound work in a library: read in worker processes.
HEAVY_KINDS = frozenset({"pdf", "docx", "pptx"})


def file_kind(path: Path) -> FileKind | None:
    """The format a file is read as, by its name; None when sift does not read it."""
    if is_jsonl(path):
        return "jsonl"
    return _KINDS.get(path.suffix.lower())


@dataclass(frozen=True, slots=True)
class SourceNaming:
    """How files become document ids: relative to `root`, or `prefix` + the path below
    the folder given. Exactly one is set once an ingest is planned."""

    root: Path | None = None
    prefix: str | None = None
    # The root an earlier sift named these files by, when it differs from `root`: only
    # for stores that record no root, where each run chose one (see `unrecorded`).
    former_root: Path | None = None

    @classmethod
    def unrecorded(cls, paths: Sequence[str | os.PathLike[str]]) -> SourceNaming:
        """The naming of a run into a store that records no root (Weaviate): this run's
        `default_root`, with the root a sift before docs/decisions/0019 chose for the same
        inputs as the former one, so what it stored is renamed, not duplicated."""
        root = default_root(paths)
        before = _root_before_0019(paths)
        return cls(root=root, former_root=before if before != root else None)

    def doc_id(self, absolute: Path, below: str, folder: Path) -> str:
        """The id of the file at `absolute`, `below` the folder given (`folder`, absolute;
        a file's own folder when the file was given directly)."""
        if self.prefix is not None:
            return _nfc(self.prefix + below)
        assert self.root is not None
        if absolute.is_relative_to(self.root):
            return _nfc(absolute.relative_to(self.root).as_posix())
        return _nfc(f"{folder.name}/{below}" if folder.name else below)

    def former_id(self, absolute: Path, below: str, folder: Path) -> str | None:
        """The id sift gave this file before ids stayed inside their folder and were
        NFC, when that differs from `doc_id`."""
        if self.prefix is not None:
            old = self.prefix + below
        else:
            root = self.former_root or self.root
            assert root is not None
            old = Path(os.path.relpath(absolute, root)).as_posix()
        return old if old != self.doc_id(absolute, below, folder) else None


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@dataclass(frozen=True, slots=True)
class InputFile:
    """A file to read: as the user's path names it (`source`, for messages), its absolute
    location (recorded as metadata `source`) and its document id."""

    path: Path
    absolute: Path
    doc_id: str
    kind: FileKind
    former_id: str | None = None

    @property
    def source(self) -> str:
        return str(self.path)


@dataclass(slots=True)
class InputPlan:
    """What an ingest will read: the files in order, the files it will not read (each
    with its reason) and how many hidden entries it passed over."""

    files: list[InputFile] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    hidden: int = 0
    naming: SourceNaming = field(default_factory=SourceNaming)
    folders: list[Path] = field(default_factory=list)


def _absolute(path: Path) -> Path:
    return Path(os.path.realpath(path))


def default_root(paths: Sequence[str | os.PathLike[str]], cwd: Path | None = None) -> Path:
    """The root a store records on its first ingest: the current folder when every input
    lies inside it, else the deepest folder holding the folders given (for a file given
    directly, the folder holding its folder), so each folder given is named by its name,
    then the path below it, exactly as a later run names a folder outside the root. When
    that is the file system's root (whose relative paths would be absolute ones), the
    current folder, and the inputs are named by their folders."""
    here = _absolute(cwd or Path.cwd())
    places = [_place(Path(raw)) for raw in paths]
    if not places or all(p == here or p.is_relative_to(here) for p in places):
        return here
    common = Path(os.path.commonpath([p.parent for p in places]))
    return here if common == Path(common.anchor) else common


def _place(raw: Path) -> Path:
    """The folder an input names: itself, or a file's folder."""
    path = _absolute(raw)
    return path if path.is_dir() else path.parent


def _root_before_0019(paths: Sequence[str | os.PathLike[str]]) -> Path:
    """`default_root` as it was: the deepest folder holding the inputs themselves, so a
    lone folder outside the current one was its own root and its name was in no id."""
    here = _absolute(Path.cwd())
    places = [_place(Path(raw)) for raw in paths]
    if not places or all(p == here or p.is_relative_to(here) for p in places):
        return here
    common = Path(os.path.commonpath(places))
    return here if common == Path(common.anchor) else common


def _check(path: Path) -> None:
    if not path.exists():
        raise InputError(f"input not found: {path}")
    if not os.access(path, os.R_OK):
        raise InputError(f"input not readable: {path}")
    if path.is_file() and file_kind(path) is None:
        raise InputError(
            f"unsupported input {path}: expected one of {', '.join(SUPPORTED_SUFFIXES)}"
        )


def plan_inputs(
    paths: Iterable[str | os.PathLike[str]], naming: SourceNaming | None = None
) -> InputPlan:
    """The files under the inputs, in a stable order, each with its id.

    Every input is checked first, so a typo in the last argument fails (InputError)
    before anything is read. Inside folders, a file sift does not read is reported with
    its reason; hidden files and folders (names starting with '.') are counted, not read.
    """
    roots = [Path(p) for p in paths]
    for root in roots:
        _check(root)
    if naming is None or (naming.root is None and naming.prefix is None):
        naming = SourceNaming(root=default_root(roots))
    plan = InputPlan(naming=naming)
    for given in roots:
        base = _absolute(given)
        if given.is_file():
            kind = file_kind(given)
            assert kind is not None
            plan.files.append(_input(given, base, given.name, base.parent, kind, naming))
            continue
        plan.folders.append(base)
        for folder, dirs, files in os.walk(given):
            plan.hidden += sum(1 for d in dirs if d.startswith("."))
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.startswith("."):
                    plan.hidden += 1
                    continue
                path = Path(folder) / name
                below = path.relative_to(given).as_posix()
                kind = file_kind(path)
                if kind is None:
                    plan.problems.append(
                        InputProblem(
                            source=str(path),
                            reason="unsupported type",
                            error=f"unsupported type ({path.suffix.lower() or 'no extension'}); "
                            f"sift reads {', '.join(SUPPORTED_SUFFIXES)}",
                        )
                    )
                    continue
                plan.files.append(_input(path, base / below, below, base, kind, naming))
    return plan


def _input(
    path: Path, absolute: Path, below: str, folder: Path, kind: FileKind, naming: SourceNaming
) -> InputFile:
    return InputFile(
        path,
        absolute,
        naming.doc_id(absolute, below, folder),
        kind,
        naming.former_id(absolute, below, folder),
    )


def stale_documents(
    documents: Iterable[tuple[str, str | None]], folders: Sequence[Path]
) -> list[str]:
    """Ids of the stored documents (id, metadata `source`) whose source file lies under
    one of `folders` and no longer exists. Documents from elsewhere are never touched."""
    wanted = [_absolute(f) for f in folders]
    stale: list[str] = []
    for doc_id, source in documents:
        if not source:
            continue
        path = Path(source)
        if any(path.is_relative_to(f) for f in wanted) and not path.exists():
            stale.append(doc_id)
    return stale
