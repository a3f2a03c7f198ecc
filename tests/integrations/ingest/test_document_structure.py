"""Real documents read right: PDF line wraps joined (Japanese and English words, URLs),
a term kept with its description (PDF option lists, HTML definition lists), and HTML
read for its main content (Sphinx's `¶` heading links and navigation sidebar, DocBook's
navigation headers and footers left out), with its sections kept for citations."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from sift.integrations.chunking import chunk_spans_within
from sift.integrations.ingest import extract, plan_inputs
from sift.integrations.stores.locations import boundaries, chunk_metadata
from sift.types import Document

# (x, y, text) of each line drawn on a page, in points; a line ending in JUSTIFY is
# stretched to the right edge of the text column, as a justified line that wrapped.
Placed = Sequence[tuple[float, float, str]]
JUSTIFY = "\t"
RIGHT_EDGE = 480.0


def _pdf(path: Path, pages: Sequence[Placed], font: str = "Helvetica", size: float = 10) -> Path:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfgen import canvas

    if font == "HeiseiMin-W3":
        from reportlab.pdfbase.cidfonts import UnicodeCIDFont

        pdfmetrics.registerFont(UnicodeCIDFont(font))
    pdf = canvas.Canvas(str(path))
    for lines in pages:
        for x, y, text in lines:
            line = pdf.beginText(x, y)
            line.setFont(font, size)
            if text.endswith(JUSTIFY):
                text = text[: -len(JUSTIFY)]
                slack = RIGHT_EDGE - x - pdfmetrics.stringWidth(text, font, size)
                line.setCharSpace(max(slack, 0) / max(len(text) - 1, 1))
            line.textOut(text)
            pdf.drawText(line)
        pdf.showPage()
    pdf.save()
    return path


def _one(path: Path) -> Document:
    (file,) = plan_inputs([path]).files
    result = extract(file)
    assert not result.problems, result.problems
    (document,) = result.documents
    return document


def _chunks(document: Document, max_tokens: int) -> list[str]:
    spans = chunk_spans_within(document.text, boundaries(document.metadata), max_tokens)
    return [document.text[start:end] for start, end, _ in spans]


def test_japanese_pdf_line_wraps_inside_words_and_urls_are_joined(tmp_path: Path) -> None:
    wrapped = [
        "パッケージを作成するには、debhelper や make 等のよ" + JUSTIFY,
        "うにパッケージ依存関係で必要なツールを揃えます。詳細は(htt" + JUSTIFY,
        "ps://www.debian.org/doc/devel-manuals) を参照。",
    ]
    heading = "第5章 パッケージの取扱い方"
    page = [(72, 760, heading), *[(72, 730 - 14 * i, line) for i, line in enumerate(wrapped)]]
    document = _one(_pdf(tmp_path / "guide.pdf", [page], font="HeiseiMin-W3"))
    assert "make 等のようにパッケージ依存関係で" in document.text
    assert "(https://www.debian.org/doc/devel-manuals)" in document.text
    # The heading's line is short: it ends a block, it is not joined to the text.
    assert document.text.startswith(heading + "\n\n")
    for chunk in _chunks(document, 8):
        assert not chunk.endswith(("等のよ", "(htt")), chunk


def test_english_pdf_hyphenated_wraps_and_urls_are_joined(tmp_path: Path) -> None:
    lines = [
        "The configuration file is read at start-up; edit the configu-" + JUSTIFY,
        "ration, then reload it. Every command-line option has a command-" + JUSTIFY,
        "line twin, documented at https://www.debian.org/doc/manuals/" + JUSTIFY,
        "debian-reference/ch01.en.html for the curious reader of it.",
    ]
    page = [(72, 760 - 14 * i, line) for i, line in enumerate(lines)]
    document = _one(_pdf(tmp_path / "manual.pdf", [page]))
    text = document.text
    assert "edit the configuration, then" in text  # "configuration" is a word of the text
    assert "has a command-line twin" in text  # the compound keeps its hyphen
    assert "https://www.debian.org/doc/manuals/debian-reference/ch01.en.html" in text


@pytest.mark.parametrize(
    ("font", "term", "description", "filler"),
    [
        (
            "Helvetica",
            "--num-callers=<number> [default: 12]",
            [
                "Specifies the maximum number of entries shown in stack traces that" + JUSTIFY,
                "identify program locations. Errors are commoned up using the top" + JUSTIFY,
                "four function locations.",
                "Note that errors are commoned up using only the top four function" + JUSTIFY,
                "locations. The maximum value for this is 500.",
            ],
            "Valgrind reads its options from the command line and from files. " * 8,
        ),
        (
            "HeiseiMin-W3",
            "--num-callers=<数> [既定値: 12]",
            [
                "スタックトレースで表示するプログラムの位置の最大数を指定します。エラー" + JUSTIFY,
                "は上位四つの関数位置でまとめられます。",
                "エラーは上位四つの関数の位置だけでまとめられることに注意してください" + JUSTIFY,
                "。指定できる最大値は500です。",
            ],
            "Valgrindはオプションをコマンドラインとファイルから読みます。" * 6,
        ),
    ],
)
def test_pdf_option_stays_with_its_indented_description(
    tmp_path: Path, font: str, term: str, description: list[str], filler: str
) -> None:
    from reportlab.pdfbase import pdfmetrics

    # Filler text laid out in justified lines, a short last line.
    words = filler.split(" ") if " " in filler else list(filler)
    joiner = " " if " " in filler else ""
    filler_lines: list[str] = []
    current = ""
    for word in words:
        candidate = f"{current}{joiner}{word}" if current else word
        if pdfmetrics.stringWidth(candidate, font, 10) > RIGHT_EDGE - 72:
            filler_lines.append(current + JUSTIFY)
            current = word
        else:
            current = candidate
    filler_lines.append(current.strip() or "…")
    page: list[tuple[float, float, str]] = []
    y = 760.0
    for line in filler_lines:
        page.append((72, y, line))
        y -= 14
    y -= 8
    page.append((72, y, term))
    for line in description:
        y -= 14
        page.append((100, y, line))
    page.append((72, y - 22, "--error-limit=<yes|no> [default: yes]"))
    document = _one(_pdf(tmp_path / "options.pdf", [page], font=font))
    text = document.text
    entry_start = text.index(term)
    entry_end = text.index("500") + 3
    assert "\n\n" not in text[entry_start:entry_end]
    for max_tokens in (160, 200):
        holding = [chunk for chunk in _chunks(document, max_tokens) if term in chunk]
        assert holding and "500" in holding[0], (max_tokens, holding)


_SPHINX = """<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8" /><title>{page} — Manual</title></head>
<body>
<div class="related" role="navigation" aria-label="related navigation"><h3>{nav}</h3>
<ul><li><a href="index.html" accesskey="U">{home}</a> &#187;</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="uploads"><h1>5. {page}<a class="headerlink" href="#uploads"
 title="Permalink">¶</a></h1>
