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


def as_text(records: list[dict[str, Any]], empty: str) -> str:
    """The records as an agent reads them: a numbered block per passage."""
    if not records:
        return empty
    blocks = []
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
        yield self.create_text_message(as_text(records, "No passage found for the question."))
        yield self.create_json_message(
            {
                "collection": collection,
                "question": question,
                "stopped_because": result.get("stopped_because"),
                "degraded": "degraded" in (result.get("flags") or []),
                "evidence": records,
            }
        )
