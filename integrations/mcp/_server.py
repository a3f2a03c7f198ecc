"""The MCP server: sift's tools and document resources on the official SDK's MCPServer.

Every tool runs its store work off the event loop, answers a structured result (with
an output schema) and a readable text block, and turns every failure into a tool error
(`isError`) with a message that says what was wrong: the server keeps serving.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError
from pydantic_core import ErrorDetails

from sift import __version__
from sift.config import HarnessConfig
from sift.errors import SiftError
from sift.graphs import asearch
from sift.integrations.mcp._progress import ProgressRelay
from sift.integrations.mcp._reports import ChunkItem, DocumentReport, GrepReport
from sift.integrations.mcp._resources import register_documents
from sift.integrations.subagent import (
    FILTERS_DESCRIPTION,
    MAX_TOP_K,
    QUESTION_DESCRIPTION,
    SEARCH_TOOL_DESCRIPTION,
    SearchReport,
    checked_filter,
    failure_of,
    run_config,
)
from sift.nodes import check_question
from sift.protocols import Corpus, Policy

__all__ = ["create_server"]

log = logging.getLogger("sift.mcp")

MAX_GREP_HITS = 100
MAX_READ_CHUNKS = 200

_T = TypeVar("_T")
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]

FiltersArgument = Annotated[dict[str, Any] | None, Field(description=FILTERS_DESCRIPTION)]
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def _result(report: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=report.model_dump(mode="json"),
    )


async def _guarded(tool: str, work: Callable[[], Awaitable[_T]]) -> _T:
    """Runs a tool body; every failure becomes a tool error whose message the model can
    act on (the SDK would hide an unexpected one behind "Error executing tool")."""
    try:
        return await work()
    except ToolError:
        raise
    except (SiftError, ValueError) as exc:
        raise ToolError(str(exc)) from exc
    except Exception as exc:
        log.exception("sift %s failed", tool)
        raise ToolError(f"{tool} failed: {type(exc).__name__}: {exc}") from exc


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _argument_problem(error: ErrorDetails) -> str:
    """One argument's problem in a few words naming it: never pydantic's report, whose
    type codes, input dump and documentation URL a model cannot act on."""
    name = ".".join(str(part) for part in error["loc"]) or "the arguments"
    kind = error["type"]
    if kind == "missing":
        return f"{name} is required"
    if kind == "string_too_short" and error.get("ctx", {}).get("min_length") == 1:
        return f"{name} is empty"
    message = str(error["msg"]).removeprefix("Value error, ")
    if message.startswith("Input should be "):
        message = "must be " + message.removeprefix("Input should be ")
    elif message.startswith("String should "):
        message = "must " + message.removeprefix("String should ")
    return f"{name} {message} (got {_shown(error.get('input'))})"


class _SiftServer(MCPServer[Any]):
    """The SDK's server, with arguments its schema refuses answered in short."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            problems = "; ".join(_argument_problem(e) for e in cause.errors()[:3])
            # From the validation error still: the SDK logs its field names, not values.
            raise ToolError(f"Error executing tool {name}: {problems}") from cause


def _describe_store(corpus: Corpus) -> str:
    try:
        stats = corpus.stats()
    except Exception as exc:  # the server still starts; calls will say what is wrong
        log.warning("could not read the store's statistics: %s", exc)
        return "a sift store"
    return (
        f"{stats.documents:,} documents ({stats.chunks:,} passages) in the {stats.backend} "
        f"store at {stats.location}"
    )


