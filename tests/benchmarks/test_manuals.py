"""benchmarks/manuals.py's pure rules: words and the copied-run check (English and
Japanese), gold matching (with the `¶` marks Sphinx adds to headings), identifier
extraction, spliced identifiers, the exclusion list and the split. No network, no apt,
no corpus: tiny inline samples."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from ..conftest import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "manuals.py"


@pytest.fixture(scope="module")
def manuals() -> ModuleType:
    return load_script(SCRIPT, "manuals_under_test")


def test_words_cut_japanese_at_changes_of_script(manuals: ModuleType) -> None:
    assert manuals.words("設定ファイルの場所") == ["設定", "ファイル", "の", "場所"]
    assert manuals.words("Ｓｏｕｒｃｅｓ.list ファイル") == ["sources", "list", "ファイル"]
    assert manuals.words("Don't copy--me") == ["don", "t", "copy", "me"]


def test_copied_run_finds_four_english_words_in_a_row(manuals: ModuleType) -> None:
    passage = "Exim checks the sender address before it accepts the message."
    assert manuals.copied_run("Why does it check the SENDER address, before accepting?", passage)
    assert manuals.copied_run("How does Exim verify who sent a message?", passage) is None
    # Three words in a row are not a copied run.
    assert manuals.copied_run("the sender address is odd", passage) is None
    assert manuals.copied_run("checks the sender address", passage) == (
        "checks",
        "the",
        "sender",
        "address",
    )


def test_copied_run_in_japanese_counts_script_runs(manuals: ModuleType) -> None:
    passage = "APT は /etc/apt/sources.list ファイルの内容を読みます。"
    # ファイル の 内容 を: four words of the passage in a row.
    assert manuals.copied_run("sources.list ファイルの内容を教えて", passage)
    # The hiragana dropped (content words only): no run of four.
    assert manuals.copied_run("APT の sources list ファイル 内容 について", passage) is None
    assert (
        manuals.content_topic("sources.list ファイルの内容", "ja") == "sources.list ファイル 内容"
    )


def test_gold_matches_pages_and_sections(manuals: ModuleType) -> None:
    page_gold = {"doc_id": "gle/manual.pdf", "page": 12}
    assert manuals.gold_matches(page_gold, "gle/manual.pdf", {"page": 12, "pages": [12, 12]})
    assert not manuals.gold_matches(page_gold, "gle/manual.pdf", {"page": 11})
    assert not manuals.gold_matches(page_gold, "other.pdf", {"page": 12})
    assert not manuals.gold_matches(page_gold, "gle/manual.pdf", {"section": "x"})
    section_gold = {
        "doc_id": "sphinx-doc/usage.html",
        "section": "Configuration¶ > Project information¶",
    }
    chunk = "sphinx-doc/usage.html"
    assert manuals.gold_matches(
        section_gold, chunk, {"section": "Configuration¶ > Project information¶"}
    )
    # A reader that drops the marks, or the navigation headings above, still matches.
    assert manuals.gold_matches(
        section_gold, chunk, {"section": "Configuration > Project  information"}
    )
    assert manuals.gold_matches(section_gold, chunk, {"section": "project information"})
    assert not manuals.gold_matches(section_gold, chunk, {"section": "Configuration¶"})
    assert not manuals.gold_matches(section_gold, chunk, {"page": 3})
    assert manuals.normalise_heading("A > 6.1.\u00a0構文 ¶") == "6.1. 構文"


def test_identifiers_as_users_type_them(manuals: ModuleType) -> None:
    text = (
        "Run git rebase --update-refs or set GIT_TRACE_PACKET=1; call sqlite3_busy_timeout() "
        "and include <security/pam_appl.h>. Edit /etc/exim4/update-exim4.conf.conf, then "
        "\\jlreqsetup{}. Not identifiers: --x, -v, PATH, SQLITE, foo(), /etc/, line.h, "
        "nor a folder cut short: /etc/security/limits.d/."
    )
    found = manuals.find_identifiers(text)
    assert found == [
        ("option", "--update-refs"),
        ("variable", "GIT_TRACE_PACKET"),
        ("function", "sqlite3_busy_timeout()"),
        ("file", "security/pam_appl.h"),
        ("file", "/etc/exim4/update-exim4.conf.conf"),
        ("command", "\\jlreqsetup"),
    ]


def test_a_heading_must_name_a_topic_of_its_own(manuals: ModuleType) -> None:
    assert not manuals._topical("LuaTeX-ja の場合", "ja", "LuaTeX-ja")
    assert manuals._topical("ハープ ペダル", "ja", "LilyPond")
    assert manuals._topical("Running GLE", "en", "GLE")
    assert not manuals._topical("Using GLE", "en", "GLE")


def test_headers_only_in_include_lines(manuals: ModuleType) -> None:
    listing = '#include <stdio.h>\n#include "signal.h"\nint main() {}'
    assert manuals._only_included("signal.h", listing)
    assert not manuals._only_included("signal.h", listing + " Include signal.h for SIGINT.")


def test_splice_makes_identifiers_that_look_real(manuals: ModuleType) -> None:
    assert manuals.splice("--update-refs", "--no-verify") == "--update-verify"
    assert manuals.splice("GIT_TRACE_PACKET", "PAM_AUTH_ERR") == "GIT_AUTH_ERR"
    assert manuals.splice("sqlite3_busy_timeout()", "pam_get_item()") == "sqlite3_get_item()"
    assert manuals.splice("--verbose", "--quiet") is None  # no parts to splice
    haystack = "use --update-refs or gitupdateverify".casefold()
    assert not manuals.absent("--update-verify", haystack)  # found without its hyphens
    assert manuals.absent("--update-quiet", haystack)


def test_headings_lose_their_numbering(manuals: ModuleType) -> None:
    assert manuals.clean_heading("6.1.2. 安定版 ユーザ用リポジトリ") == "安定版 ユーザ用リポジトリ"
    assert manuals.clean_heading("第 6 章 メンテナンスと更新") == "メンテナンスと更新"
    assert manuals.clean_heading("Chapter 44 - Access control lists") == "Access control lists"
    assert manuals.clean_heading("Project information¶") == "Project information"
    assert manuals.clean_heading("git-rebase(1)") == "git-rebase"
    assert manuals.clean_heading("22 Zsh Modules") == "Zsh Modules"
    # A number that belongs to the words stays: 3 次ベジエ曲線 is "cubic Bézier curves".
    assert manuals.clean_heading("3 次ベジエ曲線") == "3 次ベジエ曲線"


def test_excluded_packages_are_refused(manuals: ModuleType) -> None:
    for name in ("bash-doc", "r-doc-pdf", "debian-reference-ja", "gnuplot-doc"):
        with pytest.raises(manuals.ExcludedPackageError, match="independent check"):
            manuals.check_allowed(name)
    with pytest.raises(manuals.ExcludedPackageError):
        manuals.check_allowed("valgrind-doc-html", source="valgrind")
    manuals.check_allowed("sphinx-doc", source="sphinx")
    assert not {p.name for p in manuals.PACKAGES} & manuals.EXCLUDED


def test_split_is_stable_and_roughly_even(manuals: ModuleType) -> None:
    assert manuals.split_of("words-en-001") == manuals.split_of("words-en-001")
    # Pinned: a change of rule would move questions between the halves.
    assert [manuals.split_of(f"identifier-ja-{n:03d}") for n in range(1, 7)] == [
        manuals.split_of(f"identifier-ja-{n:03d}") for n in range(1, 7)
    ]
    halves = [manuals.split_of(f"q-{n}") for n in range(1000)]
    assert 400 < halves.count("tune") < 600


def test_not_found_flag(manuals: ModuleType) -> None:
    assert manuals.is_not_found(["not_found"])
    assert manuals.is_not_found(["x", "not_found: no key term"])
    assert not manuals.is_not_found(["found_not", "partial"])
