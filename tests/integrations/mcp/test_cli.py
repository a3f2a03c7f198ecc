"""`sift mcp`'s options: bad values and a missing SDK are one-line errors (exit status 2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sift.integrations.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Exit status and stderr, with the error panel's frame and line breaks taken out."""
    with pytest.raises(SystemExit) as done:
        main(["mcp", *args])
    code = done.value.code
    err = capsys.readouterr().err
    for frame in "│╭╮╰╯─":
        err = err.replace(frame, " ")
    return (code if isinstance(code, int) else 1), " ".join(err.split())


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--transport", "sse"), "valid transports are stdio, streamable-http"),
        (("--policy", "gpt"), "valid policies are heuristic, ollama"),
        (("--log-level", "loud"), "valid levels are debug, info, warning, error, critical"),
        (("--top-k", "0"), "--top-k"),
        (("--port", "70000"), "--port"),
        (("--max-turns", "5000"), "max_turns: Input should be less than or equal to 1000"),
        (("--policy", "ollama", "--think", "max"), "think must be low, medium, high"),
    ],
)
def test_bad_options_are_refused(
    capsys: pytest.CaptureFixture[str], store_path: Path, args: tuple[str, ...], expected: str
) -> None:
    code, err = run(capsys, "--store", str(store_path), *args)
    assert code == 2
    assert expected in err


def test_without_the_sdk_the_error_names_the_extra(
    capsys: pytest.CaptureFixture[str], store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if `pip install sift-harness` had been run without the mcp extra.
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "mcp", None)
    for name in [m for m in sys.modules if m.startswith("sift.integrations.mcp")]:
        monkeypatch.delitem(sys.modules, name)
    code, err = run(capsys, "--store", str(store_path))
    assert code == 2
    assert "sift mcp needs the mcp extra (mcp" in err
    assert "pip install 'sift-harness[mcp]'" in err
