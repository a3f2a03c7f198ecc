"""The pages in a real headless Chromium: they draw without a console error, show what a
person needs, and /ui runs a search end to end against a live `sift serve`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from sift.integrations.stores import open_store
from sift.integrations.traceview import render_trace_html, write_trace_html
from sift.integrations.traceview.browser import console

from .conftest import LOCATED_QUESTION

pytestmark = pytest.mark.slow

KEY = "ui-test-key-0123456789"

# Draws each character on a canvas with the page's font: missing glyphs all come out as
# the same box (or nothing), real ones differ from each other and from an unassigned one.
GLYPHS = """
const family = getComputedStyle(document.body).fontFamily;
const draw = (ch) => {
  const canvas = document.createElement("canvas");
  canvas.width = 48; canvas.height = 48;
  const g = canvas.getContext("2d");
  g.font = "40px " + family;
  g.fillText(ch, 2, 40);
  return canvas.toDataURL();
};
return arguments[0].map(draw);
"""


def _wait(driver: Any, condition: Any, timeout: float = 60.0) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)


def _run_and_wait(browser: Any) -> None:
    """Runs the /ui page's search and waits until its trace is drawn (or it failed)."""
    from selenium.webdriver.common.by import By

    browser.find_element(By.ID, "run").click()
    _wait(
        browser,
        lambda d: (
            d.find_element(By.ID, "sift-trace").get_attribute("data-state") == "done"
            or d.find_element(By.ID, "status").get_attribute("data-state") == "error"
        ),
    )
    status = browser.find_element(By.ID, "status").text
    assert status.startswith("Done: stopped because"), status


def _texts(driver: Any, selector: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, selector)]


def assert_japanese_renders(driver: Any) -> None:
    kanji, blank = ["金", "閣", "寺", "義"], "\u0378"  # U+0378 is unassigned
    images = driver.execute_script(GLYPHS, [*kanji, blank])
    assert len(set(images[:4])) == 4, "Japanese characters render as identical boxes"
    assert images[4] not in images[:4]


