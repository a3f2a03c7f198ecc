"""Moved to `sift.fusion`; this name keeps working, with a DeprecationWarning, for one
release."""

from __future__ import annotations

import warnings

from sift.fusion import *  # noqa: F403
from sift.fusion import __all__ as __all__

warnings.warn(
    "sift.integrations.stores.fusion moved to sift.fusion; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
