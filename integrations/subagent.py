"""What sift hands back when it works as the search sub-agent of an orchestrator.

The MCP server (`sift.integrations.mcp`) and the LangChain tool
(`sift.integrations.langchain.create_sift_tool`) say the same thing to the model that
delegates to them: the same description of when to delegate, the same evidence records
(structured, with page numbers where the store knows them) and the same readable text.

    report = SearchReport.of(result)       # a SearchResult as plain records
    text = report.to_text()                # what the orchestrating model reads
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from sift.config import HarnessConfig
from sift.filters import Filter, parse_filter
from sift.integrations.stores.locations import page_number
from sift.types import FoundBy, SearchResult, StopReason, Usage

__all__ = [
    "FILTERS_DESCRIPTION",
    "MAX_TOP_K",
    "QUESTION_DESCRIPTION",
    "SEARCH_TOOL_DESCRIPTION",
    "EvidenceItem",
    "SearchReport",
    "checked_filter",
    "failure_of",
    "not_found_note",
    "page_label",
    "page_numbers",
    "run_config",
]

SEARCH_TOOL_DESCRIPTION = (
    "Delegate a search of the user's own document collection to sift, a retrieval "
    "sub-agent. Give it one self-contained question in natural language, in the user's "
    'language; it may need several hops ("Where was the director of film X born?"). sift '
    "plans several searches (keyword and semantic search, regular-expression grep, reading "
    "whole documents), follows the entities it finds to the next hop, and returns a ranked, "
    "de-duplicated list of passages, each with its document id, title, page where known, the "
    "passage text and why it was kept. It does not answer: read the passages, answer "
    "yourself and cite the document ids. Use it whenever the answer may be in the indexed "
    "documents, rather than guessing or searching one keyword at a time; make one call per "
    'distinct question. Optional: filters on document metadata ({"lang": "en"}, '
    '{"year": {"gte": 2000}}), top_k (how many passages), max_turns (search steps).'
)

QUESTION_DESCRIPTION = "One self-contained question, in the user's language."
FILTERS_DESCRIPTION = (
    'Metadata filter: {"lang": "en"} (equality), {"format": ["markdown", "pdf"]} (any of), '
    '{"page": {"gte": 3, "lte": 5}} (range); keys are and-ed. Fields: the metadata of '
    "documents (files carry lang and format), doc_id, title, and each passage's page and "
    "section."
)
# The most passages one delegated search returns (the CLI's --top-k bound).
MAX_TOP_K = 200


def run_config(config: HarnessConfig, max_turns: int | None) -> HarnessConfig:
    """The settings of one delegated search: the face's, with the call's `max_turns`
    (a ValueError above `max_turns_limit`, which the compiled graph is sized for)."""
    if max_turns is None:
        return config
    if max_turns > config.max_turns_limit:
        raise ValueError(
            f"max_turns={max_turns} is above the limit of {config.max_turns_limit} "
            "(HarnessConfig.max_turns_limit, env SIFT_MAX_TURNS_LIMIT)"
        )
    return config.merged({"max_turns": max_turns})


def checked_filter(spec: Any) -> Filter | None:
    """The metadata filter a model gave, checked by the rules the HTTP API applies
    (`parse_filter`), or a ValueError that shows it and says why."""
    try:
        return parse_filter(spec)
    except (ValueError, TypeError) as exc:
        shown = repr(spec)
        shown = shown if len(shown) <= 200 else shown[:200] + "..."
        raise ValueError(f"filters {shown} are not a valid metadata filter: {exc}") from None


def failure_of(result: SearchResult) -> str | None:
    """The error to report instead of the evidence: set when the episode failed and
    found nothing (a failure with evidence is a result that says it stopped early)."""
    if result.stopped_because == "error" and not result.evidence:
        return f"the search failed: {result.error or 'unknown error'}"
    return None


def not_found_note(missing: list[str]) -> str:
    """What a face says of a result flagged `not_found` (`SearchResult.not_found`): that
    nothing in the corpus matches the question's key terms (no names), or which names the
    question types occur nowhere in it."""
    if not missing:
        return "nothing in the corpus matches the question's key terms"
    quoted = [f"'{name}'" for name in missing]
    if len(quoted) == 1:
        return f"{quoted[0]} occurs nowhere in the corpus"
    return f"{', '.join(quoted[:-1])} and {quoted[-1]} occur nowhere in the corpus"


def page_numbers(metadata: Mapping[str, Any]) -> list[int]:
    """The pages a chunk comes from, read from its metadata (`page`: one number, `pages`:
    a list), in order and without repeats; empty when the store does not know them."""
    found: list[int] = []
    raw = metadata.get("pages")
    values = raw if isinstance(raw, list | tuple) else [raw]
    for value in [metadata.get("page"), *values]:
        page = page_number(value)
        if page is not None and page not in found:
            found.append(page)
    return sorted(found)


def page_label(pages: list[int]) -> str:
    """`p. 3` or `pp. 3, 4`; empty when no page is known."""
    if not pages:
        return ""
    return f"{'p.' if len(pages) == 1 else 'pp.'} {', '.join(map(str, pages))}"


class EvidenceItem(BaseModel):
    """One passage of the evidence, as an orchestrator reads it."""

    rank: int = Field(description="1 is the most relevant.")
    doc_id: str = Field(description="The document's id (read it whole with read_document).")
    chunk_id: str = Field(description="The passage's id: <doc_id>_<index>.")
    title: str
    text: str = Field(description="The passage text.")
    score: float = Field(description="sift's relevance score (higher is better).")
    justification: str = Field(description="Why the passage was kept.")
    found_by: list[FoundBy] = Field(
        description="The tool calls that surfaced the passage (tool, argument, turn)."
    )
    page: int | None = Field(None, description="First page of the passage, where known.")
    pages: list[int] = Field(default_factory=list, description="Every page it spans.")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="The passage's metadata as stored."
    )


class SearchReport(BaseModel):
    """The outcome of one delegated search."""

    question: str
    evidence: list[EvidenceItem]
    stopped_because: StopReason = Field(
        description="final (the policy concluded), max_turns, budget, deadline or error."
    )
    error: str | None = None
    not_found: list[str] | None = Field(
        None,
        description="null when the passages match the question. Otherwise they are only the "
        "nearest text: the names the question types that occur nowhere in the documents "
        "(an option, a variable, a function), or [] when nothing holds enough of the "
        "question's key terms.",
    )
    usage: Usage

    @classmethod
    def of(cls, result: SearchResult, *, top_k: int | None = None) -> SearchReport:
        """The report of a SearchResult, its evidence cut to `top_k` when given."""
        evidence = result.evidence if top_k is None else result.evidence[:top_k]
        items = []
        for rank, item in enumerate(evidence, start=1):
            pages = page_numbers(item.metadata)
            items.append(
                EvidenceItem(
                    rank=rank,
                    doc_id=item.doc_id,
                    chunk_id=item.chunk_id,
                    title=item.title,
                    text=item.text,
                    score=item.score,
                    justification=item.justification,
                    found_by=list(item.found_by),
                    page=pages[0] if pages else None,
                    pages=pages,
                    metadata=dict(item.metadata),
                )
            )
        return cls(
            question=result.question,
            evidence=items,
            stopped_because=result.stopped_because,
            error=result.error,
            not_found=result.not_found,
            usage=result.usage,
        )

    def to_text(self) -> str:
        """The report as the orchestrating model reads it: one block per passage."""
        usage = self.usage
        steps = f"{usage.turns} turns, {usage.tool_calls} tool calls"
        if not self.evidence:
            head = f'sift found no passages for "{self.question}" ({steps}; '
        else:
            count = len(self.evidence)
            noun = "passage" if count == 1 else "passages"
            head = f'sift found {count} {noun} for "{self.question}" ({steps}; '
        lines = [head + f"stopped because {self.stopped_because})."]
        if self.error:
            lines.append(f"error: {self.error}")
        if self.not_found is not None:
            nearest = "; the passages below are only the nearest text" if self.evidence else ""
            lines.append(f"not found: {not_found_note(self.not_found)}{nearest}.")
        for item in self.evidence:
            where = [f"doc {item.doc_id}", f"chunk {item.chunk_id}"]
            if item.pages:
                where.append(page_label(item.pages))
            lines += ["", f"[{item.rank}] {item.title or item.doc_id} ({'; '.join(where)})"]
            if item.justification:
                lines.append(f"why: {item.justification}")
            if item.found_by:
                found = ", ".join(
                    f'{f.tool}("{f.argument}") turn {f.turn}' for f in item.found_by[:3]
                )
                lines.append(f"found by: {found}")
            lines.append(item.text)
        return "\n".join(lines)
