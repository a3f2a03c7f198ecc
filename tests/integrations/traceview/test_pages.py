"""Trace and index pages as files: self-contained, faithful to the episode, escaped."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from importlib import resources

import pytest

from sift.graphs import HarnessConfig, asearch, merge_rollouts
from sift.integrations.traceview import (
    IndexRow,
    TokenTiers,
    TraceFolder,
    asearch_rollouts,
    page_file_name,
    render_index_html,
    render_trace_html,
    ui_page,
    write_trace_html,
)
from sift.types import SearchResult

SVG_NAMESPACE = "http://www.w3.org/2000/svg"


class _Page(HTMLParser):
    """Collects what decides whether a page reaches the network."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []
        self.tags: list[str] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.styles: list[str] = []
        self.csp: str | None = None
        self._open: str | None = None
        self._attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        for name, value in attrs:
            if name in ("src", "href", "action", "srcset", "poster", "data") and value:
                self.urls.append((tag, name, value))
        if tag == "meta" and found.get("http-equiv") == "Content-Security-Policy":
            self.csp = found.get("content")
        if tag in ("script", "style"):
            self._open, self._attrs = tag, found

    def handle_data(self, data: str) -> None:
        if self._open == "script":
            self.scripts.append((self._attrs, data))
        elif self._open == "style":
            self.styles.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._open = None


def parse(document: str) -> _Page:
    parser = _Page()
    parser.feed(document)
    return parser


def embedded(document: str) -> dict:
    (data,) = [text for attrs, text in parse(document).scripts if attrs.get("type")]
    return json.loads(data)


def _sha(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def assert_self_contained(document: str, *, may_connect_self: bool = False) -> None:
    page = parse(document)
    # Nothing is loaded: no external element at all, no URL in any link-like attribute.
    assert not {"link", "img", "iframe", "object", "embed", "base"} & set(page.tags)
    for tag, name, value in page.urls:
        assert not re.match(r"^\s*([a-z][a-z0-9+.-]*:|//)", value, re.I), (tag, name, value)
    code = [text for attrs, text in page.scripts if not attrs.get("type")]
    for text in [*code, *page.styles]:
        # The only absolute URL in the sources is the SVG namespace (an identifier).
        assert re.findall(r"https?://[^\s\"')]+", text) in ([], [SVG_NAMESPACE])
        assert "@import" not in text
        assert "url(" not in text
        assert "XMLHttpRequest" not in text
        assert "import(" not in text
        assert "WebSocket" not in text
        for call in re.findall(r"fetch\(\s*([^,)]+)", text):
            assert may_connect_self and call.strip().startswith('"v1/'), call
    # The policy allows exactly the inline code it was built with, and no connection
    # (or only to the page's own origin).
    assert page.csp is not None
    assert "default-src 'none'" in page.csp
    assert f"script-src {' '.join(_sha(t) for t in code)}".strip() in page.csp or not code
    assert f"style-src {_sha(page.styles[0])}" in page.csp
    assert ("connect-src 'self'" in page.csp) == may_connect_self
    assert "unsafe" not in page.csp


def test_a_trace_page_embeds_the_episode_unchanged_and_loads_nothing(scripted_result, question_ja):
    document = render_trace_html(scripted_result)
    assert_self_contained(document)
    data = embedded(document)
    assert SearchResult.model_validate(data["result"]) == scripted_result
    assert data["rollouts"] == []
    assert data["tiers"] == TokenTiers.of(HarnessConfig()).model_dump()
    # Japanese is written as is (not as \\u escapes), so the file reads in any editor.
    assert question_ja in document
    assert "義満は1358年に京都で生まれた。" in document


def test_markup_in_the_data_cannot_close_the_data_element(scripted_result):
    document = render_trace_html(scripted_result)
    assert document.count("</script>") == 2  # the data element and the renderer
    assert "<!--" not in document
    assert "<img" not in document
    data = embedded(document)
    markup = next(e for e in data["result"]["evidence"] if e["doc_id"] == "markup")
    assert markup["text"].startswith("</script><script>window.__xss=1</script><!--")
    assert markup["title"] == "<img src=x onerror=window.__xss=1>"


def test_the_renderer_never_writes_data_as_markup():
    static = resources.files("sift.integrations.traceview").joinpath("static")
    for name in ("trace.js", "ui.js"):
        source = static.joinpath(name).read_text(encoding="utf-8")
        assert "innerHTML" not in source and "outerHTML" not in source
        assert "insertAdjacentHTML" not in source and "document.write" not in source
        assert "eval(" not in source and "new Function" not in source
        assert "</script" not in source.lower()


def test_rollouts_are_kept_beside_their_fusion(planner_rollouts, question_ja):
    data = embedded(render_trace_html(planner_rollouts))
    assert [SearchResult.model_validate(r) for r in data["rollouts"]] == planner_rollouts
    fused = merge_rollouts(question_ja, planner_rollouts)
    assert SearchResult.model_validate(data["result"]) == fused
    one = embedded(render_trace_html([planner_rollouts[0]]))
    assert one["rollouts"] == [] and one["result"]["trace"] == data["rollouts"][0]["trace"]


def _timeless(result: SearchResult) -> dict:
    """A result without its wall times (the only part two identical runs differ in)."""
    data = result.model_dump()
    for turn in data["trace"]:
        turn["wall_ms"] = 0.0
    return data


async def test_asearch_rollouts_fuses_exactly_as_asearch(corpus, question_ja):
    config = HarnessConfig(max_turns=4)
    events: list[dict] = []
    run = await asearch_rollouts(
        question_ja, corpus, rollouts=3, config=config, top_k=5, on_event=events.append
    )
    reference = await asearch(question_ja, corpus, config=config, top_k=5, rollouts=3)
    assert _timeless(run.fused) == _timeless(reference)
    assert len(run.rollouts) == 3
    assert {e["rollout"] for e in events} == {0, 1, 2}
    single = await asearch_rollouts(question_ja, corpus, rollouts=1, config=config, top_k=5)
    assert single.rollouts == []
    alone = await asearch(question_ja, corpus, config=config, top_k=5)
    assert _timeless(single.fused) == _timeless(alone)


def test_gold_is_embedded_with_its_near_duplicates(scripted_result):
    data = embedded(render_trace_html(scripted_result, gold={"yoshimitsu": ["yoshimitsu-copy"]}))
    assert data["gold"] == [{"id": "yoshimitsu", "aliases": ["yoshimitsu", "yoshimitsu-copy"]}]
    plain = embedded(render_trace_html(scripted_result, gold=["a", "b", "a"]))
    assert plain["gold"] == [{"id": "a", "aliases": ["a"]}, {"id": "b", "aliases": ["b"]}]


@pytest.mark.parametrize(
    "link", ["https://example.org/index.html", "javascript:alert(1)//.html", "index.htm"]
)
def test_back_links_are_relative_pages_only(scripted_result, link):
    with pytest.raises(ValueError, match="back_link"):
        render_trace_html(scripted_result, back_link=link)


def test_bad_arguments_are_named(scripted_result):
    with pytest.raises(ValueError, match="non-empty list"):
        render_trace_html([])
    with pytest.raises(TypeError, match="SearchResult"):
        render_trace_html([scripted_result, {"question": "x"}])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="threshold <= rejection <= budget"):
        TokenTiers(threshold=30_000, rejection=20_000, budget=40_000)


