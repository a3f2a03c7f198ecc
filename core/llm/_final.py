"""Reading a model's final answer: Context-1's `<Document id=...>` blocks with their
`<Justification>`, else a plain list of ids the episode has seen."""

from __future__ import annotations

import re
from collections.abc import Iterable

from sift.types import FinalDocument

__all__ = ["parse_final"]

_DOCUMENT = re.compile(
    r"<Document\s+id\s*=\s*(?:\"([^\"]+)\"|'([^']+)'|([^\s>]+))\s*/?>"
    r"(.*?)(?=<Document\s+id\s*=|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_JUSTIFICATION = re.compile(
    r"<Justification>\s*(.*?)\s*(?:</Justification>|</Document>|\Z)", re.DOTALL | re.IGNORECASE
)
_CLOSE_TAGS = re.compile(r"</?(?:Document|Justification)>", re.IGNORECASE)
_ID_TOKEN = re.compile(r"[^\s,;\[\]\"'`()<>]+")


def _documents(text: str) -> list[FinalDocument]:
    out: list[FinalDocument] = []
    seen: set[str] = set()
    for match in _DOCUMENT.finditer(text):
        doc_id = next(g for g in match.groups()[:3] if g).strip().rstrip(",.;")
        if doc_id in seen:
            continue
        seen.add(doc_id)
        body = match.group(4)
        just = _JUSTIFICATION.search(body)
        reason = just.group(1) if just else _CLOSE_TAGS.split(body)[0]
        out.append(FinalDocument(id=doc_id, justification=" ".join(reason.split())))
    return out


def _id_list(text: str, known: Iterable[str]) -> list[FinalDocument]:
    known_set = set(known)
    if not known_set:
        return []
    out: list[str] = []
    for token in _ID_TOKEN.findall(text):
        token = token.strip(".:*#")
        if token in known_set and token not in out:
            out.append(token)
    return [FinalDocument(id=i) for i in out]


def parse_final(
    content: str, thinking: str | None, known_ids: Iterable[str] = ()
) -> tuple[list[FinalDocument] | None, bool]:
    """The final documents of an answer, and whether they came from the thinking text.

    `<Document id=...>` blocks are read from the answer, else from the thinking; a plain
    list of ids is accepted only for ids the episode has actually seen, so prose is never
    mistaken for an answer. None when neither holds an answer.
    """
    known = list(known_ids)
    docs = _documents(content)
    if docs:
        return docs, False
    docs = _id_list(content, known)
    if docs:
        return docs, False
    if thinking:
        docs = _documents(thinking)
        if docs:
            return docs, True
    return None, False
