"""Fixtures every test folder may use."""

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
