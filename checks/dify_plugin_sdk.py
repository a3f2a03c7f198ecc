"""Checks the Dify plugin with Dify's own SDK against a live `sift serve` (dify_plugin.sh
starts it): the SDK's loader reads manifest.yaml, the provider and the tools (its pydantic
models validate every YAML file) and resolves the classes as the plugin daemon does; then
the provider's credential check and the tools are invoked as Dify invokes them.

    cd integrations/dify-plugin && PYTHONPATH=. python ../../checks/dify_plugin_sdk.py \
        BASE_URL API_KEY    # Python >= 3.12, run by checks/dify_plugin.sh
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

try:
    import yaml
    from dify_plugin import DifyPluginEnv
    from dify_plugin.core.plugin_registration import PluginRegistration
    from dify_plugin.entities.tool import ToolInvokeMessage
    from dify_plugin.errors.tool import ToolProviderCredentialValidationError
except ImportError as exc:  # a Python without Dify's SDK, which needs 3.12: say what to do
    sys.exit(
        f"dify_plugin_sdk.py: {exc.name or exc} is not importable under Python "
        f"{sys.version.split()[0]}: run checks/dify_plugin.sh, which finds a Python 3.12 or "
        "later and installs the plugin's requirements.txt (or set "
        "SIFT_DIFY_PYTHON=/path/to/python3.12)"
    )

failures: list[str] = []


def check(name: str, condition: bool, shown: object = "") -> None:
    print(f"== {'ok  ' if condition else 'FAIL'} {name}")
    if shown:
        print("   ", str(shown)[:300].replace("\n", "\n    "))
    if not condition:
        failures.append(name)


def raises(call: Callable[[], Any], kind: type[BaseException]) -> str:
    try:
        call()
    except kind as exc:
        return str(exc)
    return "(no error)"


def labels(node: object, path: str = "") -> list[str]:
    """Paths of every en_US text in a YAML tree that has no ja_JP beside it."""
    missing = []
    if isinstance(node, dict):
        if "en_US" in node and "ja_JP" not in node:
            missing.append(path)
        for key, value in node.items():
            missing += labels(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            missing += labels(value, f"{path}[{index}]")
    return missing


def run(tool: Any, parameters: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    messages = list(tool.invoke(parameters))
    text = [m.message.text for m in messages if m.type == ToolInvokeMessage.MessageType.TEXT]
    data = [m.message.json_object for m in messages if m.type == ToolInvokeMessage.MessageType.JSON]
    assert len(text) == 1 and len(data) == 1, messages
    return text[0], data[0]


def main() -> None:
    base_url, key = sys.argv[1], sys.argv[2]
    good = {"base_url": base_url, "api_key": key}

    registration = PluginRegistration(DifyPluginEnv())
    manifest = registration.configuration
    (provider_config,) = registration.tools_configuration
    tools = {t.identity.name: t for t in provider_config.tools}
    check(
        "the SDK loads manifest.yaml, provider/sift.yaml and the tools' YAML",
        manifest.name == "sift" and set(tools) == {"search", "read_document"},
        f"plugin {manifest.name} {manifest.version}, runner Python "
        f"{manifest.meta.runner.version}; tools {sorted(tools)}",
    )
    untranslated = []
    for path in (
        "manifest.yaml",
        "provider/sift.yaml",
        "tools/search.yaml",
        "tools/read_document.yaml",
    ):
        with open(path, encoding="utf-8") as file:
            untranslated += [f"{path}{p}" for p in labels(yaml.safe_load(file))]
    check("every label and description has ja_JP beside en_US", not untranslated, untranslated)
    check(
        "the SDK resolves the provider and tool classes from their sources",
        registration.get_tool_provider_cls("sift") is not None
        and all(registration.get_tool_cls("sift", name) for name in tools),
    )

    provider = registration.get_tool_provider_cls("sift")()
    provider.validate_credentials(good)
    check("the provider accepts the server's key (GET /v1/collections)", True)
    wrong = raises(
        lambda: provider.validate_credentials({**good, "api_key": "not-the-key"}),
        ToolProviderCredentialValidationError,
    )
    check("the provider refuses a wrong key, saying so", "refused the API key" in wrong, wrong)
    away = raises(
        lambda: provider.validate_credentials({**good, "base_url": "http://127.0.0.1:9"}),
        ToolProviderCredentialValidationError,
    )
    check("the provider names an unreachable server", "could not reach sift" in away, away)

    search = registration.get_tool_cls("sift", "search").from_credentials(good)
    read = registration.get_tool_cls("sift", "read_document").from_credentials(good)

    question = "Where was the engineer whose company built the Eiffel Tower born?"
    text, data = run(search, {"question": question, "collection": "docs", "top_k": 5})
    first = data["evidence"][0]
    check(
        "search (English): the bridge document first, with its provenance, not flagged",
        first["doc_id"] == "gustave"
        and first["found_by"]
        and "doc_id: gustave" in text
        and data["not_found"] is None
        and "Not found" not in text,
        text.split("\n\n")[0],
    )
    text, data = run(search, {"question": "日本で一番高い山の標高は？", "collection": "docs"})
    check(
        "search (Japanese): 富士山 first",
        data["evidence"][0]["doc_id"] == "fuji" and "3776" in data["evidence"][0]["text"],
        text.split("\n\n")[0],
    )
    for question, flagged, said in [
        ("What does --frobnicate-depth control?", ["--frobnicate-depth"], "'--frobnicate-depth'"),
        ("--frobnicate-depth は何を制御しますか？", ["--frobnicate-depth"], "'--frobnicate-depth'"),
        ("How do I bake a sourdough loaf with rye flour?", [], "Nothing in the collection"),
        ("ライ麦粉でサワードウを焼くには？", [], "Nothing in the collection"),
    ]:
        text, data = run(search, {"question": question, "collection": "docs", "top_k": 3})
        check(
            f"search not found ({question}): not_found {flagged}, said before the passages",
            data["not_found"] == flagged
            and bool(data["evidence"])
            and text.startswith(f"Not found: {said}")
            and "only the nearest text" in text.split("\n\n")[0],
            text.split("\n\n")[0],
        )
    text, data = run(
        search,
        {
            "question": "売上高は何%増えましたか",
            "collection": "docs",
            "top_k": 3,
            "filters": '{"kind": "report"}',
            "mode": "single_shot",
        },
    )
    records = data["evidence"]
    check(
        "search with a filter: only the report, each record with page and section",
        records
        and all(r["doc_id"] == "report" for r in records)
        and all(r["page"] and r["section"] for r in records)
        and "p. " in text
        and "§ " in text,
        text.split("\n\n")[0],
    )
    text, data = run(read, {"doc_id": "report", "collection": "docs", "max_chunks": 100})
    passages = data["passages"]
    check(
        "read_document: the passages in order, pages 1 to 3, sections as recorded",
        len(passages) > 3
        and [p["index"] for p in passages] == list(range(len(passages)))
        and {p["page"] for p in passages} == {1, 2, 3}
        and passages[0]["section"] == "Overview"
        and passages[-1]["section"] == "Results > Revenue",
        f"{len(passages)} passages; last: {json.dumps(passages[-1], ensure_ascii=False)[:200]}",
    )
    unknown = raises(lambda: run(search, {"question": "x", "collection": "nowhere"}), ValueError)
    check("an unknown collection is named", "Unknown collection" in unknown, unknown)
    missing = raises(lambda: run(read, {"doc_id": "nothing", "collection": "docs"}), ValueError)
    check("an unknown document is named", "No such document" in missing, missing)
    bad = raises(
        lambda: run(search, {"question": "x", "collection": "docs", "filters": "[1]"}), ValueError
    )
    check("filters that are not a JSON object are refused", "JSON object" in bad, bad)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
