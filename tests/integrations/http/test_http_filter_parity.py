"""The MCP tools accept exactly the filters the HTTP API accepts (one validator,
`sift.filters.parse_filter`), and a filter list is bounded and cheap (issue 31)."""

from __future__ import annotations

import json
import re

import anyio
import pytest
from mcp import Client

from sift.errors import InvalidFilterError
from sift.filters import MAX_FILTER_VALUES, Filter, matches, parse_filter
from sift.graphs import search, single_shot
from sift.integrations.cli import main as cli
from sift.integrations.mcp import create_server
from sift.integrations.stores import open_store

CASES = [
    # (filters, accepted)
    ({"lang": "en"}, True),
    ({"lang": ["en", "fr"], "year": {"gte": 1800, "lt": 1900}}, True),
    ({"logic": "or", "conditions": [{"field": "lang", "op": "in", "value": ["fr"]}]}, True),
    ({"category": "建築"}, True),
    ({"lang": {"code": "en"}}, False),  # an object that is not comparisons
    ({"lang": [["en"]]}, False),  # a list inside a list
    ({"lang": {"gte": [1, 2]}}, False),
    ({"conditions": [{"field": "lang", "op": "like", "value": "e"}]}, False),
    ({"conditions": [{"field": "lang", "value": "en", "extra": 1}]}, False),
    ({"logic": "xor", "conditions": []}, False),
    ({f"f{i}": 1 for i in range(65)}, False),
    ({"lang": [f"v{i}" for i in range(MAX_FILTER_VALUES + 1)]}, False),
    ({"lang": [f"v{i}" for i in range(MAX_FILTER_VALUES)]}, True),
    ({"": 1}, False),
]


def test_http_and_mcp_accept_the_same_filters(served) -> None:
    http: list[bool] = []
    with served.client() as client:
        for spec, _ in CASES:
            answer = client.post(
                "/v1/search",
                json={
                    "collection": "docs",
                    "question": "Eiffel",
                    "mode": "single_shot",
                    "filters": spec,
                },
            )
            assert answer.status_code in (200, 422), answer.text
            http.append(answer.status_code == 200)

    async def through_mcp() -> list[bool]:
        corpus = open_store(served.root / "docs", writer=False)
        try:
            async with Client(create_server(corpus)) as client:
                accepted = []
                for spec, _ in CASES:
                    found = await client.call_tool("grep", {"pattern": "Eiffel", "filters": spec})
                    accepted.append(not found.is_error)
                return accepted
        finally:
            corpus.close()

    mcp = anyio.run(through_mcp)
    assert http == mcp == [accepted for _, accepted in CASES]


def test_a_list_too_long_names_the_limit() -> None:
    with pytest.raises(ValueError, match=r"10,000 values; the limit is 1,000"):
        parse_filter({"tag": [str(i) for i in range(10_000)]})


def test_membership_in_a_long_list_is_one_lookup_per_value() -> None:
    """10,000 values against 5,000 records was 50 million comparisons (seconds of CPU);
    a set makes it one lookup per record value. Counted, not timed."""

    class Counting(str):
        compared = 0

        def __eq__(self, other: object) -> bool:
            Counting.compared += 1
            return str.__eq__(self, other)

        __hash__ = str.__hash__

    spec = Filter.of({"tag": [Counting(f"v{i}") for i in range(MAX_FILTER_VALUES)]})
    hits = sum(matches(spec, {"tag": [f"v{i}", "タグ"]}) for i in range(5_000))
    assert hits == MAX_FILTER_VALUES
    assert Counting.compared <= 5_000  # equal hashes only: at most one per hit


# What every face says of an unknown operator: the line `sift.filters.parse_filter` makes.
UNKNOWN = {"year": {"gt_e": 2000}}
SAID = "year: unknown operator 'gt_e'; the operators are eq, ne, gt, gte, lt, lte"
UNKNOWN_JA = {"ページ": {"以上": 3}}
SAID_JA = "ページ: unknown operator '以上'; the operators are eq, ne, gt, gte, lt, lte"


@pytest.mark.parametrize(("spec", "said"), [(UNKNOWN, SAID), (UNKNOWN_JA, SAID_JA)])
def test_every_face_refuses_an_unknown_operator_with_the_same_line(
    served, capsys: pytest.CaptureFixture[str], spec: dict, said: str
) -> None:
    """HTTP (search and grep), MCP (search and grep), the CLI and the Python API: the
    same line, naming the operator and the ones there are. The CLI took it for a value
    that matched nothing ("nothing found"); HTTP answered pydantic's report of each form."""
    with served.client() as client:
        for path, body in (
            ("/v1/search", {"collection": "docs", "question": "Eiffel", "mode": "single_shot"}),
            ("/v1/collections/docs/grep", {"pattern": "Eiffel"}),
        ):
            answer = client.post(path, json={**body, "filters": spec})
            assert answer.status_code == 422, answer.text
            assert answer.json()["error_msg"] == f"invalid request: filters: {said}"

    corpus = open_store(served.root / "docs", writer=False)
    try:

        async def through_mcp() -> list[str]:
            async with Client(create_server(corpus)) as client:
                errors = []
                for tool, args in (("search", {"question": "Eiffel"}), ("grep", {"pattern": "E"})):
                    found = await client.call_tool(tool, {**args, "filters": spec})
                    assert found.is_error
                    errors.append(found.content[0].text)  # type: ignore[union-attr]
                return errors

        for text in anyio.run(through_mcp):
            assert said in text and "\n" not in text

        for call in (
            lambda: single_shot("Eiffel", corpus, filters=spec),
            lambda: search("Eiffel", corpus, filters=spec),
            lambda: corpus.search("Eiffel", filters=spec),  # type: ignore[arg-type]
        ):
            with pytest.raises(InvalidFilterError, match=re.escape(said)):
                call()
    finally:
        corpus.close()

    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        cli(["grep", "--store", str(served.root / "docs"), "--filter", json.dumps(spec), "E"])
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("sift: error: --filter") and line.endswith(said)
