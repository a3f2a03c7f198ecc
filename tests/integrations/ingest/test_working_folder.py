"""No child process imports from the folder the user runs sift in (issue 42).

`sift index` reads PDFs in worker processes (multiprocessing's spawn) and finds entities
in a worker of its own; both were started as `python -c ...`, which puts the working
folder first on the import path. A harmless `threading.py` there (a user's own script)
was imported by every PDF reader, which then died, and every valid PDF was reported
"malformed". Here the folder holds a `threading.py`, a `json.py` and a `pickle.py` that
raise on import, and the children must not notice them.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import numbered_pages, write_pdf

_HOSTILE = (
    'raise ImportError("{name}.py of the working folder was imported / 作業フォルダの{name}.py")\n'
)

# The parent reads the PDFs with two worker processes from the first file on (no
# payback wait), so the workers surely start; it is a script outside the working folder
# (as the `sift` command is), so only its children could import from there.
_READ = textwrap.dedent(
    """
    import json, sys
    from sift.integrations.ingest import plan_inputs
    from sift.integrations.ingest._read import _Reader

    def main():
        plan = plan_inputs([sys.argv[1]])
        problems = []
        reader = _Reader(plan.files, problems, jobs=2, on_file=None, payback_s=0)
        documents = list(reader.documents())
        pooled = reader._pool is not None
        reader.close()
        print(json.dumps({
            "pooled": pooled,
            "documents": sorted(d.id for d in documents),
            "text": " ".join(d.text for d in documents),
            "problems": [f"{p.source}: {p.reason}" for p in problems],
        }, ensure_ascii=False))

    if __name__ == "__main__":  # spawn's children import this module again
        main()
    """
)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A working folder whose `threading.py`, `json.py` and `pickle.py` (which the
    entity worker imports) raise when imported."""
    folder = tmp_path / "work"
    folder.mkdir()
    for name in ("threading", "json", "pickle"):
        (folder / f"{name}.py").write_text(_HOSTILE.format(name=name), encoding="utf-8")
    # The trap works: a plain `python -c` there imports it.
    trapped = subprocess.run(
        [sys.executable, "-c", "import threading"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "threading.py of the working folder was imported" in trapped.stderr
    return folder


def _pdfs(folder: Path) -> Path:
    pdfs = folder / "pdfs"
    for n in range(4):
        write_pdf(pdfs / f"report-{n}.pdf", numbered_pages(3, marker=f"Report{n}"))
    write_pdf(pdfs / "報告書.pdf", [["決算報告書 売上高は増加しました。"]], font="HeiseiMin-W3")
    return pdfs


def test_pdf_reader_processes_ignore_the_working_folder(hostile: Path, tmp_path: Path) -> None:
    pdfs = _pdfs(hostile)
    script = tmp_path / "read.py"
    script.write_text(_READ, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(pdfs)],
        cwd=hostile,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "working folder was imported" not in done.stderr
    report = json.loads(done.stdout)
    assert report["pooled"] is True
    assert report["problems"] == []
    assert len(report["documents"]) == 5
    assert "Report3 page 2" in report["text"] and "決算報告書" in report["text"]


def test_sift_index_reads_valid_pdfs_whatever_the_working_folder_holds(
    hostile: Path, tmp_path: Path
) -> None:
    """The command itself, from that folder, end to end: every PDF stored, none called
    malformed, the Japanese one searchable. (Whether its reader pool starts depends on
    how long reading takes here; the tests around this one start each child surely.)"""
    pdfs = _pdfs(hostile)
    store = tmp_path / "store"
    sift = Path(sys.executable).with_name("sift")
    done = subprocess.run(
        [str(sift), "index", str(pdfs), "--store", str(store), "--embedder", "hash", "-j", "2"],
        cwd=hostile,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "malformed" not in done.stdout + done.stderr
    assert "working folder was imported" not in done.stderr
    found = subprocess.run(
        [str(sift), "grep", "--store", str(store), "決算報告書"],
        cwd=hostile,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    assert "報告書.pdf" in found.stdout


def test_the_entity_worker_ignores_the_working_folder(hostile: Path) -> None:
    from sift.entities import EntityGraphConfig, graph_row, worker_command

    limits = EntityGraphConfig().limits()
    texts = [
        ("Kanazawa", "The Kanazawa Tower stands near Kenroku-en Garden."),
        ("金沢", "金沢タワーは兼六園の近くにあります。"),
    ]
    done = subprocess.run(
        worker_command(),
        input=pickle.dumps(limits) + pickle.dumps(texts),
        cwd=hostile,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert pickle.loads(done.stdout) == [
        tuple(graph_row("", title, text, limits)[1:]) for title, text in texts
    ]
