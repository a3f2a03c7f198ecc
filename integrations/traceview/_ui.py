"""The /ui page of `sift serve`: a search form over the service's own API.

The page holds no data and no key: it asks the person for an API key (kept in the tab's
sessionStorage, sent as `Authorization: Bearer` on every API call, exactly as any client),
lists the collections that key may use, streams a search's progress from `POST /v1/search`
(server-sent events) and draws the finished episode with the trace pages' own renderer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from sift.integrations.traceview._page import page

__all__ = ["UiPage", "ui_page"]

_BODY = """\
<header class="header"><h1>sift</h1><span class="muted">agentic search over this
server's collections; every request uses your API key</span></header>
<form class="ui card" id="search-form" autocomplete="off">
  <label>API key (kept in this tab only)
    <input type="password" id="api-key" placeholder="Bearer key" spellcheck="false"
      autocomplete="new-password"></label>
  <label>Collection <select id="collection" required></select></label>
  <label>top_k <input type="number" id="top-k" min="1" value="10"></label>
  <label>max turns <input type="number" id="max-turns" min="1" placeholder="default"></label>
  <label>rollouts <input type="number" id="rollouts" min="1" value="1"></label>
  <label class="wide">Question
    <textarea id="question" required placeholder="Ask a multi-hop question"></textarea></label>
  <button type="button" id="reload" class="secondary">Reload collections</button>
  <button type="submit" id="run">Search</button>
</form>
<div id="status" class="status" role="status" aria-live="polite"></div>
<details id="progress" class="card" hidden>
  <summary><b>Progress</b> <span id="progress-count" class="muted"></span></summary>
  <div id="live-chart"></div>
  <div id="log" class="log" data-lines="0"></div>
</details>
<main id="sift-trace"></main>"""


@dataclass(frozen=True)
class UiPage:
    html: str
    # Sent with the page: the policy again (frame-ancestors only works as a header) and
    # no framing, no caching, no referrer.
    headers: dict[str, str] = field(default_factory=dict)


@cache
def ui_page() -> UiPage:
    document, policy = page(
        title="sift", body=_BODY, scripts=["trace.js", "ui.js"], connect_self=True
    )
    return UiPage(
        html=document,
        headers={
            "Content-Security-Policy": policy + "; frame-ancestors 'none'",
            "X-Frame-Options": "DENY",
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
        },
    )
