"""Moved to `sift.text`; this name keeps working, with a DeprecationWarning, for one
release."""

from __future__ import annotations

import warnings

from sift.text import (
    charged_as_cjk,
    estimate_tokens,
    estimate_tokens_many,
)

__all__ = [
    "charged_as_cjk",
    "estimate_tokens",
    "estimate_tokens_many",
]

warnings.warn(
    "sift.tokens moved to sift.text; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
