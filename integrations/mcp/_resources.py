"""The store's documents as MCP resources: listed (paged, with title and mime type) by
`resources/list`, read by `sift://doc/{+doc_id}`.

The template uses RFC 6570 reserved expansion (`{+doc_id}`), so an id holding slashes
reads as written (`sift://doc/reports/2024/決算.pdf`, non-ASCII percent-encoded or not);
`document_uri` encodes what reserved expansion would not (`?`, `#`, `%`, spaces...).
Document ids are keys, not paths: the SDK's path checks do not apply to them.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
from typing import Any

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer, ResourceSecurity
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ListResourcesResult, Resource

from sift.integrations.mcp._reports import URI_PREFIX, DocumentReport, document_uri
from sift.integrations.stores.catalog import DocumentCatalog, DocumentInfo
from sift.protocols import Corpus

__all__ = ["PAGE_SIZE", "register_documents"]

PAGE_SIZE = 100
MIME_TYPE = "text/markdown"
TEMPLATE = URI_PREFIX + "{+doc_id}"
TEMPLATE_DESCRIPTION = (
    "The whole text of one document, passage by passage, each passage with its page and "
    "section where known. doc_id is the document's id as search results give it, "
    "written as is after sift://doc/: it may hold slashes (reports/2024/q3.pdf) and any "
    "Unicode (議事録/梅雨.md); percent-encode only ?, #, % and spaces."
)


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


# Our cursors are ~30 characters; a longer one was not made here, and decoding it could
# recurse (a deeply nested array) or hold megabytes.
MAX_CURSOR_CHARS = 200
# Beyond what islice accepts (sys.maxsize), and far beyond any store.
MAX_OFFSET = 2**53


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    offset: object = None
    if len(cursor) <= MAX_CURSOR_CHARS:
        try:
            offset = json.loads(base64.urlsafe_b64decode(cursor.encode()))["offset"]
        except (binascii.Error, ValueError, KeyError, TypeError, RecursionError):
            # ValueError covers UnicodeError and over-long integers.
            offset = None
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= MAX_OFFSET:
        raise MCPError(
            code=INVALID_PARAMS,
            message="invalid cursor: pass the nextCursor of the previous resources/list page",
        )
    return offset


def _resource(info: DocumentInfo) -> Resource:
    meta = info.metadata
    details = [f"{info.chunks:,} passages"]
    if isinstance(meta.get("page_count"), int):
        details.insert(0, f"{meta['page_count']:,} pages")
    if isinstance(meta.get("format"), str):
        details.insert(0, meta["format"])
    return Resource(
        uri=document_uri(info.doc_id),
        name=info.doc_id,
        title=info.title or info.doc_id,
        description=", ".join(details),
        mime_type=MIME_TYPE,
    )


def _page(corpus: Corpus, offset: int, size: int) -> tuple[list[Resource], bool]:
    if not isinstance(corpus, DocumentCatalog):
        return [], False
    # One past the page, to know whether another page follows.
    infos = list(itertools.islice(corpus.documents(), offset, offset + size + 1))
    return [_resource(i) for i in infos[:size]], len(infos) > size


def register_documents(
    server: MCPServer[Any], corpus: Corpus, *, page_size: int = PAGE_SIZE
) -> None:
    """Adds the document template and the listing of every document to `server`."""

    @server.resource(
        TEMPLATE,
        name="document",
        title="A document of the store",
        description=TEMPLATE_DESCRIPTION,
        mime_type=MIME_TYPE,
        security=ResourceSecurity(reject_path_traversal=False, reject_absolute_paths=False),
    )
    async def document(doc_id: str) -> str:
        chunks = await anyio.to_thread.run_sync(corpus.read, doc_id)
        if not chunks:
            raise ResourceNotFoundError(f"no document with id {doc_id!r} in the store")
        return DocumentReport.of(doc_id, chunks, 0, len(chunks)).to_text()

    async def list_documents(
        ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        # The SDK's own handler runs first (initialisation gate, params validation, any
        # static resource); its page is then replaced by the store's documents.
        result = await call_next(ctx)
        if ctx.method != "resources/list":
            return result
        # The handler's answer in its wire form (a dict, camelCase keys), or its model.
        wire = (
            result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if isinstance(result, ListResourcesResult)
            else result
        )
        if not isinstance(wire, dict):
            return result
        params = ctx.params or {}
        offset = _offset(params.get("cursor"))
        listed, more = await anyio.to_thread.run_sync(_page, corpus, offset, page_size)
        static = (wire.get("resources") or []) if offset == 0 else []
        wire["resources"] = [
            *static,
            *(r.model_dump(by_alias=True, mode="json", exclude_none=True) for r in listed),
        ]
        wire.pop("nextCursor", None)
        if more:
            wire["nextCursor"] = _cursor(offset + page_size)
        return wire

    server.middleware.append(list_documents)
