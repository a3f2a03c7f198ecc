"""The no-model reranker on Japanese text: a sentence is many terms, not one."""

from __future__ import annotations

from sift.nodes import TermOverlapReranker
from sift.types import Chunk


def _chunk(i: int, title: str, text: str) -> Chunk:
    return Chunk(chunk_id=f"d{i}_0", doc_id=f"d{i}", index=0, title=title, text=text)


CHUNKS = [
    _chunk(0, "台風", "台風は北西太平洋で発生する熱帯低気圧のうち最大風速が強いものをいう。"),
    _chunk(1, "梅雨", "梅雨は北海道と小笠原諸島を除く日本で見られる雨季の現象である。"),
    _chunk(2, "Apple", "AppleはiPodを製作している企業で、本社はカリフォルニア州にある。"),
]


def test_a_japanese_question_ranks_the_paragraph_that_answers_it() -> None:
    scores = TermOverlapReranker().rerank("日本で梅雨がないのは北海道とどこか。", CHUNKS)
    assert scores[1] == max(scores) and scores[1] > 0
    assert scores[1] > scores[0] and scores[1] > scores[2]


def test_a_mixed_question_matches_latin_and_japanese_terms() -> None:
    scores = TermOverlapReranker().rerank("iPodを製作している企業", CHUNKS)
    assert scores.index(max(scores)) == 2 and scores[0] == 0.0
