from __future__ import annotations

import json

from sift.tokens import estimate_tokens


def test_prose_is_charged_at_least_a_token_per_word() -> None:
    text = "The quick brown fox jumps over the lazy dog near the riverbank."
    assert estimate_tokens(text) >= len(text.split())


def test_json_heavy_text_is_never_undercounted() -> None:
    # Every structural character of JSON is at least one BPE token in o200k-like vocabularies.
    payload = json.dumps([{"id": i, "tags": ["a", "b"], "ok": True} for i in range(50)])
    structural = sum(payload.count(c) for c in '{}[]:,"')
    assert estimate_tokens(payload) >= structural


def test_long_numbers_and_non_latin_scripts() -> None:
    assert estimate_tokens("1234567890") == 4
    assert estimate_tokens("東京都庁") == 4
    assert estimate_tokens("") == 0
