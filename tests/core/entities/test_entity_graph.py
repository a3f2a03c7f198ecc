"""sift.entities: entities found without a model, and the walk over the graph."""

from __future__ import annotations

import numpy as np
import pytest

from sift.entities import (
    EntityGraph,
    EntityGraphConfig,
    EntityLimits,
    WalkLimits,
    build_entity_graph,
    entity_key,
    passage_entities,
    question_entities,
)

# ------------------------------------------------------------------ extraction (English)


def test_keys_normalise_case_width_parentheticals_and_articles() -> None:
    assert entity_key("Jack Russell (priest)") == "jack russell"
    # Accents go, as a question types the name; Japanese voicing marks stay.
    assert entity_key("Tekezé River") == entity_key("Tekeze River") == "tekeze river"
    assert entity_key("Ålesund") == "alesund"
    assert entity_key("ガーデン・ブリッジ") == "ガーデン・ブリッジ"
    assert entity_key("ｶﾞｰﾃﾞﾝ") == "ガーデン"  # half-width kana, voiced once composed
    assert entity_key("The Beatles") == "beatles"
    assert entity_key("ＮＡＳＡ") == "nasa"
    assert entity_key("  Apollo   11 ") == "apollo 11"


def test_passage_names_its_title_spans_quotes_dates_and_years() -> None:
    assert passage_entities("Arthurdale, West Virginia", "")[:2] == [
        "arthurdale, west virginia",
        "arthurdale",
    ]
    keys = passage_entities(
        "Signmark (rapper)",
        'Signmark was born in Helsinki on 12 March 1978. He recorded "Speaking Hands" '
        "with the Battle of Manila veterans in 2006. Filming took place in Finland.",
    )
    for expected in (
        "signmark",
        "helsinki",
        "1978-03-12",
        "speaking hands",
        "battle of manila",
        "2006",
        "finland",
    ):
        assert expected in keys, expected
    # A lone capitalised word opening a sentence is a plain word (unless it is the title
    # or written capitalised elsewhere), and pronouns and months are not names.
    assert "filming" not in keys
    assert "he" not in keys
    assert "march" not in keys


def test_spans_drop_leading_function_words_and_stop_at_possessives() -> None:
    keys = passage_entities(
        "", "In Paris, Nickelback's 2008 album was played by Ludwig van Beethoven fans."
    )
    assert "paris" in keys
    assert "nickelback" in keys
    assert "ludwig van beethoven" in keys
    assert "in paris" not in keys


def test_a_title_with_jr_is_also_the_name_without_it() -> None:
    from sift.text import name_without_suffix

    assert name_without_suffix("George Nicholls Jr.") == "George Nicholls"
    assert name_without_suffix("Sammy Davis, Sr.") == "Sammy Davis"
    assert name_without_suffix("Henry IV") == "Henry IV"  # a regnal number is the name
    assert name_without_suffix("Jr.") == "Jr."
    assert passage_entities("George Nicholls Jr. (director)", "") == [
        "george nicholls jr",
        "george nicholls",
    ]
    # The film's page, which writes "George Nicholls, Jr.", reaches his.
    graph = build_entity_graph(
        [
            ("chatterbox_0", "Chatterbox", "Chatterbox was directed by George Nicholls, Jr."),
            ("nicholls_0", "George Nicholls Jr.", "He was born in 1897."),
            ("other_0", "George Smith", "He was born in 1897."),
        ]
    )
    walked = graph.walk(question_entities("Who directed Chatterbox?"), [], k=3)
    assert [c for c, _ in walked.chunks][:2] == ["chatterbox_0", "nicholls_0"]
    assert walked.via["nicholls_0"] == "george nicholls"


def test_a_subtitles_colon_is_not_part_of_the_key() -> None:
    # Questions write "Batman Under the Red Hood": the page's title must seed the walk.
    assert entity_key("Batman: Under the Red Hood") == "batman under the red hood"
    assert question_entities("Who did Neil Patrick Harris voice in Batman Under the Red Hood?")[
        -1
    ] == entity_key("Batman: Under the Red Hood")
    graph = build_entity_graph(
        [
            ("film_0", "Batman: Under the Red Hood", "Neil Patrick Harris voices Nightwing."),
            ("other_0", "Batman", "Batman is a superhero."),
        ]
    )
    walked = graph.walk(question_entities("Who voiced Nightwing in Batman Under the Red Hood?"), [])
    assert walked.chunks[0][0] == "film_0"
    # A colon inside a token (a time, a Japanese title with no space after it) stays.
    assert entity_key("10:30 Train") == "10:30 train"
    assert entity_key("ドラえもん：のび太の恐竜") == "ドラえもん:のび太の恐竜"


def test_numbers_glued_to_letters_or_separators_are_not_years() -> None:
    keys = passage_entities("", "The B-5200 flew 1,2000 km at 3.1415 speed in 1999.")
    assert "1999" in keys
    assert "5200" not in keys
    assert "2000" not in keys
    assert "1415" not in keys


