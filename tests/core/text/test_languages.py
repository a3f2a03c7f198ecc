"""`sift.text.guess_language`: the `lang` every file gets, Japanese beside English."""

from __future__ import annotations

import pytest

from sift.text import SAMPLE_CHARS, guess_language


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The kestrel hovers over the north tower at dawn.", "en"),
        ("梅雨は初夏の東アジアで雨の多い時期である。", "ja"),
        # Kanji alone would be Chinese; one kana makes it Japanese.
        ("富士山は日本最高峰の火山である。", "ja"),
        ("北京是中国的首都。", "zh"),
        ("서울은 한국의 수도이다.", "ko"),
        ("Москва — столица России.", "ru"),
        ("Le pont a été construit par la ville pour les habitants et les visiteurs.", "fr"),
        ("Die Brücke wurde von der Stadt gebaut und ist nicht mehr in Betrieb.", "de"),
        ("El puente fue construido por la ciudad para los habitantes y los turistas.", "es"),
        ("Plain notes about markup.", "en"),
        # Latin letters without the function words of any language listed: the script only.
        ("Kestrel, Merlin, Hobby, Peregrine", "latin"),
        ("12,345 / 67.8 %", "other"),
        ("", "other"),
    ],
)
def test_guess_language(text: str, expected: str) -> None:
    assert guess_language(text) == expected


def test_english_words_in_a_japanese_text_do_not_make_it_english() -> None:
    text = "The report 第3四半期の売上高は前年同期比12.5%増となりました。 of the year"
    assert guess_language(text) == "ja"


def test_only_the_opening_is_read() -> None:
    # A Japanese document that quotes English at length after its opening stays Japanese.
    opening = "決算の説明資料です。" * (SAMPLE_CHARS // 10 + 1)
    assert guess_language(opening + " the of and to in is that it was " * 50) == "ja"
    assert guess_language("the of and to " * 10 + opening) == "ja"  # any kana in the sample
    # ... and an English document whose Japanese appendix starts past the opening is English.
    assert guess_language("the report of the year " * 100 + opening) == "en"


def test_a_tie_between_languages_is_not_a_guess() -> None:
    # "de" and "la" are Spanish, French, Italian and Portuguese words alike.
    assert guess_language("de la") == "latin"
