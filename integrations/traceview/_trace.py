"""One episode as a self-contained HTML page.

The page embeds the episode as JSON and draws it with the package's script, the same script
/ui uses on the result it streams from the API: one renderer for files and the service.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sift.integrations.traceview._page import page
from sift.types import SearchResult

if TYPE_CHECKING:
    from sift.graphs import HarnessConfig

__all__ = [
    "TokenTiers",
    "episode_results",
    "render_trace_html",
    "trace_payload",
    "write_trace_html",
]

# A link back to an index page: a sibling or parent file name, never a URL.
_RELATIVE_PAGE = re.compile(r"^[\w.\-/]+\.html$")


class TokenTiers(BaseModel):
    """The budget lines drawn under the context-token curve (DESIGN "Budget tiers")."""

    model_config = ConfigDict(frozen=True)

    threshold: int = Field(ge=1)
    rejection: int = Field(ge=1)
    budget: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> TokenTiers:
        if not self.threshold <= self.rejection <= self.budget:
            raise ValueError(
                "token tiers must satisfy threshold <= rejection <= budget; got "
                f"{self.threshold}, {self.rejection}, {self.budget}"
            )
        return self

    @classmethod
    def of(cls, config: HarnessConfig | None = None) -> TokenTiers:
        """The tiers of `config`, by default of `HarnessConfig()` (the environment's)."""
        if config is None:
            from sift.graphs import HarnessConfig

            config = HarnessConfig()
        return cls(
            threshold=config.threshold_tokens,
            rejection=config.rejection_tokens,
            budget=config.budget_tokens,
        )


def episode_results(
    result: SearchResult | Sequence[SearchResult], fused: SearchResult | None
) -> tuple[SearchResult, list[SearchResult]]:
    """(the result to show, the rollouts beside it: empty for a single episode)."""
    if isinstance(result, SearchResult):
        return (fused or result), []
    rollouts = list(result)
    if not rollouts:
        raise ValueError("render_trace_html needs a SearchResult or a non-empty list of them")
    if not all(isinstance(r, SearchResult) for r in rollouts):
        raise TypeError("render_trace_html takes SearchResult objects")
    if len(rollouts) == 1:
        return (fused or rollouts[0]), []
    if fused is None:
        from sift.graphs import merge_rollouts

        fused = merge_rollouts(rollouts[0].question, rollouts)
    return fused, rollouts


Gold = Iterable[str] | Mapping[str, Iterable[str]]


def _gold(gold: Gold | None) -> list[dict[str, Any]] | None:
    """[{id, aliases}]: each gold doc id and the ids that count as it (itself first)."""
    if gold is None:
        return None
    if isinstance(gold, Mapping):
        return [
            {"id": g, "aliases": list(dict.fromkeys([g, *aliases]))} for g, aliases in gold.items()
        ]
    return [{"id": g, "aliases": [g]} for g in dict.fromkeys(gold)]


def trace_payload(
    result: SearchResult | Sequence[SearchResult],
    *,
    fused: SearchResult | None = None,
    tiers: TokenTiers | None = None,
    gold: Gold | None = None,
    back_link: str | None = None,
) -> dict[str, Any]:
    """The JSON the page's script draws (also what /ui assembles from the stream)."""
    shown, rollouts = episode_results(result, fused)
    if back_link is not None and not _RELATIVE_PAGE.match(back_link):
        raise ValueError(f"back_link must be a relative .html file name; got {back_link!r}")
    return {
        "version": 1,
        "result": shown.model_dump(mode="json"),
        "rollouts": [r.model_dump(mode="json") for r in rollouts],
        "tiers": (tiers or TokenTiers.of()).model_dump(),
        "gold": _gold(gold),
        "back_link": back_link,
    }


def render_trace_html(
    result: SearchResult | Sequence[SearchResult],
    *,
    fused: SearchResult | None = None,
    tiers: TokenTiers | None = None,
    gold: Gold | None = None,
    title: str | None = None,
    back_link: str | None = None,
) -> str:
    """A self-contained HTML page of one episode (no network: inline CSS and JS).

    `result` is one `SearchResult`, or the results of independent rollouts: those are
    shown side by side with `fused` (by default their reciprocal-rank fusion). `tiers`
    are the budget lines of the token chart (default: `HarnessConfig()`'s). `gold` doc ids
    (or a mapping gold id -> the near-duplicates that count as it) are marked wherever
    they appear, and the page says where each one went (evaluation). `back_link` points
    to an index page.
    """
    data = trace_payload(result, fused=fused, tiers=tiers, gold=gold, back_link=back_link)
    question = data["result"]["question"]
    short = question if len(question) <= 80 else question[:79] + "…"
    body = (
        "<noscript><p>This page draws the trace with JavaScript; the episode itself is the "
        "JSON in the element #sift-trace-data.</p></noscript>\n"
        '<main id="sift-trace"></main>'
    )
    document, _ = page(title=title or f"sift: {short}", body=body, scripts=["trace.js"], data=data)
    return document


def write_trace_html(
    path: str | Path,
    result: SearchResult | Sequence[SearchResult],
    *,
    fused: SearchResult | None = None,
    tiers: TokenTiers | None = None,
    gold: Gold | None = None,
    title: str | None = None,
    back_link: str | None = None,
) -> Path:
    """Writes `render_trace_html(...)` to `path` (parent folders created) and returns it."""
    target = Path(path)
    document = render_trace_html(
        result, fused=fused, tiers=tiers, gold=gold, title=title, back_link=back_link
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(document, encoding="utf-8")
    return target
