"""What a searchable word is (issue 43): the one definition every face refuses a question
by. A question of punctuation, symbols or space alone, in English or Japanese writing,
holds none; one letter, digit, kana or kanji is enough."""

from __future__ import annotations

import pytest

from sift.config import check_question
from sift.errors import InvalidQueryError
from sift.text import Analyzer, has_searchable_word


@pytest.mark.parametrize(
    "text",
    [
        "?!?...",
        "。、！？",  # Japanese punctuation / 日本語の句読点だけ
        "「」『』…〜",
        "   \t\n",
        "",
        "___ --- ***",
        "…",
    ],
)
def test_punctuation_and_space_alone_hold_no_searchable_word(text: str) -> None:
    assert not has_searchable_word(text)
    # The analyzer agrees: no term, so BM25 has nothing to look up.
    assert Analyzer().terms(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "a?",
        "Who designed the Basalt Bridge?",
        "玄武岩橋を設計したのは誰？",  # Japanese question / 日本語の質問
        "ー",  # the long-vowel mark is katakana: a term of its own
        "々",
        "４２",  # full-width digits, read as 42 after NFKC
        "²",
        "Ｗｉｆｉ",
    ],
)
def test_one_letter_digit_kana_or_kanji_is_searchable(text: str) -> None:
    assert has_searchable_word(text)
    assert Analyzer().terms(text, stem=False)


def test_a_word_too_long_to_index_still_counts() -> None:
    # grep and the dense search can still find a long identifier the index drops.
    word = "x" * (Analyzer().max_word_chars + 1)
    assert Analyzer().terms(word) == []
    assert has_searchable_word(word)


@pytest.mark.parametrize("question", ["?!?...", "。、！？"])
def test_check_question_refuses_a_question_without_a_word(question: str) -> None:
    with pytest.raises(InvalidQueryError, match="has no word to search for") as refused:
        check_question(question, 2_000)
    assert isinstance(refused.value, ValueError)  # the Python API's contract
    assert question in str(refused.value) and "\n" not in str(refused.value)
    assert check_question(" 富士山? ", 2_000) == "富士山?"
    assert check_question(" Etna? ", 2_000) == "Etna?"
