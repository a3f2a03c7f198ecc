"""The command line on Japanese: search and grep answer Japanese questions and patterns,
and lines are cut by terminal cells (a kanji takes two), not by characters."""

from __future__ import annotations

import json
from pathlib import Path

from rich.cells import cell_len

PARAGRAPH = (
    "梅雨は初夏の東アジアで雨の多い時期である。日本では北海道と小笠原諸島を除く各地で見られる。"
    "梅雨前線は太平洋高気圧とオホーツク海高気圧のあいだに停滞し、長雨をもたらす。"
) * 4


def test_japanese_search_and_grep_at_terminal_width(sift, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tsuyu.md").write_text(f"# 梅雨\n\n{PARAGRAPH}\n", encoding="utf-8")
    (folder / "fuji.md").write_text(
        "# 富士山\n\n富士山は静岡県と山梨県にまたがる日本最高峰の火山である。\n", encoding="utf-8"
    )
    store = str(tmp_path / "store")
    assert sift("index", "--store", store, "-q", str(folder)).returncode == 0

    run = sift("search", "--store", store, "-q", "日本で梅雨がないのは北海道とどこか。")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].startswith(" 1. 梅雨")
    # The evidence text line is cut to 200 cells (plus its indent and the ellipsis).
    text_lines = [line for line in lines if line.startswith("    梅雨") or "梅雨前線" in line]
    assert text_lines and all(cell_len(line) <= 205 for line in lines)
    assert any(line.endswith("…") and cell_len(line) > 190 for line in text_lines)

    grep = sift("grep", "--store", store, "--json", "北海道と[^。]*島")
    assert grep.returncode == 0, grep.stderr
    (hit,) = json.loads(grep.stdout)["hits"]
    assert hit["chunk"]["title"] == "梅雨"
