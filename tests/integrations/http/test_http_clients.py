"""The n8n workflows, replayed node by node against a real server, and a bounded
schemathesis run over the served OpenAPI document."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "n8n"

# The node types and versions the workflows are written for (n8n 1.x).
NODE_VERSIONS = {
    "n8n-nodes-base.manualTrigger": 1,
    "n8n-nodes-base.executeWorkflowTrigger": 1.1,
    "n8n-nodes-base.set": 3.4,
    "n8n-nodes-base.httpRequest": 4.2,
    "n8n-nodes-base.splitOut": 1,
}
_EXPRESSION = re.compile(r"\{\{\s*(.*?)\s*\}\}")
_JSON_PATH = re.compile(r"^\$json((?:\.[A-Za-z_][A-Za-z0-9_]*)+)$")


def _lookup(expression: str, item: dict[str, Any]) -> Any:
    """The subset of n8n expressions the workflows use: `$json.a.b`, JSON.stringify(...)."""
    inner = re.fullmatch(r"JSON\.stringify\((.*)\)", expression)
    if inner:
        return json.dumps(_lookup(inner.group(1), item))
    path = _JSON_PATH.match(expression)
    assert path, f"the test does not evaluate the expression {expression!r}"
    value: Any = item
    for part in path.group(1).strip(".").split("."):
        value = value[part]
    return value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value)


def _evaluate(value: Any, item: dict[str, Any]) -> Any:
    """n8n parameter semantics: a string starting with '=' is an expression template; a
    template that is one {{ }} keeps the value's type."""
    if not isinstance(value, str) or not value.startswith("="):
        return value
    template = value[1:]
    whole = _EXPRESSION.fullmatch(template.strip())
    if whole and template.count("{{") == 1:
        return _lookup(whole.group(1), item)
    return _EXPRESSION.sub(lambda m: _text(_lookup(m.group(1), item)), template)


def _chain(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = {n["name"]: n for n in workflow["nodes"]}
    assert len(nodes) == len(workflow["nodes"]), "node names are unique"
    targets = {
        c["node"]
        for out in workflow["connections"].values()
        for branch in out["main"]
        for c in branch
    }
    (start,) = [name for name in nodes if name not in targets]
    chain = [nodes[start]]
    while chain[-1]["name"] in workflow["connections"]:
        (branch,) = workflow["connections"][chain[-1]["name"]]["main"]
        (link,) = branch
        assert link["type"] == "main" and link["index"] == 0
        chain.append(nodes[link["node"]])
    assert len(chain) == len(nodes), "every node is on the chain"
    return chain


def _run(workflow: dict[str, Any], served, first_item: dict[str, Any]) -> list[dict[str, Any]]:
    """Executes the chain as n8n would, with the HTTP Request node's exact request."""
    items = [first_item]
    credential = {"name": "Authorization", "value": f"Bearer {served.key_all}"}  # README
    for node in _chain(workflow):
        kind, params = node["type"], node["parameters"]
        assert node["typeVersion"] == NODE_VERSIONS[kind], node["name"]
        if kind.endswith("Trigger"):
            continue
        if kind == "n8n-nodes-base.set":
            out = []
            for item in items:
                values = {
                    a["name"]: _evaluate(a["value"], item)
                    for a in params["assignments"]["assignments"]
                }
                for a in params["assignments"]["assignments"]:
                    if a["type"] == "number":
                        assert isinstance(values[a["name"]], int | float)
                if values.get("sift_url"):  # the one value a user edits: point it here
                    values["sift_url"] = served.url
                out.append({**item, **values} if params.get("includeOtherFields") else values)
            items = out
        elif kind == "n8n-nodes-base.httpRequest":
            assert params["authentication"] == "genericCredentialType"
            assert params["genericAuthType"] == "httpHeaderAuth"
            assert set(node["credentials"]) == {"httpHeaderAuth"}
            assert params["sendBody"] is True and params["specifyBody"] == "json"
            out = []
            for item in items:
                url = _evaluate(params["url"], item)
                body = json.loads(_evaluate(params["jsonBody"], item))
                response = httpx.request(
                    params["method"],
                    url,
                    content=json.dumps(body).encode(),
                    headers={
                        "content-type": "application/json",
                        credential["name"]: credential["value"],
                    },
                    timeout=params["options"]["timeout"] / 1000,
                )
                assert response.status_code == 200, response.text
                out.append(response.json())
            items = out
        elif kind == "n8n-nodes-base.splitOut":
            field = params["fieldToSplitOut"]
            items = [element for item in items for element in item[field]]
        else:  # pragma: no cover - a node type the table above lacks
            raise AssertionError(kind)
    return items


@pytest.mark.parametrize(
    ("name", "field"), [("sift-retrieval.json", "content"), ("sift-search.json", "text")]
)
def test_n8n_workflow_runs_against_the_server(served, name, field):
    workflow = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    # `n8n import:workflow` needs a top-level id (at most 21 characters in n8n 2.x).
    assert 0 < len(workflow["id"]) <= 21
    assert workflow["settings"]["executionOrder"] == "v1"
    chain = _chain(workflow)
    assert [n["type"] for n in chain] == [
        "n8n-nodes-base.manualTrigger",
        "n8n-nodes-base.set",
        "n8n-nodes-base.httpRequest",
        "n8n-nodes-base.splitOut",
    ]
    items = _run(workflow, served, {})
    assert 0 < len(items) <= 5
    assert all(isinstance(item[field], str) and item[field] for item in items)
    assert any("Dijon" in item[field] for item in items)


def test_n8n_sub_workflow_feeds_the_workflow_retriever(served):
    workflow = json.loads((EXAMPLES / "sift-retriever-subworkflow.json").read_text("utf-8"))
    chain = _chain(workflow)
    assert chain[0]["type"] == "n8n-nodes-base.executeWorkflowTrigger"
    assert chain[0]["parameters"]["inputSource"] == "passthrough"
    # The Workflow Retriever node calls the sub-workflow with one item: {"query": ...}.
    items = _run(workflow, served, {"query": "Who designed the Eiffel Tower?"})
    assert 0 < len(items) <= 8
    # The Workflow Retriever puts every field of an item into the page text: the item is
    # the text to read ("<title>: <content>") and its source, nothing else.
    for item in items:
        assert set(item) == {"content", "source"}
        assert item["content"] and item["source"]
    assert any(item["source"] == "gustave" for item in items)
    assert any(item["content"].startswith("Eiffel Tower: ") for item in items)


# --------------------------------------------------------------------------- schemathesis


# The schema is the one the served app publishes (its limits included), checked with every
# check schemathesis has, over valid and invalid inputs both. The benchmark
# checks/http_schema.py runs the same checks with many more examples.
def test_the_service_matches_its_openapi_document(served):
    schema = schemathesis.openapi.from_url(f"{served.url}/openapi.json")
    schema.config.generation.update(
        modes=[schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE]
    )
    auth = {"Authorization": f"Bearer {served.key_all}"}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 9, "every operation of the service is in the document"

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=6,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def check(case: Any) -> None:
            response = case.call(base_url=served.url, headers=auth, timeout=60)
            case.validate_response(response)
            if response.status_code >= 400:
                body = response.json()
                assert isinstance(body["error_code"], int) and body["error_msg"]

        check()
