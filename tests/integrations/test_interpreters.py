"""Child interpreters (the ingest child, the search processes) start isolated from the
folder the user runs sift in: a folder named `sift` there never runs inside them."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift.integrations.interpreters import start_python

_REPLY = (
    "from sift.integrations.interpreters import child_pipes; import sift; "
    "requests, answers = child_pipes(); answers.send_bytes(sift.__file__.encode())"
)


def test_a_sift_folder_in_the_current_folder_is_not_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "sift"
    planted.mkdir()
    marker = tmp_path / "ran.txt"
    # What a stray checkout, or a hostile download, in the user's folder could hold.
    planted.joinpath("__init__.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\nraise SystemExit(9)\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    process, requests, answers = start_python(_REPLY)
    try:
        assert answers.poll(60), f"the child never answered (exit code {process.poll()})"
        loaded = Path(answers.recv_bytes().decode())
    finally:
        requests.close()
        answers.close()
        process.wait(timeout=60)
    assert not marker.exists()
    assert tmp_path not in loaded.parents
    assert process.returncode == 0
