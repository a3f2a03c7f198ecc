from __future__ import annotations

import pytest
from pydantic import ValidationError

from sift.types import Document, SearchResult


def test_document_rejects_empty_and_control_character_ids() -> None:
    with pytest.raises(ValidationError, match="id"):
        Document(id="", text="x")
    with pytest.raises(ValidationError, match="control characters"):
        Document(id="a\nb", text="x")


def test_document_rejects_reserved_metadata_keys() -> None:
    with pytest.raises(ValidationError, match="reserved"):
        Document(id="a", text="x", metadata={"doc_id": "b"})


def test_search_result_round_trips_through_json() -> None:
    result = SearchResult.model_validate(
        {
            "question": "q",
            "evidence": [
                {
                    "doc_id": "d",
                    "chunk_id": "d_0",
                    "title": "t",
                    "text": "x",
                    "score": 1.0,
                    "found_by": [{"tool": "search_corpus", "argument": "q", "turn": 1}],
                }
            ],
            "stopped_because": "max_turns",
        }
    )
    assert SearchResult.model_validate_json(result.model_dump_json()) == result
    with pytest.raises(ValidationError):
        SearchResult(question="q", stopped_because="tired")  # type: ignore[arg-type]