def test_a_trace_page_draws_every_part_of_the_episode(
    browser, tmp_path, scripted_result, question_ja
):
    from selenium.webdriver.common.by import By

    gold = {"yoshimitsu": [], "gone": [], "kyoto-original": ["kyoto"]}
    path = write_trace_html(tmp_path / "trace.html", scripted_result, gold=gold)
    browser.get(path.as_uri())
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-role=evidence]"))
    assert console(browser) == []
    assert browser.execute_script("return window.__xss === undefined")

    assert browser.find_element(By.CSS_SELECTOR, "[data-role=question]").text == question_ja
    assert_japanese_renders(browser)
    stop = browser.find_element(By.CSS_SELECTOR, "[data-role=summary] .stop")
    assert stop.text == "stopped because: final" and stop.get_attribute("data-stop") == "final"

    # The curve against the three tier lines, one point per turn.
    chart = browser.find_element(By.CSS_SELECTOR, "[data-role=token-chart] svg")
    tiers = [e.get_attribute("data-tier") for e in chart.find_elements(By.CSS_SELECTOR, "line")]
    assert [t for t in tiers if t] == ["threshold", "rejection", "budget"]
    assert len(chart.find_elements(By.TAG_NAME, "circle")) == len(scripted_result.trace)

    # Each turn with its wall time; each call with its arguments and errors.
    turns = browser.find_elements(By.CSS_SELECTOR, ".turn")
    assert [t.get_attribute("data-turn") for t in turns] == ["1", "2", "3"]
    assert all(t.text for t in browser.find_elements(By.CSS_SELECTOR, "[data-role=wall]"))
    errors = _texts(browser, "[data-role=call-error]")
    assert any("invalid grep pattern" in e for e in errors)
    assert any("no document with id 'nowhere'" in e for e in errors)
    calls = [c.get_attribute("data-tool") for c in browser.find_elements(By.CSS_SELECTOR, ".call")]
    assert calls == [
        "search_corpus",
        "grep_corpus",
        "read_document",
        "read_document",
        "prune_chunks",
        "prune_chunks",
    ]
    assert "prune_chunks (by the harness)" in browser.find_element(By.ID, "c-0-2-3").text
    assert "kyoto_0" in browser.find_element(By.ID, "c-0-2-2").text
    # Arguments read as values: `name: "value"`, the Japanese query as typed.
    shown = {c: _args(browser, c) for c in ("c-0-1-0", "c-0-1-1", "c-0-2-1", "c-0-2-2")}
    assert shown == {
        "c-0-1-0": '(query: "金閣寺")',
        "c-0-1-1": '(pattern: "(unclosed")',
        "c-0-2-1": '(doc_id: "yoshimitsu")',
        "c-0-2-2": '(chunk_ids: ["kyoto_0"])',
    }

    # Evidence with justifications; each provenance link lands on the call that found it.
    items = browser.find_elements(By.CSS_SELECTOR, ".evidence-item")
    assert [i.get_attribute("data-chunk") for i in items] == [
        e.chunk_id for e in scripted_result.evidence
    ]
    assert "義満は1358年に京都で生まれた。" in items[0].text
    assert "<b>not bold</b> & not markup" in items[2].text  # shown as text
    links = items[0].find_elements(By.CSS_SELECTOR, "a.found-by")
    assert [a.get_attribute("data-call") for a in links] == ["c-0-1-0", "c-0-2-1"]
    assert links[0].text == 'search_corpus(query: "金閣寺") turn 1'
    links[1].click()
    assert browser.execute_script("return location.hash") == "#c-0-2-1"
    target = browser.find_element(By.CSS_SELECTOR, ".call:target")
    assert target.get_attribute("id") == "c-0-2-1"
    assert "yoshimitsu" in target.text

    marked = {
        g.get_attribute("data-gold"): g.text
        for g in browser.find_elements(By.CSS_SELECTOR, "[data-gold]")
    }
    assert "in the evidence at rank 1" in marked["yoshimitsu"]
    assert "never surfaced" in marked["gone"]
    twin = marked["kyoto-original"]  # its near-duplicate was surfaced, then pruned
    assert "near-duplicate kyoto" in twin and "surfaced but not in the final evidence" in twin
    assert "turn 1 search_corpus" in twin and "pruned in turn 2" in twin
    assert console(browser) == []


def _args(browser: Any, call_id: str) -> str:
    from selenium.webdriver.common.by import By

    call = browser.find_element(By.ID, call_id)
    return str(call.find_element(By.CSS_SELECTOR, "[data-role=args]").text)


def test_arguments_read_as_values_and_markup_in_them_stays_text(browser, tmp_path, corpus):
    """A model's arguments, whatever they hold: a Japanese query with quotes and markup,
    a pattern with backslashes, are shown as typed, `name: "value"`, never as JSON
    escapes and never as HTML."""
    from selenium.webdriver.common.by import By

    from sift.graphs import HarnessConfig, ScriptedPolicy, search

    query = '足利義満 "金閣寺" <img src=x onerror=window.__xss=1>'
    pattern = r"<b>義満</b>|\d{4}年\s"
    script = [
        [
            {"name": "search_corpus", "arguments": {"query": query}},
            {"name": "grep_corpus", "arguments": {"pattern": pattern}},
        ],
        {"final": [{"id": "yoshimitsu_0", "justification": "生年"}]},
    ]
    config = HarnessConfig(keep_plain_search=False)
    result = search("義満の生年は？", corpus, policy=ScriptedPolicy(script), config=config)
    browser.get(write_trace_html(tmp_path / "args.html", result).as_uri())
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-role=evidence]"))
    assert console(browser) == []
    assert _args(browser, "c-0-1-0") == f'(query: "{query}")'
    assert _args(browser, "c-0-1-1") == f'(pattern: "{pattern}")'  # one backslash each
    args = browser.find_elements(By.CSS_SELECTOR, "[data-role=args]")
    assert not any(a.find_elements(By.CSS_SELECTOR, "img, b") for a in args)
    assert browser.execute_script("return window.__xss === undefined")
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".arg-name")]
    assert names[:2] == ["query:", "pattern:"]


