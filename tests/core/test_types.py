from __future__ import annotations

import pytest
from pydantic import ValidationError

from sift.types import Document, SearchResult, ToolCallTrace, TurnTrace, pruned_by_policy


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


def test_pruned_by_policy_reads_the_calls_in_order() -> None:
    # Pruned by the policy, then shown again by its grep: back in its context. Pruned by
    # the harness (the budget): not the policy's. Pruned again after coming back: pruned.
    trace = [
        TurnTrace(turn=1, calls=[ToolCallTrace(tool="search_corpus", added=["a_0", "b_0", "c_0"])]),
        TurnTrace(
            turn=2,
            calls=[
                ToolCallTrace(tool="prune_chunks", pruned=["a_0", "b_0"]),
                ToolCallTrace(tool="grep_corpus", resurfaced=["a_0"]),
                ToolCallTrace(tool="prune_chunks", arguments={"by": "harness"}, pruned=["c_0"]),
            ],
        ),
    ]
    assert pruned_by_policy(trace) == {"b_0"}
    trace.append(TurnTrace(turn=3, calls=[ToolCallTrace(tool="prune_chunks", pruned=["a_0"])]))
    assert pruned_by_policy(trace) == {"a_0", "b_0"}
    assert pruned_by_policy([]) == set()
