from collections.abc import Generator
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage
from sift_api import SiftApiError, SiftClient, location, parse_filters, place_label


def evidence_records(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per passage of a SearchResult, most relevant first, with its place."""
    records = []
    for rank, passage in enumerate(result.get("evidence", []), start=1):
        metadata = passage.get("metadata") or {}
        records.append(
            {
                "rank": rank,
                "doc_id": passage["doc_id"],
                "chunk_id": passage["chunk_id"],
                "title": passage.get("title", ""),
                "text": passage["text"],
                "score": passage.get("score"),
                **location(metadata),
                "justification": passage.get("justification", ""),
                "found_by": passage.get("found_by", []),
                "metadata": metadata,
            }
        )
    return records


def not_found(flags: list[str]) -> list[str] | None:
    """What sift flagged as not found (its `SearchResult.not_found`): None when the
    evidence matches the question; else the names the question types that occur nowhere
    in the collection (`not_found:<name>`), or [] when nothing holds enough of the
    question's key terms (`not_found`)."""
    missing = [f.split(":", 1)[1] for f in flags if f.startswith("not_found:")]
    return missing if missing or "not_found" in flags else None


def not_found_note(missing: list[str]) -> str:
    """The sentence that says so, before the passages (then only the nearest text)."""
    if not missing:
        said = "Nothing in the collection matches the question's key terms"
    elif len(missing) == 1:
        said = f"'{missing[0]}' occurs nowhere in the collection"
    else:
        quoted = [f"'{name}'" for name in missing]
        said = f"{', '.join(quoted[:-1])} and {quoted[-1]} occur nowhere in the collection"
    return f"Not found: {said}; the passages below are only the nearest text."


def as_text(records: list[dict[str, Any]], empty: str, missing: list[str] | None = None) -> str:
    """The records as an agent reads them: a numbered block per passage, after a line
    saying the question was not found when sift flagged it so."""
    if not records:
        return empty
    blocks = [] if missing is None else [not_found_note(missing)]
    for number, record in enumerate(records, start=1):
        place = place_label(record)
        head = f"[{number}] {record['title'] or record['doc_id']} (doc_id: {record['doc_id']}"
        head += f"; {place})" if place else ")"
        block = f"{head}\n{record['text']}"
        if record.get("justification"):
            block += f"\nWhy: {record['justification']}"
        blocks.append(block)
    return "\n\n".join(blocks)


class SearchTool(Tool):
    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage]:
        collection = str(tool_parameters.get("collection") or "").strip()
        question = str(tool_parameters.get("question") or "").strip()
        if not collection or not question:
            raise ValueError("the search needs a collection and a question")
        try:
            client = SiftClient.of(self.runtime.credentials)
            result = client.search(
                collection,
                question,
                top_k=int(tool_parameters.get("top_k") or 10),
                filters=parse_filters(tool_parameters.get("filters")),
                mode=str(tool_parameters.get("mode") or "agentic"),
            )
        except (SiftApiError, ValueError) as exc:
            raise ValueError(str(exc)) from None
        records = evidence_records(result)
        missing = not_found(result.get("flags") or [])
        empty = "No passage found for the question."
        yield self.create_text_message(as_text(records, empty, missing))
        yield self.create_json_message(
            {
                "collection": collection,
                "question": question,
                "stopped_because": result.get("stopped_because"),
                "degraded": "degraded" in (result.get("flags") or []),
                "not_found": missing,
                "evidence": records,
            }
        )
