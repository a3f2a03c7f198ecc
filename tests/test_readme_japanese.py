"""The README's Japanese example runs as written: its shell block, in an empty folder,
with the installed `sift`, indexes the Japanese notes and finds the rainy-season page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def japanese_block() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Japanese (日本語)", 1)[1]
    match = re.search(r"```bash\n(.*?)```", section, re.S)
    assert match, "the Japanese section has no bash block"
    return match.group(1)


def test_the_japanese_example_runs_as_written(tmp_path: Path) -> None:
    script = japanese_block()
    assert "sift index" in script and "sift search" in script
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "SIFT_HOME": str(tmp_path / "home"),
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }
    env.pop("SIFT_STORE", None)
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "日本で梅雨がないのは北海道とどこか。"
    first = next(line for line in lines if line.startswith(" 1. "))
    assert "梅雨" in first and "梅雨.md" in first
    assert "小笠原諸島" in run.stdout
