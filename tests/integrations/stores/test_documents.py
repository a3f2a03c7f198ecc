"""What makes a document "unchanged" must never drift: stores keep each document's digest,
and a new digest for the same document would make every re-ingest rewrite everything."""

from __future__ import annotations

from sift.integrations.stores._documents import content_hash
from sift.types import Document


def test_content_hash_is_the_digest_stores_already_hold() -> None:
    docs = [
        Document(id="a", text="plain"),
        Document(id="東京-1", title="Titre é", text="東京は日本の首都です。", metadata={}),
        Document(
            id="m",
            title="T",
            text="x",
            metadata={"b": 1, "a": ["s", 2, 3.5, True], "c": None, "é": "ü"},
        ),
    ]
    # Recorded with the code of commit 6d4bd05 (json.dumps per call), before the encoder
    # was built once.
    assert [content_hash(d) for d in docs] == [
        "edbd111d3ce0341e2e22218dd00d60c26a5d022435c46749d2423092942ac86d",
        "6b6d75a7589536b34335369925513bc34dccef7fb08ab711b576ac23a4aa823a",
        "a46934cebce20425a018e0f1a95d92dba1a33982a298dac1ebdf74544907bcac",
    ]
