"""Chunking: sizes, boundaries, ids and offsets."""

from __future__ import annotations

import importlib.util
import itertools
import json
from pathlib import Path

import pytest

from sift.integrations.chunking import chunk_document, chunk_spans, chunk_spans_many
from sift.text import estimate_tokens, has_cjk
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


# ------------------------------------------------------------------- Japanese and mixed

JA_SENTENCES = [
    "梅雨は、北海道と小笠原諸島を除く日本で見られる雨季のことである。",
    "「梅雨入り」は気象庁が発表する。",
    "彼は『雨の日』という本を書いた！",
    "本当にそうだろうか？",
    "東京都千代田区にある企業（本社）である．",
]


def test_japanese_is_cut_at_sentence_ends_without_spaces() -> None:
    text = "".join(JA_SENTENCES * 20)
    doc = Document(id="ja", text=text)
    chunks = chunk_document(doc, max_tokens=60)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text.endswith(("。", "！", "？", "．")), chunk.text[-10:]
        assert chunk.text.startswith(tuple(s[:3] for s in JA_SENTENCES)), chunk.text[:10]
    check_offsets(doc, 60)


def test_closing_brackets_stay_with_their_sentence() -> None:
    sentence = "彼は「雨が降る。」と言った。"
    text = (sentence + "「今日は晴れです！」") * 30
    doc = Document(id="q", text=text)
    chunks = chunk_document(doc, max_tokens=40)
    for chunk in chunks:
        assert chunk.text.endswith(("。", "」")), chunk.text[-6:]
        assert not chunk.text.startswith("」")
    check_offsets(doc, 40)


def test_line_breaks_end_japanese_sentences() -> None:
    lines = [f"第{i}条 この法律は公布の日から施行する" for i in range(40)]
    doc = Document(id="l", text="\n".join(lines))
    chunks = chunk_document(doc, max_tokens=50)
    for chunk in chunks:
        assert chunk.text.startswith("第") and chunk.text.endswith("施行する")
    check_offsets(doc, 50)


@pytest.mark.parametrize("limit", [8, 16, 64, 512])
def test_a_long_unpunctuated_japanese_run_never_exceeds_the_limit(limit: int) -> None:
    run = "国際連合平和維持活動において常に最低限統制的に実施しなければならないのは" * 60
    doc = Document(id="r", text=f"前書き。\n\n{run}\n\n後書き。")
    chunks = chunk_document(doc, max_tokens=limit)
    check_offsets(doc, limit)
    joined = "".join(c.text for c in chunks)
    assert "".join(joined.split()) == "".join(doc.text.split())
    assert len(chunks) > 1


def test_long_runs_are_cut_where_the_script_changes() -> None:
    run = "国際連合平和維持活動において常に最低限統制的に実施しなければならないのは" * 30
    chunks = chunk_document(Document(id="s", text=run), max_tokens=64)
    assert len(chunks) > 3
    boundaries = 0
    for left, right in itertools.pairwise(chunks):
        assert left.end == right.start  # no space to leave out
        left_kana = "\u3040" <= left.text[-1] <= "\u30ff"
        right_kana = "\u3040" <= right.text[0] <= "\u30ff"
        boundaries += left_kana != right_kana
    assert boundaries >= len(chunks) - 2


def test_mixed_japanese_and_english_paragraph() -> None:
    text = " ".join(
        f"AppleはiPod {i}を製作している企業である。It was founded in 1976 by Steve Jobs. "
        for i in range(40)
    )
    doc = Document(id="m", text=text)
    chunks = chunk_document(doc, max_tokens=48)
    for chunk in chunks:
        assert chunk.text.endswith(("。", ".")), chunk.text[-8:]
    check_offsets(doc, 48)


@pytest.mark.parametrize(
    "text",
    [
        "漢字" * 2000,
        "ｶﾀｶﾅ" * 900 + "ＡＢＣ" * 300,
        "鱚鰤鰯鯵鱈" * 500,
        "한국어문장" * 600,
        "\U00020bb7野家" * 400,
        "。" * 700 + "」" * 50,
        "\n".join(["東京"] * 500),
    ],
)
def test_offsets_and_limits_hold_on_awkward_cjk_text(text: str) -> None:
    check_offsets(Document(id="x", text=text), 16)
    check_offsets(Document(id="x", text=text), 100)


ENGLISH_CHUNKS = Path(__file__).parent / "data" / "english_chunks.jsonl"
# Samples of the dev sets, holding every passage english_chunks.jsonl recorded.
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "benchmarks"


def test_english_chunks_are_byte_identical_to_before() -> None:
    with open(ENGLISH_CHUNKS, encoding="utf-8") as handle:
        recorded = [json.loads(line) for line in handle]
    texts: dict[str, str] = {}
    for name in {r["dataset"] for r in recorded}:
        with open(SAMPLES / name / "corpus.jsonl", encoding="utf-8") as handle:
            texts.update((row["id"], row["text"]) for row in map(json.loads, handle))
    compared = 0
    for row in recorded:
        text = texts[row["id"]]
        if has_cjk(text):
            continue  # a name in Chinese or Korean: its characters cost more tokens now
        for size, spans in row["spans"].items():
            assert chunk_spans(text, int(size)) == [tuple(s) for s in spans], (row["id"], size)
            compared += 1
    assert compared >= 4 * 300


def test_chunking_many_texts_cuts_each_as_alone() -> None:
    # The batch estimates the texts that fit one chunk together; every text, English or
    # Japanese, short or cut into several chunks, gets the spans chunk_spans gives it.
    texts: list[str] = []
    for name in ("hotpotqa", "jsquad"):
        with open(SAMPLES / name / "corpus.jsonl", encoding="utf-8") as handle:
            texts += [json.loads(line)["text"] for line in itertools.islice(handle, 400)]
    long_english = " ".join(texts[:40])
    texts += ["", "   \n\t ", "\n\nLeading and trailing newlines.\n\n", long_english]
    texts += ["東京は日本の首都である。" * 60, "word " * 700]
    for size in (16, 64, 512):
        assert chunk_spans_many(texts, size) == [chunk_spans(t, size) for t in texts]
    assert any(len(spans) > 1 for spans in chunk_spans_many(texts, 64))
    with pytest.raises(ValueError, match="max_tokens must be an integer of at least 8"):
        chunk_spans_many(texts, 4)


JAPANESE_CHUNKS = Path(__file__).parent / "data" / "japanese_chunks.jsonl"


def test_japanese_chunks_are_identical_to_before() -> None:
    # The Japanese sample's passages and long texts made of them (paragraphs, lines,
    # English between them, a sentence past every limit), chunked one by one and as a
    # batch: the spans recorded before the chunker estimated a batch's pieces together.
    spec = importlib.util.spec_from_file_location(
        "record_japanese_chunks", JAPANESE_CHUNKS.parent / "record_japanese_chunks.py"
    )
    assert spec is not None and spec.loader is not None
    recorder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recorder)
    by_id = dict(recorder.texts())
    with open(JAPANESE_CHUNKS, encoding="utf-8") as handle:
        recorded = [json.loads(line) for line in handle]
    assert len(recorded) == len(by_id) >= 300
    for size in ("16", "64", "512"):
        want = [[tuple(s) for s in row["spans"][size]] for row in recorded]
        ordered = [by_id[row["id"]] for row in recorded]
        assert chunk_spans_many(ordered, int(size)) == want, size
        for text, spans in zip(ordered[-5:], want[-5:], strict=True):
            assert chunk_spans(text, int(size)) == spans, size
