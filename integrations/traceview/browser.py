"""A headless Chromium driven by Selenium, for the viewer's browser tests and screenshots.

Debian's packages (`apt-get install chromium chromium-driver`): the browser and its driver
are given by path, so Selenium never tries to download either. `browser_problem()` says
why no browser can run here (tests skip with that reason, or fail when
`SIFT_REQUIRE_BROWSER=1`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["CHROMEDRIVER", "CHROMIUM", "LAUNCH_FLAGS", "browser_problem", "chromium", "console"]

CHROMIUM = os.environ.get("SIFT_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("SIFT_CHROMEDRIVER", "/usr/bin/chromedriver")

# Work as root in a container, with no network beyond loopback and no background traffic.
LAUNCH_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)


def browser_problem() -> str | None:
    """Why the browser cannot run here, or None when it can."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return f"{path} is missing: apt-get install {package}"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is missing: pip install selenium (in the dev extra)"
    return None


@contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A Selenium WebDriver for a fresh headless Chromium (a new empty profile), whose
    console messages `console(driver)` reads; quit and cleaned up on exit."""
    problem = browser_problem()
    if problem:
        raise RuntimeError(f"no browser: {problem}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="sift-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in LAUNCH_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console(driver: Any, *, levels: tuple[str, ...] = ("SEVERE", "WARNING")) -> list[str]:
    """The browser's console messages at `levels` since the last call (errors and
    warnings by default: a failed load, a script error, a blocked request)."""
    return [
        str(entry.get("message"))
        for entry in driver.get_log("browser")
        if entry.get("level") in levels
    ]
