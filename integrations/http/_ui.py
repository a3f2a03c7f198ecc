"""GET /ui: the search page for people, served beside the API it calls.

The page carries no data and needs no key to load: every search and collection listing it
makes is an API request with the bearer key the person types in, checked like any other.
It is left out of the OpenAPI document, as /docs is: a page, not an API operation.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from sift.integrations.traceview import ui_page

__all__ = ["router"]

router = APIRouter()


@router.get("/ui", include_in_schema=False, response_class=HTMLResponse)
async def ui() -> HTMLResponse:
    built = ui_page()
    return HTMLResponse(built.html, headers=built.headers)
