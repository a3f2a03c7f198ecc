"""sift as an MCP server: the search sub-agent of an orchestrator (Claude, GPT, Kimi...).

    from sift import open_store
    from sift.integrations.mcp import create_server, serve

    server = create_server(open_store("~/.sift/store", create=False))
    anyio.run(serve, server)                       # stdio; or transport="streamable-http"

or, from the command line, `sift mcp` (stdio) and `sift mcp --transport streamable-http`.
Needs the `mcp` extra: `pip install 'sift-harness[mcp]'`.

Tools (each answers structured content with an output schema, and a text block):
- `search(question, filters?, top_k?, max_turns?)`: one agentic episode; a
  `SearchReport` (ranked evidence with doc and chunk ids, title, text, justification,
  found_by, page where known; stopped_because; not_found, when the documents do not
  match the question; usage). Progress notifications per turn and per tool call when
  the client sends a progress token; cancelling the request stops the episode.
- `read_document(doc_id, start_chunk?, max_chunks?)`: a `DocumentReport`.
- `grep(pattern, limit?, filters?)`: a `GrepReport` (RE2 syntax, linear time).
Resources: every document, listed by `resources/list` (pages of 100, with title and
mime type) and read by the template `sift://doc/{+doc_id}` (the id as written, slashes
and Unicode included), a document's whole text.
"""

from __future__ import annotations

from sift.integrations.mcp._reports import ChunkItem, DocumentReport, GrepReport, document_uri
from sift.integrations.mcp._serve import Transport, serve
from sift.integrations.mcp._server import create_server
from sift.integrations.subagent import EvidenceItem, SearchReport

__all__ = [
    "ChunkItem",
    "DocumentReport",
    "EvidenceItem",
    "GrepReport",
    "SearchReport",
    "Transport",
    "create_server",
    "document_uri",
    "serve",
]
