"""The default token counter never undercounts, JSON-heavy text included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sift.integrations.embedders as embedders
from sift.nodes import EstimateTokenCounter
from sift.protocols import TokenCounter

TOKENIZER = Path(embedders.__file__).parent / "data" / "static-minilm" / "tokenizer.json"

SAMPLES = {
    "json": json.dumps(
        {
            "tool_calls": [
                {
                    "name": "search_corpus",
                    "arguments": {
                        "query": "Who wrote {the} letters?",
                        "ids": [f"doc_{i}_{i * 7}" for i in range(40)],
                        "scores": [0.125, 3.5e-4, -1, None, True],
                    },
                }
            ]
        }
    ),
    "table": "| id | year | value |\n|---|---|---|\n"
    + "".join(f"| r{i} | {1900 + i} | {i * 3.14159:.3f} |\n" for i in range(30)),
    "code": "def f(x):\n    return {k: v**2 for k, v in x.items() if v != 0}  # {}[]()\n" * 10,
    "prose": "The Danube flows through Vienna, Bratislava, Budapest and Belgrade before "
    "reaching the Black Sea in Romania. " * 10,
}


@pytest.fixture(scope="module")
def reference():
    tokenizers = pytest.importorskip(
        "tokenizers", reason="needs tokenizers, a sift dependency: pip install -e ."
    )
    if not TOKENIZER.exists():
        pytest.skip(
            f"the static-minilm tokenizer sift ships is absent ({TOKENIZER}): reinstall "
            "sift from a full checkout (pip install -e .)"
        )
    return tokenizers.Tokenizer.from_file(str(TOKENIZER))


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_estimate_never_undercounts_a_real_tokenizer(kind, reference):
    text = SAMPLES[kind]
    real = len(reference.encode(text, add_special_tokens=False).ids)
    assert EstimateTokenCounter().count(text) >= real


def test_json_is_charged_at_least_one_token_per_punctuation_mark():
    text = SAMPLES["json"]
    punctuation = sum(1 for c in text if not c.isalnum() and not c.isspace())
    assert EstimateTokenCounter().count(text) >= punctuation


def test_counter_is_a_token_counter():
    assert isinstance(EstimateTokenCounter(), TokenCounter)
    assert EstimateTokenCounter().count("") == 0
