from collections.abc import Generator
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage
from sift_api import SiftApiError, SiftClient
from tools.search import as_text


class ReadDocumentTool(Tool):
    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage]:
        collection = str(tool_parameters.get("collection") or "").strip()
        doc_id = str(tool_parameters.get("doc_id") or "").strip()
        if not collection or not doc_id:
            raise ValueError("reading a document needs a collection and a doc_id")
        try:
            client = SiftClient.of(self.runtime.credentials)
            answer = client.read_document(
                collection, doc_id, limit=int(tool_parameters.get("max_chunks") or 50)
            )
        except (SiftApiError, ValueError) as exc:
            raise ValueError(str(exc)) from None
        records = [
            {
                k: passage.get(k)
                for k in (
                    "doc_id",
                    "chunk_id",
                    "index",
                    "title",
                    "text",
                    "page",
                    "pages",
                    "section",
                    "metadata",
                )
            }
            for passage in answer.get("chunks", [])
        ]
        text = as_text(records, f"Document {doc_id!r} has no passages.")
        if answer.get("next_offset") is not None:
            text += f"\n\n(first {len(records)} of {answer['total_chunks']} passages)"
        yield self.create_text_message(text)
        yield self.create_json_message(
            {
                "collection": collection,
                "doc_id": doc_id,
                "title": answer.get("title", ""),
                "total_chunks": answer.get("total_chunks"),
                "passages": records,
            }
        )
