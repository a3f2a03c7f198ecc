"""`seed_search`: the episode's first step is the harness's own search of the question,
shown to the policy as its first call (issue 27: a 1.5B model's own first queries were
generic concepts that missed both named pages a plain search finds)."""

from __future__ import annotations

import pytest

from sift.graphs import HarnessConfig, ScriptedPolicy, asearch, single_shot
from sift.integrations.stores.sqlite import SqliteCorpus

from .conftest import DOCS, call


@pytest.mark.parametrize(
    ("store", "question"),
    [("corpus", "Which volcano buried Pompeii?"), ("ja_corpus", "金閣寺を建てたのは誰か。")],
    ids=["english", "japanese"],
)
async def test_the_policy_starts_from_the_harness_search_of_the_question(request, store, question):
    corpus = request.getfixturevalue(store)
    policy = ScriptedPolicy([None, [call("search_corpus", query="anything else")]])
    config = HarnessConfig(seed_search=True, max_turns=3, search_max_chunks=3)
    result = await asearch(question, corpus, policy=policy, config=config)

    # Turn 1 was the harness's: the question as written, searched; the policy was asked
    # from turn 2 on, and only max_turns - 1 times.
    first = result.trace[0].calls
    assert [(c.tool, c.arguments) for c in first] == [("search_corpus", {"query": question})]
    assert [v.turn for v in policy.views] == [2, 3]
    # What it found is what a plain search of the question finds, in the policy's view:
    # as the first call of the transcript and as its observation.
    plain = [h.chunk.chunk_id for h in corpus.search(question, k=3)]
    assert first[0].added == plain
    view = policy.views[0]
    assert list(view.seen) == plain
    assistant, tool = view.messages[1], view.messages[2]
    assert assistant.role == "assistant" and assistant.tool_calls[0].name == "search_corpus"
    assert assistant.tool_calls[0].arguments == {"query": question}
    assert tool.role == "tool" and all(cid in tool.content for cid in plain)


async def test_off_by_default_the_policy_makes_the_first_call(corpus):
    policy = ScriptedPolicy([[call("search_corpus", query="Vesuvius")]])
    result = await asearch("Which volcano buried Pompeii?", corpus, policy=policy)
    assert [v.turn for v in policy.views][:1] == [1]
    assert result.trace[0].calls[0].arguments == {"query": "Vesuvius"}
    assert HarnessConfig().seed_search is False


class _RecordingCorpus(SqliteCorpus):
    """The real store, keeping the weight each search was asked with."""

    alphas: list[object]

    def search(self, query, **kwargs):  # type: ignore[no-untyped-def, override]
        self.alphas.append(kwargs.get("alpha", "store default"))
        return super().search(query, **kwargs)


async def test_the_seed_searches_as_single_shot_does_and_the_policy_with_search_alpha(tmp_path):
    # search_alpha (0.5) is tuned for short sub-queries; the seed is the whole question,
    # searched with the store's own weight as single_shot searches it, so the model
    # starts from exactly what a plain search finds. Its own searches keep search_alpha.
    corpus = _RecordingCorpus(tmp_path / "s", embedder="hash", chunk_tokens=24)
    corpus.alphas = []
    assert not corpus.upsert(DOCS).failed
    question = "Which volcano buried Pompeii?"
    policy = ScriptedPolicy([None, [call("search_corpus", query="Naples")]])
    config = HarnessConfig(seed_search=True, max_turns=2, search_max_chunks=4)
    result = await asearch(question, corpus, policy=policy, config=config)
    # The seed, the policy's search, and the harness's plain search of the question that
    # fills the evidence (HarnessConfig.plain_fill), at the store's weight again.
    assert corpus.alphas == ["store default", config.search_alpha, "store default"]
    plain = [e.chunk_id for e in single_shot(question, corpus, top_k=4).evidence]
    assert result.trace[0].calls[0].added == plain
    corpus.close()
