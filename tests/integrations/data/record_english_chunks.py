"""Records the chunk spans of a sample of the English dev corpora, so a test can prove that
English chunking does not change when Japanese rules are added.

    python tests/integrations/data/record_english_chunks.py

The committed english_chunks.jsonl was recorded at commit 339cab4 (before the CJK token
costs and the Japanese sentence rules); rerun it only to record a deliberate change of
English chunking. Passages holding CJK characters (a few names in Chinese or Korean)
chunk differently since then, by design: their CJK characters cost more tokens now.
"""

from __future__ import annotations

import json
from pathlib import Path

from sift.integrations.chunking import chunk_spans

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / ".." / "shared" / "benchmarks"
SIZES = (16, 32, 64, 512)


def main() -> None:
    with open(HERE / "english_chunks.jsonl", "w", encoding="utf-8") as out:
        for name in ("hotpotqa", "musique", "2wikimultihopqa"):
            with open(DATA / name / "corpus.jsonl", encoding="utf-8") as handle:
                rows = [json.loads(line) for line in handle][::60]
            for row in rows:
                spans = {str(size): chunk_spans(row["text"], size) for size in SIZES}
                out.write(json.dumps({"dataset": name, "id": row["id"], "spans": spans}) + "\n")


if __name__ == "__main__":
    main()