def _evidence_items(browser, page: Path) -> list[Any]:
    """The page's evidence items, once drawn, with nothing on the console."""
    from selenium.webdriver.common.by import By

    browser.get(page.as_uri())
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".evidence-item"))
    assert console(browser) == []
    return browser.find_elements(By.CSS_SELECTOR, ".evidence-item")


def test_a_chunk_the_entity_graph_lifted_names_its_entity(browser, tmp_path, scripted_result):
    from selenium.webdriver.common.by import By

    from sift.types import FoundBy

    first = scripted_result.evidence[0]
    graph = FoundBy(tool="entity_graph", argument="足利義満", turn=3)
    lifted = first.model_copy(update={"found_by": [*first.found_by, graph]})
    result = scripted_result.model_copy(
        update={"evidence": [lifted, *scripted_result.evidence[1:]]}
    )
    items = _evidence_items(browser, write_trace_html(tmp_path / "graph.html", result))
    marks = items[0].find_elements(By.CSS_SELECTOR, ".found-graph")
    assert [m.get_attribute("data-entity") for m in marks] == ["足利義満"]
    assert 'entity graph via "足利義満"' in marks[0].text
    # It is not a call: the links still land on the calls that found the chunk.
    assert len(items[0].find_elements(By.CSS_SELECTOR, "a.found-by")) == len(first.found_by)
    assert not items[1].find_elements(By.CSS_SELECTOR, ".found-graph")


def test_single_shots_walk_is_a_call_the_graph_mark_links_to(browser, tmp_path) -> None:
    from selenium.webdriver.common.by import By

    from sift.graphs import single_shot
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.types import Document

    pages = [
        Document(id="tower", title="東京スカイツリー", text="東京スカイツリーの施工は大林組。"),
        Document(id="obayashi", title="大林組", text="大林組、大阪市中央区。"),
    ]
    with SqliteCorpus(tmp_path / "s", embedder="hash", entity_graph=True) as store:
        store.upsert(pages)
        result = single_shot("東京スカイツリーを建てた会社は？", store, top_k=5, mode="bm25")
    assert [e.chunk_id for e in result.evidence] == ["tower_0", "obayashi_0"]
    items = _evidence_items(browser, write_trace_html(tmp_path / "shot.html", result))
    marks = items[1].find_elements(By.CSS_SELECTOR, "a.found-graph")
    assert [m.get_attribute("data-entity") for m in marks] == ["大林組"]
    marks[0].click()
    target = browser.find_element(By.CSS_SELECTOR, ".call:target")
    assert target.get_attribute("data-tool") == "entity_graph"
    assert "tower_0" in target.text  # its seeds


def test_rollouts_stand_side_by_side_with_the_fusion(browser, tmp_path, planner_rollouts):
    from selenium.webdriver.common.by import By

    path = tmp_path / "rollouts.html"
    path.write_text(render_trace_html(planner_rollouts), encoding="utf-8")
    browser.get(path.as_uri())
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-role=fused]"))
    assert console(browser) == []
    lanes = browser.find_elements(By.CSS_SELECTOR, "[data-role=lanes] > .lane")
    assert [lane.get_attribute("data-lane") for lane in lanes] == ["0", "1", "2", None]
    chart = browser.find_element(By.CSS_SELECTOR, "[data-role=token-chart] svg")
    assert len(chart.find_elements(By.TAG_NAME, "polyline")) == 3
    # The columns are side by side: same top, increasing left.
    boxes = [lane.rect for lane in lanes]
    assert len({round(b["y"]) for b in boxes}) == 1
    assert [b["x"] for b in boxes] == sorted(b["x"] for b in boxes)
    fused = browser.find_element(By.CSS_SELECTOR, "[data-role=fused]").text
    assert "Fused result" in fused


