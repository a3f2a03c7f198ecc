"""sift.text: what sift knows about text without a model.

- analysis: `Analyzer` (text into the terms a lexical index stores and a query looks up:
  NFKC, script runs, CJK bigrams, Snowball stems; `AnalyzerSettings`, `default_analyzer`),
  `script_runs`, `script_of`, `has_cjk`, `find_mention`, `overlap_terms`,
  `has_searchable_word`, `name_without_suffix`;
- tokens: `estimate_tokens` (a conservative count when no model server reports one,
  CJK-aware), `estimate_tokens_many`, `charged_as_cjk`;
- languages: `guess_language` (the `lang` every indexed document is tagged with).

Each name is imported on first use: the entity worker reads `has_cjk` from here without
loading pydantic or the stemmer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sift._lazy import lazy_names

__all__ = [
    "SAMPLE_CHARS",
    "WORD_WEIGHT_IN_CJK",
    "Analyzer",
    "AnalyzerSettings",
    "CjkMode",
    "Script",
    "ScriptRun",
    "charged_as_cjk",
    "default_analyzer",
    "estimate_tokens",
    "estimate_tokens_many",
    "find_mention",
    "guess_language",
    "has_cjk",
    "has_searchable_word",
    "name_without_suffix",
    "overlap_terms",
    "script_of",
    "script_runs",
]

_ORIGINS = {
    "sift.text._scripts": ("Script", "has_cjk", "name_without_suffix", "script_of"),
    "sift.text._analysis": (
        "WORD_WEIGHT_IN_CJK",
        "Analyzer",
        "AnalyzerSettings",
        "CjkMode",
        "ScriptRun",
        "default_analyzer",
        "find_mention",
        "has_searchable_word",
        "overlap_terms",
        "script_runs",
    ),
    "sift.text._tokens": ("charged_as_cjk", "estimate_tokens", "estimate_tokens_many"),
    "sift.text._languages": ("SAMPLE_CHARS", "guess_language"),
}

if TYPE_CHECKING:
    from sift.text._analysis import (
        WORD_WEIGHT_IN_CJK,
        Analyzer,
        AnalyzerSettings,
        CjkMode,
        ScriptRun,
        default_analyzer,
        find_mention,
        has_searchable_word,
        overlap_terms,
        script_runs,
    )
    from sift.text._languages import SAMPLE_CHARS, guess_language
    from sift.text._scripts import Script, has_cjk, name_without_suffix, script_of
    from sift.text._tokens import charged_as_cjk, estimate_tokens, estimate_tokens_many
else:
    __getattr__, __dir__ = lazy_names(__name__, _ORIGINS)
