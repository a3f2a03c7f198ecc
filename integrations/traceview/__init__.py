"""See an episode: self-contained HTML trace pages, their index pages, and the /ui page.

- `render_trace_html(result | rollout results, *, fused, tiers, gold, title, back_link)`
  and `write_trace_html(path, ...)`: one episode as one page (inline CSS and JS, no
  network): the question, `stopped_because`, each turn's tool calls (arguments, chunks
  added and pruned, errors, wall time), the context-token curve against the threshold,
  rejection and budget lines, the evidence linked to the calls that found it, and several
  rollouts side by side with their fusion.
- `TraceFolder`: a batch's pages and their `index.html`; `render_index_html` for any index.
- `ui_page()`: the page `sift serve` serves at /ui.
- `asearch_rollouts`: `sift.graphs.asearch` keeping each rollout's result for the page.

The pages embed the episode as JSON and draw it with one script, the same one /ui runs on
the result it streams from the API, so a file and the service show an episode alike.
"""

from __future__ import annotations

from sift.integrations.traceview._folder import INDEX_PAGE, TraceFolder
from sift.integrations.traceview._index import IndexRow, page_file_name, render_index_html
from sift.integrations.traceview._rollouts import RolloutRun, asearch_rollouts
from sift.integrations.traceview._trace import (
    TokenTiers,
    render_trace_html,
    trace_payload,
    write_trace_html,
)
from sift.integrations.traceview._ui import UiPage, ui_page

__all__ = [
    "INDEX_PAGE",
    "IndexRow",
    "RolloutRun",
    "TokenTiers",
    "TraceFolder",
    "UiPage",
    "asearch_rollouts",
    "page_file_name",
    "render_index_html",
    "render_trace_html",
    "trace_payload",
    "ui_page",
    "write_trace_html",
]
