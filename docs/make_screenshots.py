"""Takes the trace viewer's screenshots in docs/img/ with headless Chromium.

    python docs/make_screenshots.py                  # all four
    python docs/make_screenshots.py --only ui        # one of: trace, rollouts, ui, eval

Needs Debian's chromium and chromium-driver (`.ci/run` installs them) and, for `rollouts`
(JSQuAD, Japanese) and `eval` (MuSiQue), the shared benchmarks at ../shared/benchmarks.
Everything runs offline on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from sift.graphs import search
from sift.integrations.demo import DEFAULT_QUESTION, demo_documents
from sift.integrations.stores import open_store
from sift.integrations.traceview import asearch_rollouts, write_trace_html
from sift.integrations.traceview.browser import chromium, console
from sift.types import Document

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"
KEY = "screenshot-key-0001"

BENCHMARKS = ROOT.parent / "shared" / "benchmarks"
# JSQuAD (JGLUE, CC BY-SA 4.0): Japanese Wikipedia paragraphs; its first dev question.
JSQUAD_QUESTION = "日本で梅雨がないのは北海道とどこか。"


def _shoot(driver: Any, url: str, out: Path, height: int, ready: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.set_window_size(1280, height)
    driver.get(url)
    WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ready))
    _save(driver, out)


def _save(driver: Any, out: Path) -> None:
    problems = console(driver)
    if problems:
        raise SystemExit(f"{out.name}: the page logged errors: {problems}")
    driver.save_screenshot(str(out))
    print(out.relative_to(ROOT))


def trace(driver: Any, work: Path) -> None:
    corpus = open_store(work / "collections" / "demo")
    try:
        result = search(DEFAULT_QUESTION, corpus, top_k=10)
    finally:
        corpus.close()
    page = write_trace_html(work / "trace.html", result)
    _shoot(driver, page.as_uri(), OUT / "trace-page.png", 1500, "[data-role=evidence]")


def rollouts(driver: Any, work: Path) -> None:
    from sift.integrations.eval import load_dataset

    dataset = load_dataset(BENCHMARKS / "jsquad")
    corpus = open_store(work / "jsquad")
    try:
        corpus.upsert(Document(id=p.id, title=p.title, text=p.text) for p in dataset.passages)
        run = asyncio.run(asearch_rollouts(JSQUAD_QUESTION, corpus, rollouts=3, top_k=10))
    finally:
        corpus.close()
    page = write_trace_html(work / "rollouts.html", run.rollouts, fused=run.fused)
    _shoot(driver, page.as_uri(), OUT / "trace-rollouts.png", 1500, "[data-role=fused]")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ui(driver: Any, work: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    port = _free_port()
    env = {**os.environ, "SIFT_HOME": str(work), "SIFT_SERVER_API_KEYS": KEY}
    command = [sys.executable, "-m", "sift", "serve", "--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen([*command, "--store", str(work / "collections")], env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        driver.set_window_size(1280, 1250)
        driver.get(f"{url}/ui")
        driver.find_element(By.ID, "api-key").send_keys(KEY)
        driver.find_element(By.ID, "question").click()
        WebDriverWait(driver, 30).until(
            lambda d: d.find_element(By.ID, "collection").get_attribute("data-loaded")
        )
        driver.find_element(By.ID, "question").send_keys(DEFAULT_QUESTION)
        driver.find_element(By.ID, "run").click()
        WebDriverWait(driver, 60).until(
            lambda d: d.find_element(By.ID, "sift-trace").get_attribute("data-state") == "done"
        )
        driver.find_element(By.CSS_SELECTOR, "#progress summary").click()  # show the stream
        driver.execute_script("window.scrollTo(0, 0)")
        _save(driver, OUT / "ui.png")
    finally:
        server.terminate()
        server.wait(timeout=10)


def evaluation(driver: Any, work: Path) -> None:
    from sift.integrations.eval import EvalConfig, run_eval

    dataset = BENCHMARKS / "musique"
    config = EvalConfig(
        dataset=dataset, modes=["bm25", "hybrid", "agentic"], limit=20, out=work / "eval"
    )
    run = run_eval(config, progress=False)
    index = run.files["traces"]
    _shoot(driver, index.as_uri(), OUT / "eval-missed.png", 660, "table.index")


SHOTS = {"trace": trace, "rollouts": rollouts, "ui": ui, "eval": evaluation}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(SHOTS), action="append")
    chosen = parser.parse_args().only or list(SHOTS)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sift-shots-") as folder:
        work = Path(folder)
        demo = open_store(work / "collections" / "demo")
        try:
            demo.upsert(demo_documents())
        finally:
            demo.close()
        with chromium(1280, 1000) as driver:
            for name in chosen:
                SHOTS[name](driver, work)


if __name__ == "__main__":
    main()
