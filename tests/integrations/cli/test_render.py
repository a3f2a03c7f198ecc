"""How `sift search` prints evidence: the calls that found a chunk, and the entity
through which the planner's entity graph lifted it (issue 32)."""

from __future__ import annotations

import io

from rich.console import Console

from sift.integrations.cli._render import print_result
from sift.types import Evidence, FoundBy, SearchResult


def _printed(found_by: list[FoundBy]) -> str:
    evidence = Evidence(
        doc_id="markka",
        chunk_id="markka_0",
        title="マルッカ",
        text="マルッカはフィンランドの通貨で、ユーロ導入まで使われていた。",
        score=0.5,
        found_by=found_by,
    )
    result = SearchResult(question="シグマークの出身国の旧通貨は？", evidence=[evidence])
    out = io.StringIO()
    print_result(Console(file=out, width=200, color_system=None), result)
    return out.getvalue()


def test_the_graph_entity_is_shown_beside_the_calls_even_after_two_of_them() -> None:
    text = _printed(
        [
            FoundBy(tool="search_corpus", argument="シグマーク", turn=1),
            FoundBy(tool="grep_corpus", argument="通貨", turn=2),
            FoundBy(tool="search_corpus", argument="ユーロ", turn=3),
            FoundBy(tool="entity_graph", argument="フィンランド", turn=4),
        ]
    )
    line = next(x for x in text.splitlines() if "found by" in x)
    assert "search('シグマーク') turn 1" in line and "grep('通貨') turn 2" in line
    assert "ユーロ" not in line  # two calls at most
    assert line.rstrip().endswith("entity graph via 'フィンランド'")


def test_no_graph_entry_no_graph_text() -> None:
    text = _printed([FoundBy(tool="search_corpus", argument="markka", turn=1)])
    assert "entity graph" not in text and "search('markka') turn 1" in text