def test_numbers_at_the_edges_of_a_text_and_beside_japanese() -> None:
    from sift.entities import EntityGraphConfig

    keys = passage_entities("", "1850 saw it built; 12345 and 0.5 are not years; rebuilt 1999.")
    assert [k for k in keys if k.isdigit()] == ["1850", "1999"]
    assert "2012" in passage_entities("", "東京スカイツリーは2012年に開業")
    # One digit to three: the same rules at other lengths ("7" alone; not "3" of "3.5").
    limits = EntityGraphConfig(number_min_digits=1, number_max_digits=3).limits()
    keys = passage_entities("", "7 dwarfs, 3.5 m, B-52 and 12 men, 1999", limits)
    assert [k for k in keys if k.isdigit()] == ["7", "12"]


def test_question_counts_its_first_name_but_not_its_question_word() -> None:
    keys = question_entities("What currency predated the Euro in the country Signmark is from?")
    assert keys == ["euro", "signmark"]
    assert question_entities("Signmark is from which country?")[0] == "signmark"


def test_dates_written_month_first_meet_dates_written_day_first() -> None:
    a = passage_entities("", "He died on March 12, 1978.")
    b = passage_entities("", "He died on 12 March 1978.")
    assert "1978-03-12" in a and "1978-03-12" in b
    # The day and year must stand apart from other digits and words; a month name inside
    # a word ("Mayor") starts no date.
    keys = passage_entities("", "Filed 112 March 1950, x3 May 1961, Mayor 5, 1970, May 123, 1980.")
    assert not [k for k in keys if k.count("-") == 2], keys
    keys = passage_entities("", "From 1 12 June 1990 to (July 4, 1776) and 5 May 12345.")
    assert [k for k in keys if k.count("-") == 2] == ["1990-06-12", "1776-07-04"]


# ------------------------------------------------------------------ extraction (Japanese)


def test_japanese_katakana_kanji_and_bracketed_names() -> None:
    keys = passage_entities(
        "東京スカイツリー",
        "グスタフ・マーラーは『大地の歌』を作曲した。東京都墨田区にある電波塔で、2012年5月22日に開業した。",
    )
    assert keys[0] == "東京スカイツリー"
    assert "グスタフ・マーラー" in keys
    assert "大地の歌" in keys
    assert "東京都墨田区" in keys
    assert "電波塔" in keys
    assert "2012-05-22" in keys
    assert "2012" in keys
    # Dates and generic nouns are not names.
    assert "開業" in keys  # a kanji compound stays: its IDF decides its worth
    assert "2012年5月22日" not in keys


def test_japanese_question_entities_and_full_width_forms() -> None:
    keys = question_entities("「ＳＭＡＰ」のメンバーで、京都府出身の人物は誰か。")
    assert keys[0] == "smap"
    assert "京都府出身" in keys
    assert "メンバー" in keys


# ------------------------------------------------------------------ the graph and its walk


def _toy() -> EntityGraph:
    return build_entity_graph(
        [
            ("signmark_0", "Signmark", "Signmark is a Finnish rapper born in Helsinki."),
            ("helsinki_0", "Helsinki", "Helsinki is the capital of Finland."),
            ("finland_0", "Finland", "Finland adopted the euro in 1999, replacing its markka."),
            ("markka_0", "Finnish markka", "The Finnish markka was the currency of Finland."),
            ("rome_0", "Rome", "Rome is the capital of Italy."),
            ("italy_0", "Italy", "Italy adopted the euro in 1999."),
        ]
    )


def test_build_counts_document_frequency_and_both_directions_agree() -> None:
    graph = _toy()
    assert len(graph) == 6
    finland = graph.entity_id("finland")
    assert finland is not None
    assert graph.df[finland] == 3  # helsinki_0, finland_0, markka_0
    # Every edge appears once in each direction.
    forward = {
        (c, graph.entity_keys[e])
        for c in graph.chunk_ids
        for e in [graph.entity_id(k) for k in graph.entities_of(c)]
        if e is not None
    }
    backward = set()
    for e in range(len(graph.entity_keys)):
        for i in graph.entity_chunks[graph.entity_ptr[e] : graph.entity_ptr[e + 1]]:
            backward.add((graph.chunk_ids[i], graph.entity_keys[e]))
    assert forward == backward
    assert np.all(graph.idf[graph.df == 1] > graph.idf[finland])


def test_walk_reaches_the_second_hop_through_the_bridge_entity() -> None:
    graph = _toy()
    walked = graph.walk(["signmark"], limits=EntityGraphConfig(steps=2).walk_limits())
    ranked = [c for c, _ in walked.chunks]
    assert ranked[0] == "signmark_0"
    # Two round trips: Signmark's page names Helsinki and Finland, whose pages come next.
    assert "helsinki_0" in ranked
    # Through the page titled by the name (title edges weigh 10 times a mention).
    assert walked.via["helsinki_0"] == "helsinki"
    # Rome's page shares nothing with Signmark's neighbourhood: three round trips away.
    assert "rome_0" not in ranked
    bridges = [k for k, _ in walked.entities]
    assert "signmark" not in bridges
    assert "helsinki" in bridges


