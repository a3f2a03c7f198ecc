"""Finding a store back-end for a location, through the `sift.stores` entry-point group.

The package root names no adapter: a distribution registers a factory per location
scheme (`file` for plain paths, `weaviate`, `weaviates`, ...) and `sift.open_store` loads
the one a location asks for, on call. A factory takes the location text and the options.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from sift.errors import CorpusError
from sift.paths import default_store_location, location_scheme
from sift.protocols import Corpus

__all__ = ["STORE_GROUP", "open_location", "store_schemes"]

STORE_GROUP = "sift.stores"


def _factories() -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {entry.name: entry for entry in entry_points(group=STORE_GROUP)}


def store_schemes() -> list[str]:
    """The location schemes some installed distribution registers a store for."""
    return sorted(_factories())


def open_location(location: str | os.PathLike[str] | None, **options: Any) -> Corpus:
    text = os.fspath(location) if location is not None else ""
    if not text:
        text = default_store_location()
    scheme = location_scheme(text)
    factories = _factories()
    entry = factories.get(scheme)
    if entry is None:
        if not factories:
            raise CorpusError(
                f"no store back-end is registered (entry-point group {STORE_GROUP!r}); "
                "install the sift-harness distribution (pip install sift-harness, or "
                "pip install -e . in a checkout)"
            )
        raise CorpusError(
            f"no store for {scheme}:// locations ({text!r}); registered schemes: "
            f"{', '.join(sorted(factories))} (a plain path opens the embedded store)"
        )
    factory: Callable[..., Corpus] = entry.load()
    return factory(text, **options)
