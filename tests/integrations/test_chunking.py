"""Chunking: sizes, boundaries, ids and offsets."""

from __future__ import annotations

import itertools

import pytest

from sift.integrations.chunking import chunk_document
from sift.tokens import estimate_tokens
from sift.types import Document


def check_offsets(doc: Document, max_tokens: int) -> None:
    chunks = chunk_document(doc, max_tokens=max_tokens)
    for i, chunk in enumerate(chunks):
        assert chunk.chunk_id == f"{doc.id}_{i}" and chunk.index == i
        assert chunk.text == doc.text[chunk.start : chunk.end]
        assert chunk.text == chunk.text.strip() and chunk.text
        assert estimate_tokens(chunk.text) <= max_tokens
        assert chunk.title == doc.title and chunk.metadata == doc.metadata
    # Chunks cover the text in order, leaving out only whitespace.
    for left, right in itertools.pairwise(chunks):
        assert left.end <= right.start
        assert doc.text[left.end : right.start].strip() == ""
    if chunks:
        assert doc.text[: chunks[0].start].strip() == ""
        assert doc.text[chunks[-1].end :].strip() == ""


def test_a_short_passage_is_one_trimmed_chunk() -> None:
    doc = Document(
        id="a", title="T", text="  \n Hello world. Second sentence.\n\n ", metadata={"k": 1}
    )
    (chunk,) = chunk_document(doc)
    assert chunk.text == "Hello world. Second sentence."
    assert (chunk.start, chunk.end) == (4, 33)
    assert chunk.chunk_id == "a_0" and chunk.metadata == {"k": 1}


def test_empty_text_gives_no_chunks() -> None:
    assert chunk_document(Document(id="e", text=" \n\n ")) == []


def test_paragraphs_are_kept_whole_and_packed() -> None:
    paragraphs = [f"Paragraph {p}. " + "Some words here. " * 20 for p in range(10)]
    doc = Document(id="p", text="\n\n".join(paragraphs))
    per = estimate_tokens(paragraphs[0].strip())
    chunks = chunk_document(doc, max_tokens=per * 3 + 4)
    assert len(chunks) == 4  # 3 + 3 + 3 + 1 paragraphs
    for chunk in chunks:
        assert chunk.text.startswith("Paragraph ")
        assert chunk.text.endswith("Some words here.")
    check_offsets(doc, per * 3 + 4)


def test_a_long_paragraph_is_cut_at_sentence_ends() -> None:
    sentences = [f'Sentence number {i} says something (quoted "here").' for i in range(60)]
    doc = Document(id="s", text=" ".join(sentences))
    chunks = chunk_document(doc, max_tokens=60)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.text.startswith("Sentence number")
        assert chunk.text.endswith('"here").')
    check_offsets(doc, 60)


def test_only_an_over_long_sentence_is_cut_between_words() -> None:
    words = " ".join(f"word{i}" for i in range(400))
    doc = Document(id="w", text=f"Short intro.\n\n{words}\n\nShort outro.")
    chunks = chunk_document(doc, max_tokens=50)
    assert chunks[0].text.startswith("Short intro.")
    assert all(" " not in c.text[:1] for c in chunks)
    joined = " ".join(c.text for c in chunks)
    assert joined.split() == doc.text.split()
    check_offsets(doc, 50)


def test_an_enormous_word_is_cut_between_characters() -> None:
    blob = "x" * 5000
    doc = Document(id="b", text=f"Before. {blob} after.")
    check_offsets(doc, 64)
    assert "".join(c.text for c in chunk_document(doc, max_tokens=64)).count("x") == 5000


@pytest.mark.parametrize(
    "text",
    [
        "漢字のテキスト。" * 300,
        '{"a": [1, 2, 3]}, ' * 400,
        "Line one\nline two\r\n\r\nline three\t\tend. " * 100,
        "a\n\n\n\nb " * 500,
    ],
)
def test_offsets_hold_on_awkward_text(text: str) -> None:
    check_offsets(Document(id="x_y", title="t", text=text), 40)


def test_default_size_is_about_512_tokens() -> None:
    text = "\n\n".join(
        f"This is paragraph {i} with a few ordinary words in it." for i in range(400)
    )
    chunks = chunk_document(Document(id="d", text=text))
    sizes = [estimate_tokens(c.text) for c in chunks]
    assert max(sizes) <= 512 and min(sizes[:-1]) > 400


def test_bad_size() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        chunk_document(Document(id="d", text="x"), max_tokens=0)
