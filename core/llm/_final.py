"""Reading a model's final answer: Context-1's `<Document id=...>` blocks with their
`<Justification>`, else a plain list of ids the episode has seen."""

from __future__ import annotations

import re
from collections.abc import Iterable

from sift.types import FinalDocument

__all__ = ["count_complete_documents", "parse_final"]

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


_CLOSED_DOCUMENT = re.compile(r"<Document\s+id\s*=.*?</Document>", re.DOTALL | re.IGNORECASE)


def count_complete_documents(text: str) -> int:
    """How many `<Document id=...>...</Document>` blocks a reply holds in full."""
    return len(_CLOSED_DOCUMENT.findall(text))


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


# A line of a plain list: bullets, numbering, quotes, brackets and commas around ids.
_LIST_PUNCT = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])?\s*|[\[\]\"'`,;]")
_FENCE_LINE = re.compile(r"^\s*```\w*\s*$")


def _id_list(text: str, known: Iterable[str]) -> list[FinalDocument]:
    """The ids of a reply that is a plain list of ids the episode has seen.

    Every line that names a seen id must hold nothing but ids (one per line, or several
    separated by commas, as a JSON array, numbered or bulleted); a line of prose that
    names one (a plan, a narrative) means the reply is not a list. Lines without any id
    ("Final list:") are allowed around the list, and a label before it on its line.
    """
    known_set = set(known)
    if not known_set:
        return []
    out: list[str] = []
    for line in text.splitlines():
        if _FENCE_LINE.match(line):
            continue
        label, colon, rest = line.partition(":")
        if colon and not any(t in known_set for t in _ID_TOKEN.findall(label)):
            # A label before the list on its line ("Relevant: a_0, b_3").
            line = rest
        tokens = [t.strip(".:*#") for t in _ID_TOKEN.findall(_LIST_PUNCT.sub(" ", line))]
        tokens = [t for t in tokens if t]
        hits = [t for t in tokens if t in known_set]
        if not hits:
            continue
        if len(hits) != len(tokens) and not _only_ids(tokens):
            return []
        out += [t for t in hits if t not in out]
    return [FinalDocument(id=i) for i in out]


def _only_ids(tokens: list[str]) -> bool:
    # An id the episode never saw is still an id (it is reported, not a sentence) when
    # it is written like one: a single word with the `<doc>_<index>` shape.
    return all(re.fullmatch(r"[\w.:/-]+_\d+", t) for t in tokens)


def parse_final(
    content: str, thinking: str | None, known_ids: Iterable[str] = ()
) -> tuple[list[FinalDocument] | None, bool]:
    """The final documents of an answer, and whether they came from the thinking text.

    `<Document id=...>` blocks are read from the answer, else from the thinking; a reply
    that is a plain list of ids counts for the ids the episode has actually seen, so prose
    (a plan or a narrative naming ids) is never mistaken for an answer. None when neither
    holds an answer.
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
