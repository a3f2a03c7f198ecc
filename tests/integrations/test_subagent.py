"""What sift hands an orchestrator: evidence records with pages, and the readable text."""

from __future__ import annotations

from sift.integrations.subagent import SEARCH_TOOL_DESCRIPTION, SearchReport, page_numbers
from sift.types import Evidence, FoundBy, SearchResult, Usage


def test_page_numbers_read_page_and_pages_from_metadata() -> None:
    assert page_numbers({}) == []
    assert page_numbers({"page": 7}) == [7]
    assert page_numbers({"page": "12"}) == [12]
    assert page_numbers({"pages": [5, 4, 5]}) == [4, 5]
    assert page_numbers({"page": 4, "pages": [4, 5]}) == [4, 5]
    # Values that are not page numbers are ignored, never guessed at.
    assert page_numbers({"page": True, "pages": ["iv", None, 2.5]}) == []


def result(evidence: list[Evidence], **fields: object) -> SearchResult:
    return SearchResult(
        question="富士山はどこにありますか？",
        evidence=evidence,
        usage=Usage(turns=2, tool_calls=3),
        **fields,  # type: ignore[arg-type]
    )


def test_a_report_ranks_cuts_and_keeps_metadata() -> None:
    found = [FoundBy(tool="search_corpus", argument="富士山", turn=1)]
    evidence = [
        Evidence(
            doc_id="fuji",
            chunk_id="fuji_0",
            title="富士山",
            text="富士山は静岡県と山梨県にまたがる。",
            score=2.0,
            justification="山の場所を述べている。",
            found_by=found,
            metadata={"pages": [3, 4], "lang": "ja"},
        ),
        Evidence(doc_id="biwa", chunk_id="biwa_0", title="", text="琵琶湖", score=1.0),
    ]
    report = SearchReport.of(result(evidence), top_k=1)
    assert len(report.evidence) == 1
    item = report.evidence[0]
    assert (item.rank, item.page, item.pages, item.metadata["lang"]) == (1, 3, [3, 4], "ja")
    text = report.to_text()
    assert text.splitlines()[0] == (
        'sift found 1 passage for "富士山はどこにありますか？" '
        "(2 turns, 3 tool calls; stopped because final)."
    )
    assert "[1] 富士山 (doc fuji; chunk fuji_0; pp. 3, 4)" in text
    assert "why: 山の場所を述べている。" in text
    assert 'found by: search_corpus("富士山") turn 1' in text
    assert text.endswith("富士山は静岡県と山梨県にまたがる。")
    # A passage without a title is named by its document id.
    assert "[2] biwa (doc biwa; chunk biwa_0)" in SearchReport.of(result(evidence)).to_text()


def test_an_empty_or_failed_report_says_so() -> None:
    text = SearchReport.of(result([], stopped_because="error", error="store unavailable")).to_text()
    assert text.startswith('sift found no passages for "富士山はどこにありますか？"')
    assert "stopped because error" in text and "error: store unavailable" in text


def test_the_description_tells_an_orchestrator_when_to_delegate() -> None:
    for phrase in ("sub-agent", "does not answer", "cite the document ids", "filters"):
        assert phrase in SEARCH_TOOL_DESCRIPTION
