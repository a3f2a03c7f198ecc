"""Fixtures every test folder may use, and the rule that nothing is skipped silently."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable, Iterator

import pytest


@pytest.fixture
def leaked_transports() -> Iterator[Callable[[], list[str]]]:
    """Call it at the end of a test: the network transports the test opened and dropped
    without closing them (asyncio reports each as a ResourceWarning when it is collected).

    Garbage from earlier tests is collected first, so only this test's leaks count."""
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)

        def leaked() -> list[str]:
            gc.collect()
            return [
                str(w.message)
                for w in caught
                if issubclass(w.category, ResourceWarning) and "unclosed" in str(w.message)
            ]

        yield leaked


# What pytest says when a skip was given no reason of its own.
_NO_REASON = ("unconditional skip", "condition:", "could not import")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """A skip must say why and what to set or install to run the test: one without a
    reason of its own fails instead."""
    report: pytest.TestReport = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ").strip()
        if reason in ("", "Skipped") or reason.lower().startswith(_NO_REASON):
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} was skipped without saying why or what to set or install "
                f"to run it ({reason!r}): give the skip a reason"
            )
    return report