def test_write_trace_html_creates_folders(tmp_path, scripted_result):
    path = write_trace_html(tmp_path / "a" / "b" / "trace.html", scripted_result, title="t")
    assert path.read_text(encoding="utf-8").count("<title>t</title>") == 1


def test_page_file_names_keep_any_script_and_stay_unique():
    assert page_file_name(7, "金閣寺/1") == "0007-金閣寺-1.html"
    assert page_file_name(12, "../../etc/passwd") == "0012-etc-passwd.html"
    assert page_file_name(3, "") == "0003.html"
    assert page_file_name(3, None) == "0003.html"
    assert page_file_name(1, "x" * 200) == "0001-" + "x" * 60 + ".html"


def test_index_pages_escape_text_and_encode_links():
    rows = [
        IndexRow(
            cells=[1, "<b>q</b>", 0.5, True], link="0001-金閣寺.html", stopped_because="final"
        ),
        IndexRow(cells=[2, "q2", None, False], stopped_because="error", error="<boom>"),
    ]
    document = render_index_html("金閣 & co", ["#", "question", "R@10", "all"], rows)
    assert_self_contained(document)
    assert "&lt;b&gt;q&lt;/b&gt;" in document and "<b>q</b>" not in document
    assert 'href="0001-%E9%87%91%E9%96%A3%E5%AF%BA.html"' in document
    assert "&lt;boom&gt;" in document
    assert "<td>yes</td>" in document and "<td>no</td>" in document
    assert '<td class="num">0.500</td>' in document
    with pytest.raises(ValueError, match="relative"):
        render_index_html("t", ["a"], [IndexRow(cells=["x"], link="https://x/y.html")])
    with pytest.raises(ValueError, match="cells"):
        render_index_html("t", ["a", "b"], [IndexRow(cells=["x"])])


def test_a_trace_folder_links_every_page_it_wrote(tmp_path, scripted_result, planner_rollouts):
    folder = TraceFolder(tmp_path / "pages", title="batch")
    first = folder.add("q-金閣寺", scripted_result)
    second = folder.add("q2", planner_rollouts)
    folder.add_failure("line 3", "expected an object with a string 'question'")
    index = folder.write_index()
    document = index.read_text(encoding="utf-8")
    links = re.findall(r'href="([^"]+)"', document)
    from urllib.parse import unquote

    assert [unquote(link) for link in links] == [first.name, second.name]
    assert all((index.parent / unquote(link)).is_file() for link in links)
    assert "expected an object with a string" in document
    assert embedded(second.read_text(encoding="utf-8"))["back_link"] == "index.html"
    assert len(embedded(second.read_text(encoding="utf-8"))["rollouts"]) == 3
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not a folder"):
        TraceFolder(tmp_path / "file", title="x")


def test_the_ui_page_may_call_only_its_own_origin():
    built = ui_page()
    assert_self_contained(built.html, may_connect_self=True)
    # No data: the API brings it, with the person's key.
    assert not [attrs for attrs, _ in parse(built.html).scripts if attrs.get("type")]
    policy = built.headers["Content-Security-Policy"]
    assert "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert built.headers["X-Frame-Options"] == "DENY"
    assert built.headers["Cache-Control"] == "no-store"
