"""The demo corpus shipped with sift: real 2WikiMultihopQA passages (Apache-2.0, see
ATTRIBUTION.md), so that `sift demo` shows a two-hop search offline in one command."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from importlib import resources

from pydantic import BaseModel

from sift.types import Document

__all__ = ["DEFAULT_QUESTION", "DemoQuestion", "demo_documents", "demo_questions"]

# Two hops: the film's page names its director (Henry Edwards), whose page names his
# birthplace. Single-shot retrieval finds only one of the two pages in its top 10.
DEFAULT_QUESTION = "What is the place of birth of the director of film Boden's Boy?"


class DemoQuestion(BaseModel):
    id: str
    question: str
    answers: list[str]
    supporting_doc_ids: list[str]


def _lines(name: str) -> Iterator[dict[str, object]]:
    data = resources.files(__name__).joinpath(name).read_bytes()
    for line in gzip.decompress(data).decode("utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def demo_documents() -> Iterator[Document]:
    for record in _lines("corpus.jsonl.gz"):
        yield Document.model_validate(record)


def demo_questions() -> list[DemoQuestion]:
    return [DemoQuestion.model_validate(r) for r in _lines("questions.jsonl.gz")]
