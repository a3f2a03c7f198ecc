"""Records the static embedder's vectors for a sample of texts, so a test can prove that
a faster embedder returns exactly the same vectors (bit for bit).

    python tests/integrations/data/record_static_vectors.py

The committed static_vectors.jsonl was recorded at commit 6d4bd05, with the embedder
that tokenised every text whole with the Rust tokenizer; rerun it only to record a
deliberate change of the model or of its pooling. Each line holds a text (or a unit and
how often it repeats) and the SHA-256 of its float32 vector's bytes (and its first
values, to read a difference).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sift.integrations.embedders import get_embedder

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / ".." / "shared" / "benchmarks"

# Texts where a tokenizer shortcut could go wrong: every kind of white space (the ones
# Python splits on but BERT deletes), control and zero-width characters, the model's
# special tokens written in text, words past WordPiece's 100 characters, accents and
# combining marks, CJK beside Latin, and texts past the embedder's caps.
EDGE_CASES = [
    "",
    " ",
    "How tall is the Eiffel Tower?",
    "tab\tseparated\twords and\r\nwindows lines",
    "vertical\x0btab and form\x0cfeed",
    "file\x1cgroup\x1drecord\x1eunit\x1fseparators",
    "next\x85line and line\u2028separator and paragraph\u2029separator",
    "no\u00a0break, ogham\u1680space, en\u2002quad, thin\u2009space, narrow\u202fspace",
    "ideographic\u3000space and medium\u205fmath space",
    "zero\u200bwidth joiner\u200d and bom\ufeff inside",
    "null\x00char and replacement\ufffdchar and bell\x07",
    "[PAD] [UNK] [CLS] [SEP] [MASK] a[PAD]b x[UNK]y",
    "[PA\x0bD] split special token",
    "a" * 99 + " " + "b" * 100 + " " + "c" * 101,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "Ünïcødé café — naïve résumé, Ångström, Øresund",
    "e\u0301 combining acute after a letter, and \u0301 after a space",
    "Σίσυφος ΟΔΟΣ ὁδός",
    "東京は日本の首都です。大阪府は西にある。",
    "Tokyo（東京）is the capital; 東京都庁 is in Shinjuku (新宿区).",
    "한국어 문장입니다. Русский текст. العربية",
    "emoji 🚀🔥 and flags 🇯🇵 and 𠮷野家",
    "numbers 3.14159 1,000,000 1e-9 0x1F 2024-05-01",
    "punctuation!!! ??? ... --- ((nested)) [brackets] {braces} <angle> @#$%^&*",
    "don't won't it's O'Brien's rock'n'roll",
    "URL https://example.com/path?q=1&r=2#frag and email someone@example.org",
    "\n\n\n   leading and trailing space   \n\n",
]


# Long texts are recorded as a unit and a count: the file stays small.
REPEATS = [("word ", 9000), ("x", 70_000), ("mixed 東京 words ", 3000)]


def texts() -> list[dict[str, object]]:
    out: list[dict[str, object]] = [{"text": text} for text in EDGE_CASES]
    out += [{"repeat": unit, "times": times} for unit, times in REPEATS]
    for name in ("hotpotqa", "musique", "2wikimultihopqa", "jsquad"):
        with open(DATA / name / "corpus.jsonl", encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle]
        for row in rows[:: max(1, len(rows) // 40)][:40]:
            out.append({"text": f"{row.get('title', '')}\n{row['text']}"})
    return out


def text_of(record: dict[str, object]) -> str:
    if "repeat" in record:
        return str(record["repeat"]) * int(record["times"])  # type: ignore[call-overload]
    return str(record["text"])


def main() -> None:
    sample = texts()
    vectors = get_embedder("static").embed([text_of(record) for record in sample])
    with open(HERE / "static_vectors.jsonl", "w", encoding="utf-8") as out:
        for record, vector in zip(sample, vectors, strict=True):
            record["sha256"] = hashlib.sha256(vector.tobytes()).hexdigest()
            record["head"] = [float(v) for v in vector[:4]]
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