def test_walk_seeded_by_found_chunks_excludes_them_and_scores_neighbours() -> None:
    graph = _toy()
    walked = graph.walk([], ["markka_0"], exclude=["markka_0", "finland_0"])
    ranked = [c for c, _ in walked.chunks]
    assert "markka_0" not in ranked and "finland_0" not in ranked
    # Unless excluded, a seed chunk is returned (it holds the most mass).
    assert graph.walk([], ["markka_0"]).chunks[0][0] == "markka_0"
    # The pages naming what the seed names come first; after one round trip, each came
    # through the name it shares with the seed.
    assert set(ranked[:2]) == {"helsinki_0", "signmark_0"}
    one = graph.walk([], ["markka_0"], limits=EntityGraphConfig(steps=1).walk_limits())
    assert one.via["helsinki_0"] == "finland"
    assert one.via["signmark_0"] == "finnish"
    # Rome's page is three round trips away (markka, Finland, the year, Italy).
    assert "rome_0" not in ranked


def test_walk_skips_entities_too_common_to_lead_anywhere() -> None:
    rows = [(f"c{i}_0", "", f"Alpha Corp met Beta{i} Group in 1999.") for i in range(40)]
    rows.append(("odd_0", "", "Gamma Works is unrelated."))
    graph = build_entity_graph(rows)
    config = EntityGraphConfig(max_df_share=0.1, max_df_floor=5)
    walked = graph.walk(["alpha corp"], limits=config.walk_limits())
    assert walked.chunks == []  # in 40 of 41 chunks: not walked through
    walked = graph.walk(["beta7 group"], limits=config.walk_limits())
    assert [c for c, _ in walked.chunks] == ["c7_0"]


def test_walk_with_unknown_seeds_is_empty_and_frontier_bounds_it() -> None:
    graph = _toy()
    assert graph.walk(["nobody"], ["missing_0"]).chunks == []
    config = EntityGraphConfig(frontier=1, steps=3)
    walked = graph.walk(["signmark", "rome"], limits=config.walk_limits())
    assert walked.chunks  # still reaches something, one entity per round


def test_japanese_walk_links_a_person_to_the_tower_through_a_shared_name() -> None:
    graph = build_entity_graph(
        [
            ("a_0", "墨田区", "墨田区は東京都の特別区で、東京スカイツリーがある。"),
            ("b_0", "東京スカイツリー", "東京スカイツリーは電波塔である。設計は日建設計。"),
            ("c_0", "日建設計", "日建設計は大阪市に本社を置く設計事務所。"),
            ("d_0", "京都", "京都は古都である。"),
        ]
    )
    walked = graph.walk(question_entities("墨田区にある電波塔を設計した会社の本社はどこか"))
    ranked = [c for c, _ in walked.chunks]
    assert ranked[:1] == ["a_0"] or ranked[:1] == ["b_0"]
    assert "c_0" in ranked
    assert "d_0" not in ranked


def test_config_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIFT_ENTITY_GRAPH_STEPS", "3")
    monkeypatch.setenv("SIFT_ENTITY_GRAPH_RESTART", "0.5")
    config = EntityGraphConfig()
    assert config.walk_limits().steps == 3
    assert config.walk_limits().restart == 0.5
    with pytest.raises(ValueError, match="restart"):
        EntityGraphConfig(restart=1.5)


def test_no_limits_given_means_the_configurations_defaults(monkeypatch) -> None:
    # An extraction or a walk given no limits uses the defaults (not the environment's).
    monkeypatch.setenv("SIFT_ENTITY_GRAPH_CJK_MAX_CHARS", "3")
    monkeypatch.setenv("SIFT_ENTITY_GRAPH_STEPS", "1")
    assert EntityGraphConfig().limits().cjk_max_chars == 3
    text = "東京スカイツリーは墨田区にある。"
    defaults = EntityGraphConfig.model_construct()
    assert defaults.cjk_max_chars == 16
    assert passage_entities("", text) == passage_entities("", text, defaults.limits())
    assert passage_entities("", text) != passage_entities("", text, EntityGraphConfig().limits())
    graph = _toy()
    assert graph.walk(["signmark"]) == graph.walk(["signmark"], limits=defaults.walk_limits())
    # One copy of the defaults: the limits' own, which the configuration takes (the
    # limits no longer import the configuration to find them: that was an import circle).
    assert defaults.limits() == EntityLimits()
    assert defaults.walk_limits() == WalkLimits()
    assert EntityGraphConfig(cjk_max_chars=5, frontier=7).limits().cjk_max_chars == 5
    assert EntityGraphConfig(cjk_max_chars=5, frontier=7).walk_limits().frontier == 7