def create_server(
    corpus: Corpus,
    policy: Policy | None = None,
    *,
    config: HarnessConfig | None = None,
    top_k: int = 10,
    name: str = "sift",
    log_level: LogLevel = "WARNING",
) -> MCPServer[Any]:
    """An MCP server over `corpus`: the tools `search` (one agentic episode driven by
    `policy`, default the heuristic planner), `read_document` and `grep`, and every
    document as the resource `sift://doc/{+doc_id}` (listed by `resources/list`).

    `config` holds the episode limits (a call may lower or raise `max_turns` up to
    `max_turns_limit`); `top_k` is the evidence size when a call does not give one.
    `log_level` is the SDK's logging (to stderr: stdout carries the stdio transport).
    """
    if not 1 <= top_k <= MAX_TOP_K:
        raise ValueError(f"top_k must be between 1 and {MAX_TOP_K}; got {top_k}")
    settings = config if config is not None else HarnessConfig()
    default_top_k = top_k
    store = _describe_store(corpus)
    server: MCPServer[Any] = _SiftServer(
        name,
        title="sift: agentic search over your documents",
        version=__version__,
        log_level=log_level,
        instructions=(
            f"sift searches {store}. Delegate any question whose answer may be in these "
            "documents to the `search` tool: it runs a multi-step search and returns ranked "
            "passages with document ids and justifications (it does not answer). Use "
            "`read_document` to read a document whole and `grep` for exact strings."
        ),
    )

    @server.tool(
        name="search",
        title="Search the documents (sift sub-agent)",
        description=SEARCH_TOOL_DESCRIPTION,
        annotations=_READ_ONLY,
    )
    async def search(
        ctx: Context,
        question: Annotated[
            str,
            Field(min_length=1, description=QUESTION_DESCRIPTION),
        ],
        filters: FiltersArgument = None,
        top_k: Annotated[
            int | None,
            Field(ge=1, le=MAX_TOP_K, description="Passages to return (default: the server's)."),
        ] = None,
        max_turns: Annotated[
            int | None,
            Field(ge=1, le=1000, description="Most search steps (default: the server's)."),
        ] = None,
    ) -> Annotated[CallToolResult, SearchReport]:
        async def work() -> CallToolResult:
            check_question(question, settings.max_question_chars)
            run = run_config(settings, max_turns)
            size = top_k if top_k is not None else default_top_k
            spec = checked_filter(filters)
            relay = ProgressRelay(ctx.report_progress, run.max_turns)
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(relay.run)
                    try:
                        result = await asearch(
                            question,
                            corpus,
                            policy=policy,
                            config=run,
                            filters=spec,
                            top_k=size,
                            on_event=relay,
                        )
                    finally:
                        relay.close()
            except anyio.get_cancelled_exc_class():
                # The client cancelled the request: the episode's graph is cancelled with
                # it, so no further turn (and no further store call) starts.
                log.info("search cancelled by the client: %r", question[:80])
                raise
            failed = failure_of(result)
            if failed:
                raise ToolError(failed)
            report = SearchReport.of(result, top_k=size)
            return _result(report, report.to_text())

        return await _guarded("search", work)

    @server.tool(
        name="read_document",
        title="Read a document",
        description="The passages of one document in order (its id comes from a search "
        "result), from start_chunk on; next_chunk says where to continue a long document.",
        annotations=_READ_ONLY,
    )
    async def read_document(
        doc_id: Annotated[str, Field(min_length=1, description="The document's id.")],
        start_chunk: Annotated[int, Field(ge=0, description="First passage to return.")] = 0,
        max_chunks: Annotated[
            int, Field(ge=1, le=MAX_READ_CHUNKS, description="Most passages to return.")
        ] = 20,
    ) -> Annotated[CallToolResult, DocumentReport]:
        async def work() -> CallToolResult:
            chunks = await anyio.to_thread.run_sync(corpus.read, doc_id)
            if not chunks:
                raise ToolError(f"no document with id {doc_id!r} in the store")
            if start_chunk >= len(chunks):
                raise ToolError(
                    f"start_chunk={start_chunk} is past the end: document {doc_id!r} has "
                    f"{len(chunks)} passages (0 to {len(chunks) - 1})"
                )
            report = DocumentReport.of(doc_id, chunks, start_chunk, max_chunks)
            return _result(report, report.to_text())

        return await _guarded("read_document", work)

    @server.tool(
        name="grep",
        title="Find exact text",
        description="Passages whose text matches a regular expression (RE2 syntax, e.g. "
        r"'born (in|at) [A-Z]\w+'; case-sensitive unless it starts with (?i)). For exact "
        "names, numbers and phrases; use search for questions.",
        annotations=_READ_ONLY,
    )
    async def grep(
        pattern: Annotated[str, Field(min_length=1, description="RE2 regular expression.")],
        limit: Annotated[
            int, Field(ge=1, le=MAX_GREP_HITS, description="Most passages to return.")
        ] = 10,
        filters: FiltersArgument = None,
    ) -> Annotated[CallToolResult, GrepReport]:
        async def work() -> CallToolResult:
            spec = checked_filter(filters)
            found = await anyio.to_thread.run_sync(
                lambda: corpus.grep(pattern, k=limit, filters=spec)
            )
            report = GrepReport(
                pattern=pattern, hits=[ChunkItem.of(h.chunk) for h in found.hits], note=found.note
            )
            return _result(report, report.to_text())

        return await _guarded("grep", work)

    register_documents(server, corpus)
    return server