<p>{intro}</p>
<section id="delayed"><h2>5.6.3. {sub}<a class="headerlink" href="#delayed"
 title="Permalink">¶</a></h2>
<p>{body}</p>
<dl class="option"><dt id="opt"><code>--delayed=&lt;days&gt;</code><a class="headerlink"
 href="#opt" title="Permalink">¶</a></dt>
<dd><p>{term_first}</p><p>{term_second}</p></dd></dl>
</section></section>
</div></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation">
<div class="sphinxsidebarwrapper"><h3>{nav}</h3><ul><li><a href="a.html">{side}</a></li>
</ul><div id="searchbox" role="search"><h3>{search}</h3></div></div></div></div>
<div class="footer" role="contentinfo">&#169; Copyright 2023. Created using Sphinx.</div>
</body></html>
"""

_SPHINX_PAGES = {
    "en": {
        "lang": "en",
        "page": "Uploads",
        "nav": "Navigation",
        "home": "Developer's Reference",
        "side": "Resources for Debian Developers",
        "search": "Quick search",
        "intro": "How to upload a package to the archive, and when.",
        "sub": "Delayed uploads",
        "body": "A delayed upload waits in the queue for the number of days given.",
        "term_first": "Waits the given number of days before the upload is processed.",
        "term_second": "The maximum is 15 days; 0 uploads at once.",
    },
    "ja": {
        "lang": "ja",
        "page": "パッケージの取扱い方",
        "nav": "ナビゲーション",
        "home": "Debian 開発者リファレンス",
        "side": "Debian 開発者向けの情報",
        "search": "クイック検索",
        "intro": "パッケージをアーカイブにアップロードする方法と時期を説明します。",
        "sub": "遅延アップロード",
        "body": "遅延アップロードは指定した日数だけキューで待ちます。",
        "term_first": "アップロードが処理されるまで指定した日数だけ待ちます。",
        "term_second": "最大値は15日で、0を指定するとすぐにアップロードされます。",
    },
}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_sphinx_html_without_heading_links_or_navigation(tmp_path: Path, lang: str) -> None:
    words = _SPHINX_PAGES[lang]
    path = tmp_path / "uploads.html"
    path.write_text(_SPHINX.format(**words), encoding="utf-8")
    document = _one(path)
    text = document.text
    assert "¶" not in text
    for furniture in (words["nav"], words["side"], words["search"], "Copyright", words["home"]):
        assert furniture not in text
    titles = document.metadata["section_titles"]
    assert titles == [f"5. {words['page']}", f"5. {words['page']} > 5.6.3. {words['sub']}"]
    at = text.index(words["body"])
    assert chunk_metadata(document.metadata, at, at + 5)["section"] == titles[1]
    # A definition's term and its description paragraphs are one block.
    term = text.index("--delayed=<days>")
    assert "\n\n" not in text[term : text.index(words["term_second"])]
    assert text.startswith(f"5. {words['page']}\n\n{words['intro']}")


_DOCBOOK = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
 "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title>
<meta name="generator" content="DocBook XSL Stylesheets Vsnapshot" /></head><body>
<div class="navheader"><table width="100%" summary="Navigation header"><tr>
<th colspan="3" align="center">{title}</th></tr><tr><td align="left">
<a accesskey="p" href="ch02s01.html">{prev}</a> </td><th align="center">{chapter}</th>
<td align="right"> <a accesskey="n" href="ch02s03.html">{next}</a></td></tr></table><hr />
</div>
<div class="section"><div class="titlepage"><div><div><h2 class="title"
 style="clear: both"><a id="idm1461"></a>{title}</h2></div></div></div>
<p>{body} <span class="guimenu">{menu}</span> → <span class="guimenuitem">{item}</span>
 (<span class="keycap"><strong>u</strong></span>).</p>
<div class="variablelist"><dl class="variablelist"><dt><span class="term">
<code class="literal">--without-recommends</code></span></dt><dd><p>{option}</p></dd></dl></div>
</div>
<div class="navfooter"><hr /><table width="100%" summary="Navigation footer"><tr>
<td align="left"><a accesskey="p" href="ch02s01.html">{prev}</a> </td>
<td align="center"><a accesskey="h" href="index.html">{home}</a></td>
<td align="right"> <a accesskey="n" href="ch02s03.html">{next}</a></td></tr></table></div>
</body></html>
"""


