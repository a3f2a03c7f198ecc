"""A long report through the real harness: a PDF far over the budget ingests with its
pages, and `read_document` on it keeps the budget rules (the read is capped to the
chunks most relevant to the query that surfaced the document, in document order)."""

from __future__ import annotations

from pathlib import Path

from sift.graphs import HarnessConfig, search
from sift.graphs.policies import ScriptedPolicy
from sift.integrations.ingest import InputProblem, read_inputs
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Decision, FinalDocument, PolicyView

from .conftest import numbered_pages, write_pdf


def test_reading_a_long_pdf_keeps_the_budget_and_the_pages(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "annual.pdf", numbered_pages(60, filler=36))
    problems: list[InputProblem] = []
    with SqliteCorpus(tmp_path / "store", embedder="hash") as corpus:
        report = corpus.upsert(read_inputs([path], problems))
        assert problems == [] and report.added == 1
        doc_id = f"{tmp_path.name}/annual.pdf"  # a file given from elsewhere: by its folder
        chunks = corpus.read(doc_id)
        assert sum(len(c.text) for c in chunks) // 4 > 32_768  # far over the budget
        target = next(c for c in chunks if "(p41x20)" in c.text)
        assert target.metadata["page"] == 41

        def conclude(view: PolicyView) -> Decision:
            return Decision(final=[FinalDocument(id=target.chunk_id, justification="p41")])

        policy = ScriptedPolicy(
            [
                [{"name": "search_corpus", "arguments": {"query": "p41x20 revenue"}}],
                [{"name": "read_document", "arguments": {"doc_id": doc_id}}],
                conclude,
            ]
        )
        # The policy's list alone (the plain search's first is kept in other tests).
        config = HarnessConfig(max_turns=4, keep_plain_search=False)
        result = search("What happened on page 41?", corpus, policy=policy, config=config)
    read = result.trace[1].calls[0]
    assert read.tool == "read_document" and read.error is None
    assert 0 < read.tokens <= config.call_token_cap  # the read was capped
    kept = [int(cid.rsplit("_", 1)[1]) for cid in read.added]
    assert kept == sorted(kept) and len(kept) < len(chunks)  # in document order, not all
    assert result.usage.peak_context_tokens <= config.budget_tokens
    (evidence,) = result.evidence
    assert evidence.chunk_id == target.chunk_id
    assert evidence.metadata["page"] == 41 and evidence.metadata["pages"][0] == 41
    assert evidence.metadata["source"] == str(path.resolve())
