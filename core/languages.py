"""Moved to `sift.text`; this name keeps working, with a DeprecationWarning, for one
release."""

from __future__ import annotations

import warnings

from sift.text import (
    SAMPLE_CHARS,
    guess_language,
)

__all__ = [
    "SAMPLE_CHARS",
    "guess_language",
]

warnings.warn(
    "sift.languages moved to sift.text; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
