"""`seed_search`: the episode's first step is the harness's own search of the question,
shown to the policy as its first call (issue 27: a 1.5B model's own first queries were
generic concepts that missed both named pages a plain search finds)."""

from __future__ import annotations

import pytest

from sift.graphs import HarnessConfig, ScriptedPolicy, asearch
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document

from .conftest import call

JA_DOCS = [
    Document(id="kinkaku", title="金閣寺", text="金閣寺は足利義満が京都に建てた寺である。"),
    Document(id="ginkaku", title="銀閣寺", text="銀閣寺は足利義政が京都の東山に建てた。"),
    Document(id="fuji", title="富士山", text="富士山は日本で最も高い山である。"),
    Document(id="biwa", title="琵琶湖", text="琵琶湖は滋賀県にある日本最大の湖である。"),
]


@pytest.fixture(scope="module")
def ja_corpus(tmp_path_factory):
    store = SqliteCorpus(tmp_path_factory.mktemp("seed") / "s", embedder="hash")
    assert not store.upsert(JA_DOCS).failed
    yield store
    store.close()


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
