"""Calls recovered from Ollama's HTTP 500 `error parsing tool call: raw='...'` reply."""

from __future__ import annotations

from sift.integrations.ollama._tool_error import parse_ollama_tool_error


def test_bare_array_rejected_by_ollama_is_recovered_from_its_error():
    raw = (
        '[{"name":"search_corpus","arguments":{"query":"a"}},'
        '{"name":"read_document","arguments":{"doc_id":"d"}}]'
    )
    message = f"error parsing tool call: raw='{raw}', err=json: cannot unmarshal array"
    calls = parse_ollama_tool_error(message, id_prefix="t3")
    assert calls is not None
    assert [(c.name, c.batch_id) for c in calls] == [
        ("search_corpus", "t3_0"),
        ("read_document", "t3_0"),
    ]


def test_prose_before_arguments_is_recovered_and_named_by_its_keys():
    message = (
        'error parsing tool call: raw=\'We need the birth year. {"pattern": "\\d{4}"}\', '
        "err=invalid character 'W' looking for beginning of value"
    )
    calls = parse_ollama_tool_error(message)
    assert calls is not None
    assert [(c.name, c.arguments) for c in calls] == [("grep_corpus", {"pattern": r"\d{4}"})]


def test_ambiguous_raw_text_is_not_guessed():
    message = "error parsing tool call: raw='{\"foo\": 1}', err=x"
    assert parse_ollama_tool_error(message) is None
    assert parse_ollama_tool_error("model requires more memory") is None