def test_failed_and_single_shot_episodes_draw_too(browser, tmp_path, corpus, question_ja):
    from selenium.webdriver.common.by import By

    from sift.graphs import single_shot
    from sift.types import SearchResult

    failed = SearchResult(
        question=question_ja,
        stopped_because="error",
        error="ModelServerError: Ollama is not running at 127.0.0.1:11434",
    )
    path = write_trace_html(tmp_path / "failed.html", failed)
    browser.get(path.as_uri())
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-role=evidence]"))
    assert console(browser) == []
    stop = browser.find_element(By.CSS_SELECTOR, "[data-role=summary] .stop")
    assert stop.text == "stopped because: error" and "error" in stop.get_attribute("class")
    error = browser.find_element(By.CSS_SELECTOR, "[data-role=error]").text
    assert error == failed.error
    assert "No turn ran" in browser.find_element(By.CSS_SELECTOR, "[data-role=token-chart]").text

    baseline = single_shot(question_ja, corpus, top_k=3)
    path = write_trace_html(tmp_path / "single.html", baseline)
    browser.get(path.as_uri())
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-role=evidence]"))
    assert console(browser) == []
    assert [
        t.get_attribute("data-turn") for t in browser.find_elements(By.CSS_SELECTOR, ".turn")
    ] == ["0"]
    links = browser.find_elements(By.CSS_SELECTOR, "a.found-by")
    assert [a.get_attribute("data-call") for a in links] == ["c-0-0-0"] * 3


# Where each located passage sits, as its evidence item shows it beside its title (issue 44):
# a PDF's page, a Japanese section under an English heading, nothing for a JSONL line.
PLACES = {"docs/report.pdf_1": "p. 2", "docs/guide.md_1": "§ Results > 売上高", "memo_0": None}


def assert_places_drawn(browser: Any) -> None:
    from selenium.webdriver.common.by import By

    drawn = {}
    for item in browser.find_elements(By.CSS_SELECTOR, ".evidence-item"):
        head = item.find_element(By.CSS_SELECTOR, ".title").find_element(By.XPATH, "..")
        place = head.find_elements(By.CSS_SELECTOR, "[data-role=place]")
        drawn[item.get_attribute("data-chunk")] = (head.text, place[0].text if place else None)
    assert PLACES.keys() <= drawn.keys(), drawn
    for chunk_id, expected in PLACES.items():
        head, place = drawn[chunk_id]
        assert place == expected, (chunk_id, head)
        if expected is None:
            assert "§" not in head and "p. " not in head, head
        else:  # beside the title, before the chunk id
            assert head.index(expected) < head.index(chunk_id), head
    assert console(browser) == []


def test_evidence_shows_its_page_and_section_beside_its_title(browser, tmp_path, located_root):
    from sift.graphs import single_shot

    corpus = open_store(located_root / "reports", create=False)
    try:
        result = single_shot(LOCATED_QUESTION, corpus, top_k=10, mode="bm25")
    finally:
        corpus.close()
    assert result.evidence
    _evidence_items(browser, write_trace_html(tmp_path / "located.html", result))
    assert_places_drawn(browser)


# --------------------------------------------------------------------------- /ui


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _serving(store_root: Path, home: Path, keys: str) -> Iterator[str]:
    """`sift serve` over `store_root` as a real process on a loopback port, with `keys`
    (SIFT_SERVER_API_KEYS); yields its URL once /readyz says it is ready."""
    port = _free_port()
    env = {**os.environ, "SIFT_HOME": str(home), "SIFT_SERVER_API_KEYS": keys}
    command = [sys.executable, "-m", "sift", "serve", "--port", str(port)]
    command += ["--store", str(store_root), "--embedder", "hash", "--log-level", "warning"]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        # /healthz answers before the stores are warm; a search sent then waits or is
        # refused, so nothing is asked of the service before /readyz says it is ready.
        # The limit only stops a service that never gets ready from hanging the suite.
        deadline = time.monotonic() + 600
        while True:
            if process.poll() is not None:
                pytest.fail(f"sift serve exited: {process.stdout.read() if process.stdout else ''}")
            try:
                if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("sift serve was not ready (/readyz) within 600 s")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def served(store_root: Path, tmp_path: Path) -> Iterator[str]:
    """`sift serve` on the Japanese and English store; the key may use `wiki` only."""
    with _serving(store_root, tmp_path, f"{KEY}=wiki") as url:
        yield url


