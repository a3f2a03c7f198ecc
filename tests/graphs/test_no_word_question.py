"""The Python API refuses a question with no word in it (issue 43), agentic or single
shot, with InvalidQueryError (a ValueError) before any search runs."""

from __future__ import annotations

import pytest

from sift.errors import InvalidQueryError
from sift.graphs import asearch, search, single_shot


@pytest.mark.parametrize("question", ["?!?...", "。、！？", " ... "])  # 英語と日本語の記号
async def test_search_and_single_shot_refuse_it(corpus, question: str) -> None:
    for run in (
        lambda: search(question, corpus),
        lambda: single_shot(question, corpus, top_k=5),
    ):
        with pytest.raises(InvalidQueryError, match="has no word to search for") as refused:
            run()
        assert isinstance(refused.value, ValueError)
    with pytest.raises(InvalidQueryError, match="has no word to search for"):
        await asearch(question, corpus)


async def test_a_word_in_either_language_is_searched(corpus, ja_corpus) -> None:
    assert single_shot("Etna?!", corpus, top_k=3).evidence
    assert single_shot("富士山？", ja_corpus, top_k=3).evidence
