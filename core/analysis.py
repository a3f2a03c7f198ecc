"""Moved to `sift.text`; this name keeps working, with a DeprecationWarning, for one
release."""

from __future__ import annotations

import warnings

from sift.text import (
    WORD_WEIGHT_IN_CJK,
    Analyzer,
    AnalyzerSettings,
    CjkMode,
    Script,
    ScriptRun,
    default_analyzer,
    find_mention,
    has_cjk,
    has_searchable_word,
    name_without_suffix,
    overlap_terms,
    script_of,
    script_runs,
)

__all__ = [
    "WORD_WEIGHT_IN_CJK",
    "Analyzer",
    "AnalyzerSettings",
    "CjkMode",
    "Script",
    "ScriptRun",
    "default_analyzer",
    "find_mention",
    "has_cjk",
    "has_searchable_word",
    "name_without_suffix",
    "overlap_terms",
    "script_of",
    "script_runs",
]

warnings.warn(
    "sift.analysis moved to sift.text; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