def test_ui_runs_a_search_end_to_end_with_the_api_keys(browser, served, question_ja):
    from selenium.webdriver.common.by import By

    page = httpx.get(f"{served}/ui")
    assert (
        page.status_code == 200
        and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    )
    openapi = httpx.get(f"{served}/openapi.json").json()
    assert "/ui" not in openapi["paths"]

    browser.get(f"{served}/ui")
    _wait(browser, lambda d: d.find_element(By.ID, "status").text)
    assert console(browser) == []  # no request goes out before there is a key
    key = browser.find_element(By.ID, "api-key")

    # A wrong key is refused by the API, and the page says so.
    key.send_keys("not-the-key-000000")
    browser.find_element(By.ID, "question").click()  # "change" fires on blur
    _wait(browser, lambda d: d.find_element(By.ID, "status").get_attribute("data-state") == "error")
    assert "the API key is not valid" in browser.find_element(By.ID, "status").text
    # The browser logs the refused request (expected here); reading the log empties it.
    _wait(browser, lambda d: any("403" in m for m in console(d)))

    key.clear()
    key.send_keys(KEY)
    browser.find_element(By.ID, "question").click()
    _wait(browser, lambda d: d.find_element(By.ID, "collection").get_attribute("data-loaded"))
    options = _texts(browser, "#collection option")
    assert options == ["wiki"]  # the key's collections only ("private" exists too)
    assert browser.execute_script("return sessionStorage.getItem('sift.apiKey')") == KEY

    browser.find_element(By.ID, "question").send_keys(question_ja)
    rollouts = browser.find_element(By.ID, "rollouts")
    rollouts.clear()
    rollouts.send_keys("2")
    _run_and_wait(browser)
    assert console(browser) == []

    # The progress streamed (one line per event) and the trace is drawn by the renderer.
    log = browser.find_element(By.ID, "log")
    assert int(log.get_attribute("data-lines")) > 4
    assert "[rollout 1]" in log.get_attribute("textContent")
    # Each call with its arguments as values: `search_corpus(query: "...")`, the
    # Japanese question's words as typed (no \u escapes).
    lines = [e.get_attribute("textContent") for e in log.find_elements(By.CSS_SELECTOR, "div")]
    calls = [line for line in lines if "search_corpus(" in line]  # the log is folded now
    assert calls and all('search_corpus(query: "' in line for line in calls), calls
    assert any("金閣寺" in line for line in calls) and not any("\\u" in c for c in calls)
    assert browser.find_element(By.CSS_SELECTOR, "[data-role=question]").text == question_ja
    lanes = browser.find_elements(By.CSS_SELECTOR, "[data-role=lanes] > .lane")
    assert len(lanes) == 3  # two rollouts and the fusion
    # Each rollout's own stop reason comes from its sift.finished event.
    badges = [lane.find_element(By.CSS_SELECTOR, ".stop").text for lane in lanes]
    assert badges == ["final", "final", "final"]
    assert browser.find_elements(By.CSS_SELECTOR, ".evidence-item")
    assert_japanese_renders(browser)

    # The page may talk to its own origin only: another origin is blocked by its policy.
    blocked = browser.execute_async_script(
        "const done = arguments[0];"
        "fetch('http://127.0.0.2:9/').then(() => done('fetched'), (e) => done('blocked'));"
    )
    assert blocked == "blocked"
    assert any("Content Security Policy" in m for m in console(browser))


def test_ui_shows_each_passages_page_and_section(browser, located_root, tmp_path):
    from selenium.webdriver.common.by import By

    with _serving(located_root, tmp_path, f"{KEY}=reports") as url:
        browser.get(f"{url}/ui")
        _wait(browser, lambda d: d.find_element(By.ID, "status").text)
        browser.find_element(By.ID, "api-key").send_keys(KEY)
        browser.find_element(By.ID, "question").click()  # "change" fires on blur
        _wait(browser, lambda d: d.find_element(By.ID, "collection").get_attribute("data-loaded"))
        assert _texts(browser, "#collection option") == ["reports"]
        browser.find_element(By.ID, "question").send_keys(LOCATED_QUESTION)
        _run_and_wait(browser)
        assert_places_drawn(browser)