@pytest.mark.parametrize(
    "words",
    [
        {
            "title": "Managing the package list",
            "prev": "Prev",
            "next": "Next",
            "home": "Home",
            "chapter": "Chapter 2. aptitude reference guide",
            "body": "Update the package list regularly, with",
            "menu": "Actions",
            "item": "Update package list",
            "option": "Do not treat recommendations as dependencies when installing.",
        },
        {
            "title": "パッケージ一覧の管理",
            "prev": "戻る",
            "next": "次へ",
            "home": "ホーム",
            "chapter": "第2章 aptitude リファレンスガイド",
            "body": "パッケージ一覧は定期的に更新することをお勧めします。更新は、",
            "menu": "アクション",
            "item": "パッケージ一覧の更新",
            "option": "パッケージをインストールする際に推奨パッケージを依存関係として扱いません。",
        },
    ],
)
def test_docbook_html_keeps_its_text_and_heading_without_navigation(
    tmp_path: Path, words: dict[str, str]
) -> None:
    path = tmp_path / "ch02s02.html"
    path.write_text(_DOCBOOK.format(**words), encoding="utf-8")
    document = _one(path)
    text = document.text
    assert document.metadata["section_titles"] == [words["title"]]
    assert f"{words['menu']} → {words['item']}" in text
    for furniture in (words["prev"], words["next"], words["home"], words["chapter"]):
        assert furniture not in text
    assert f"--without-recommends\n{words['option']}" in text


# Publican (the DocBook toolchain of the Debian Administrator's Handbook): a banner, the
# logos in `p#title`, and `ul.docnav` lists above and below the section.
_PUBLICAN = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN"
 "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd"><html
 xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title>
<meta name="generator" content="publican v4.3.2" /></head><body>
<div id="banner"><a href="http://debian-handbook.info/get/"><span class="text">{banner}</span>
</a></div><p id="title"><a class="left" href="http://www.debian.org"><img alt="Product Site"
 src="image_left.png" /></a><a class="right" href="index.html"><img
 alt="Documentation Site" src="image_right.png" /></a></p>
<ul class="docnav top"><li class="previous"><a accesskey="p" href="prev.html"><strong>{prev}
</strong></a></li><li class="home">{book}</li><li class="next"></li></ul>
<div class="section"><div class="titlepage"><div><div><h2 class="title"><a id="s"></a>{title}
</h2></div></div></div><div class="para">{body}</div></div>
<ul class="docnav"><li class="previous"><a accesskey="p" href="prev.html"><strong>{prev}
</strong>{prev_title}</a></li><li class="up"><a accesskey="u" href="#"><strong>{up}</strong>
</a></li><li class="home"><a accesskey="h" href="index.html"><strong>{home}</strong></a></li>
</ul></body></html>
"""


@pytest.mark.parametrize(
    "words",
    [
        {
            "title": "B.5. User Space",
            "banner": "Download the ebook",
            "prev": "Prev",
            "book": "The Debian Administrator's Handbook",
            "body": "User space refers to the runtime environment of normal processes.",
            "prev_title": "B.4. Some Tasks Handled by the Kernel",
            "up": "Up",
            "home": "Home",
        },
        {
            "title": "B.5. ユーザ空間",
            "banner": "Download the ebook",
            "prev": "戻る",
            "book": "Debian 管理者ハンドブック",
            "body": "「ユーザ空間」とは通常プロセスの実行環境を意味します。",
            "prev_title": "B.4. カーネルが担当している一部の操作",
            "up": "上に戻る",
            "home": "ホーム",
        },
    ],
)
def test_publican_html_without_its_navigation(tmp_path: Path, words: dict[str, str]) -> None:
    path = tmp_path / "sect.user-space.html"
    path.write_text(_PUBLICAN.format(**words), encoding="utf-8")
    document = _one(path)
    text = document.text
    assert text.startswith(words["title"]) and words["body"] in text
    for furniture in ("banner", "prev", "book", "prev_title", "up", "home"):
        assert words[furniture] not in text, furniture
    assert document.metadata["section_titles"] == [words["title"]]
