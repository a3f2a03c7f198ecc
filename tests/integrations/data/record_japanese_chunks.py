"""Records the chunk spans of the Japanese sample (tests/data/benchmarks/jsquad) and of
a few long Japanese and mixed texts, so a test can prove that Japanese chunking does not
change when the chunker's code does.

    python tests/integrations/data/record_japanese_chunks.py

The committed japanese_chunks.jsonl was recorded at commit d1fc01c (before the chunker
estimated the pieces of a batch of documents together); rerun it only to record a
deliberate change of Japanese chunking.
"""

from __future__ import annotations

import json
from pathlib import Path

from sift.integrations.chunking import chunk_spans

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "data" / "benchmarks" / "jsquad" / "corpus.jsonl"
SIZES = (16, 64, 512)


def texts() -> list[tuple[str, str]]:
    """(id, text) of every text recorded: the sample's passages, then long ones made of
    them (several paragraphs, English between them, a sentence past every limit)."""
    with open(SAMPLE, encoding="utf-8") as handle:
        rows = [(row["id"], row["text"]) for row in map(json.loads, handle)]
    passages = [text for _, text in rows]
    made = [
        ("paragraphs", "\n\n".join(passages[:12])),
        ("mixed", "\n\n".join(f"{p} Tokyo Tower, 333 m (1958). " for p in passages[12:20])),
        ("lines", "\n".join(passages[20:40])),
        ("one sentence", "".join(p.replace("。", "、") for p in passages[40:46])),
        ("digits", "東京タワーは1２3メートル。" * 80),
    ]
    return rows + made


def main() -> None:
    with open(HERE / "japanese_chunks.jsonl", "w", encoding="utf-8") as out:
        for key, text in texts():
            spans = {str(size): chunk_spans(text, size) for size in SIZES}
            out.write(json.dumps({"id": key, "spans": spans}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
